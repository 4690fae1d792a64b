"""The explore page's attribution view: which tokens the output needs (leave-one-out), beside what
attention would say (last layer's attention, rollout, norms), and how far their orders agree
(Spearman's ρ). The math is core/measures/attribution.py; this module caches, states and draws.

The measurement is kept per input for every session (long_work.shelf; one model run per scored
token), asked for first when it would take long here, and counted with a bar (dashboard/long_work.py);
in hosted mode a new one counts as one new text against the per-minute bound, as the ablation grid does.
Letters: T tokens, W scored tokens (all but [CLS] and [SEP]).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from core.export import attribution_csv
from core.measures.analysis import piece_text
from core.measures.attribution import MEASURES, Attribution, attribution
from core.measures.sweep import batched
from core.models.errors import ModelError
from core.models.registry import BUNDLED_KEY
from core.models.result import AttentionResult
from dashboard import long_work
from dashboard.charts.attribution import attribution_bars
from dashboard.content import ablation as ablation_text
from dashboard.content import attribution as text
from dashboard.engines import compute_attention, load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.on_screen import added_tokens
from dashboard.presenter import presenting
from dashboard.views.explore.results import shown_source
from dashboard.widgets import chart, chart_filename, md

# One rerun per token makes leave-one-out grow with the square of the length or faster: the bundled
# model takes ~5 s at 128 tokens and over a minute at 512 on this project's 2-core machine
# (bench/behaviour.py). Past this, the page asks for a shorter text (the CLI has no cap).
MAX_TOKENS = 128
KEPT = 4  # attributions kept per server
PRESENTER_HEIGHT = 700  # the bars at 1920x1080 in presenter mode: on the first screen with the ρ line


def attribution_of(model_key: str, engine: str, sentence: str, max_tokens: int, progress=None) -> Attribution:
    """Leave-one-out and attention's columns for the shown input (shared, not to be changed): kept
    for every session (the last KEPT), computed the first time with progress(done, total) over the
    tokens left out."""
    kept = long_work.shelf("attribution", KEPT)
    source = (model_key, engine, sentence, max_tokens)
    if (found := kept.get(source)) is None:
        result = compute_attention(*source)
        found = attribution(load_engine(model_key, engine), result, progress=progress)
        kept.put(source, found)
    return found


def _measure(limits: Limits, result: AttentionResult, n_tokens: int) -> Attribution | None:
    """The attribution for the shown input (a new one counts as one new text in hosted mode), or
    None with the reason shown; when it would take long, only after its button (long_work.may_start)."""
    source = shown_source()
    try:
        if (found := long_work.shelf("attribution", KEPT).get(source)) is not None:
            return found
        engine = load_engine(*source[:2])
        work = long_work.Work.on("attribution", source[0], result, engine, n_tokens, int(result.decoder))
        work = replace(work, batched=batched(engine))  # a NumPy decoder runs them as batches
        what, button = text.ASK_WHAT.format(n=n_tokens), text.BUTTON.format(n=n_tokens)
        if not long_work.may_start(work, source, what, button):
            return None
        count_new_text("attribution", source, limits.max_texts_per_minute)
        with long_work.counting(work, text.PROGRESS) as progress:
            return attribution_of(*source, progress=progress)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
    except (ModelError, ValueError) as err:
        st.info(text.UNAVAILABLE.format(reason=md(str(err))))
    return None


def _fmt(rho: float | None) -> str:
    return text.RHO_UNDEFINED if rho is None else f"{rho:.2f}"


def rho_statement(found: Attribution, scored: np.ndarray, tokens: list[str] | None = None) -> str:
    """The ρ values in one sentence, which measure agrees best, and the top token of each side
    (named as in `tokens`, default the tokenizer's own strings)."""
    tokens = found.tokens if tokens is None else tokens
    rho = {name: found.rho[name] for name in MEASURES if name in found.rho}
    if all(value is None for value in rho.values()):
        return text.RHO_NONE
    values = ", ".join(text.RHO_ONE.format(name=text.NAMES[name], rho=_fmt(r)) for name, r in rho.items())
    parts = [text.RHO.format(n=len(scored), values=values)]
    defined = {name: r for name, r in rho.items() if r is not None}
    if len(defined) > 1:
        count = {2: "two", 3: "three"}.get(len(defined), str(len(defined)))
        parts.append(text.BEST.format(count=count, name=text.NAMES[max(defined, key=defined.get)]))
    loo_top = int(scored[np.argmax(found.loo[scored])])
    attention_top = int(scored[np.argmax(found.columns["attention"][scored])])
    top = text.TOP_SAME if loo_top == attention_top else text.TOP_DIFFERENT
    parts.append(
        top.format(loo=md(tokens[loo_top]), value=found.loo[loo_top], attention=md(tokens[attention_top]))
    )
    return " ".join(parts)


def attribution_view(result: AttentionResult, view, limits: Limits, controls=None) -> None:
    """Leave-one-out bars over the scored tokens, attention's three columns below them, ρ stated.
    `view` and `controls` are the page's (token view, place for pickers): this view has no pickers
    and always shows tokens, the unit leave-one-out removes."""
    scored = np.flatnonzero(~np.asarray(result.special_mask, dtype=bool))  # (W,)
    added = added_tokens(result)
    if scored.size == 0:
        besides = text.TOO_FEW_BESIDES.format(specials=md(added)) if added else ""
        st.info(text.TOO_FEW.format(besides=besides))
        return
    if result.n_tokens > MAX_TOKENS:
        st.info(text.TOO_LONG.format(limit=MAX_TOKENS, n=result.n_tokens))
        return
    found = _measure(limits, result, int(scored.size))
    if found is None:
        return
    # a decoder's byte-level tokens carry their space as "Ġ": shown as the reader would write them
    tokens = [piece_text(t) for t in found.tokens] if result.decoder else found.tokens
    said = rho_statement(found, scored, tokens)
    st.markdown(said)
    names = text.PANELS
    if result.decoder:
        names = {**names, "loo": text.PANEL_LOO_DECODER, **text.PANELS_DECODER}
    panels = [(names["loo"], found.loo[scored])]
    panels += [(names[name], found.columns[name][scored]) for name in MEASURES if name in found.columns]
    big = presenting()
    fig = attribution_bars(
        [tokens[i] for i in scored],
        panels,
        title=text.TITLE,
        x_title=text.X_TITLE_SPECIALS.format(specials=added)
        if (added := added_tokens(result))
        else text.X_TITLE,
        font=20 if big else 14,
        height=PRESENTER_HEIGHT if big else None,
    )
    name = chart_filename("explore", "attribution")
    chart(fig, "explore_attribution_bars", name, alt=said)
    st.download_button(
        "CSV",
        lambda: attribution_csv(result, found),
        file_name=f"{name}.csv",
        mime="text/csv",
        key="explore_attribution_csv",
        icon=":material/download:",
        type="tertiary",
        help="Every token's four values as a table (CSV), for a spreadsheet or a slide.",
        on_click="ignore",
    )
    if "norms" not in found.columns:
        st.info(text.NO_NORMS_DECODER if result.decoder else text.NO_NORMS)
    if result.decoder:
        st.caption(text.CAPTION_DECODER)
    else:
        bundled = shown_source()[0] == BUNDLED_KEY
        embedding = ablation_text.EMBEDDING_BUNDLED if bundled else ablation_text.EMBEDDING_OTHER
        st.caption(text.CAPTION.format(embedding=embedding))
    with st.expander(text.ABOUT_LABEL, expanded=not big):
        st.markdown(text.ABOUT)
