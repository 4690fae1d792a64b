"""Compare's "which heads carry the difference": activation patching (core/measures/patching.py) on the
page's pair, sentence 1 the run patched into and sentence 2 the run each component is copied from.

What is read as the model's answer:
- a BERT: the pronoun test, the focus word's cosine to a target word minus to a rival, after a layer
  the reader picks (the preset's referents by default: "trophy" and "suitcase");
- a decoder: the question of the continuation panel above (its two next words, after each sentence's
  question text, "… The thing that was too large was the"); with no continuations typed, how far the
  next-token distribution moves.

The heads grid runs by itself on models with at most AUTO_RUNS heads and on request above (SmolLM2's
270); the positions grid (causal tracing) on request. Grids are kept in the session under what they
depend on, so a rerun never patches again. Patching runs on the NumPy engine whatever the page's
engine is: its forward pass reads the patch; the torch reference equals it (tests/core/test_patching.py).
Sentence 1's run on it is held like the page's own results ("compare3"; engines.session_result).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.measures.patch_summary import attention_between, clearest_link
from core.measures.patching import (
    Patching,
    check_pair,
    encode_pair,
    next_token_shift,
    option_metric,
    patch_heads,
    patch_residual,
    pronoun_metric,
)
from core.measures.referent import closeness
from core.models.errors import ModelError
from dashboard.charts.decoder import shown_token
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.charts.patching import restored_grid
from dashboard.content import patching as text
from dashboard.content.compare import PRESETS
from dashboard.continuation import as_continuation, probe_for
from dashboard.engines import load_engine, session_result
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.long_work import shelf
from dashboard.presenter import presenting
from dashboard.shared_results import trim_to_budget
from dashboard.state import signature
from dashboard.views.compare.patch_said import (
    Link,
    heads_statement,
    row_label,
    trace_statement,
    values_statement,
)
from dashboard.views.compare.side import Side
from dashboard.views.compare.widgets import bound_key, open_head
from dashboard.widgets import chart, chart_filename, csv_download, error_md, md
from dashboard.work_queue import in_turn, place_line

AUTO_RUNS = 100  # heads patched without asking (the bundled BERT's 72, the letter model's)
TOP = 5  # heads in the table under the grid
# the grids one session keeps ("compare_patched"), by their arrays' bytes, the oldest dropped first: a
# SmolLM2 grid is a few kilobytes, so this is about a hundred of them
KEPT_BYTES = 2**20
SHARED_GRIDS = 16  # grids kept for every session: a class patching the teacher's preset computes it once


@dataclass(frozen=True)
class Pair:
    """What the model reads in both runs, tokenized, and the clean run's result."""

    texts: tuple[str, str]
    ids: tuple[list[int], list[int]]
    tokens: tuple[list[str], list[str]]
    clean: Side  # sentence 1's run on the NumPy engine: its attention, its words


@dataclass(frozen=True)
class Answer:
    """The metric, in words, with what it depends on (the grid's cache key) and the target word whose
    attention from the focus is shown beside the heads (and its rival), when there are such words."""

    metric: object
    said: str
    key: tuple
    words: tuple[str, str] | None
    means: tuple[str, str] | None  # what a positive and a negative value mean, in words


def patching_ui(decoder: bool, focus: str | None, model_key: str, limits: Limits) -> None:
    """The panel for the page's two sentences (a decoder reads their question texts instead). On a
    projector the intro is left out and the settings fold into one closed panel, so the grid and
    what it says fit on the screen."""
    if presenting():
        settings = st.expander(text.SETTINGS, icon=":material/tune:")
    else:
        st.subheader(text.TITLE)
        st.caption(text.INTRO)
        settings = st.container()
    try:
        engine = load_engine(model_key, "numpy")
    except ModelError as err:
        st.info(text.NO_ENGINE.format(reason=error_md(err)))
        return
    pair = _pair(engine, model_key, decoder, limits, settings)
    answer = None if pair is None else _answer(engine, pair, focus, settings)
    if answer is None:
        return
    settings.caption(answer.said)
    sig = signature(model_key, pair.texts, answer.key)
    runs = engine.n_layers * engine.n_heads
    heads = _grid("heads", engine, pair, answer, (sig, limits), runs, ask=runs > AUTO_RUNS)
    if heads is not None:
        _heads_ui(heads, pair, focus, answer)
    runs = engine.n_layers * len(pair.ids[0])
    positions = _grid("positions", engine, pair, answer, (sig, limits), runs, ask=True)
    if positions is not None:
        _positions_ui(positions, pair)


# ---- the pair and the answer -------------------------------------------------------------------------


def _pair(engine, model_key: str, decoder: bool, limits: Limits, settings) -> Pair | None:
    """The two inputs (a decoder reads each sentence's question text), tokenized; None, said in one
    line, when they are not the same length, not different, or longer than this server reads."""
    texts = tuple(st.session_state.get(key, "") for key in ("compare_text", "compare_text2"))
    if decoder:
        texts = tuple(probe_for(t).prefix for t in texts)
    try:
        clean, corrupt = encode_pair(engine, *texts)
    except ValueError as err:
        st.info(text.UNPATCHABLE.format(reason=md(str(err))))
        return None
    ids = (list(clean.ids), list(corrupt.ids))
    if len(ids[0]) > limits.max_tokens:
        st.info(text.TOO_LONG.format(n=len(ids[0]), limit=limits.max_tokens))
        return None
    if decoder:
        tokens = tuple([engine.decode(i) for i in e] for e in ids)
    else:
        tokens = (list(clean.tokens), list(corrupt.tokens))
    differ = check_pair(*tokens)
    where = ", ".join(
        f"{i + 1} (“{md(tokens[0][i].strip())}” / “{md(tokens[1][i].strip())}”)" for i in differ[:3]
    )
    if len(differ) > 3:
        where += text.MORE.format(n=len(differ) - 3)
    settings.caption(text.DIFFER.format(n=len(ids[0]), where=where))
    clean_run = session_result("compare3", model_key, "numpy", texts[0], limits, counted=False)
    return Pair(texts, ids, tokens, Side.of(clean_run))


def _answer(engine, pair: Pair, focus: str | None, settings) -> Answer | None:
    if pair.clean.result.decoder:
        return _decoder_answer(engine, pair)
    return _pronoun_answer(pair, focus, settings)


def _decoder_answer(engine, pair: Pair) -> Answer | None:
    """The continuations typed in the panel above (the sentence's own question's when none is yet)."""
    ss = st.session_state
    typed = (ss.get("compare_choice_a"), ss.get("compare_choice_b"))
    if typed[0] is None or typed[1] is None:
        typed = probe_for(ss.get("compare_text", "")).options
    prefix = pair.texts[0]
    if not (typed[0].strip() and typed[1].strip()):
        metric = next_token_shift(engine, pair.clean.result.hidden_states)
        return Answer(metric, text.METRIC_SHIFT, ("shift",), None, None)
    options = [as_continuation(prefix, option) for option in typed]
    try:
        metric, _ = option_metric(engine, options)
    except ValueError as err:  # TextError: an option with no tokens, or two that start alike
        st.info(text.UNPATCHABLE.format(reason=md(str(err))))
        return None
    tail = " ".join(prefix.split()[-4:])
    said = text.METRIC_OPTIONS.format(a=md(options[0].strip()), b=md(options[1].strip()), tail=md(tail))
    a, b = (md(o.strip()) for o in options)
    means = tuple(m.format(a=a, b=b) for m in text.MEANS_OPTIONS)
    return Answer(metric, said, ("options", *options), tuple(o.strip() for o in typed), means)


def _pronoun_answer(pair: Pair, focus: str | None, settings) -> Answer | None:
    """BERT: the focus word against a target and a rival (words of sentence 1 that occur once)."""
    side = pair.clean
    if focus is None or side.token_of(focus) is None:
        st.info(text.NO_FOCUS)
        return None
    close = closeness(side.result, side.token_of(focus))
    folded = [w.casefold() for w in close.words]
    words = list(dict.fromkeys(close.words[i] for i in close.candidates if folded.count(folded[i]) == 1))
    if len(words) < 2:
        st.info(text.FEW_WORDS)
        return None
    with settings:
        target, rival, layer = _pronoun_ui(words, side.result.n_layers, focus)
    if target.casefold() == rival.casefold():
        st.info(text.SAME_WORDS)
        return None
    metric = pronoun_metric(side.result, close.focus, target, rival, layer)
    said = text.METRIC_PRONOUN.format(layer=layer, focus=md(focus), target=md(target), rival=md(rival))
    words = {"focus": md(focus), "target": md(target), "rival": md(rival)}
    means = tuple(m.format(**words) for m in text.MEANS_PRONOUN)
    return Answer(metric, said, ("pronoun", focus, target, rival, layer), (target, rival), means)


def _pronoun_ui(words: list[str], n_layers: int, focus: str) -> tuple[str, str, int]:
    """Target, rival and layer pickers; the preset's referents first when it names them."""
    preset = PRESETS.get(st.session_state.get("compare_preset"))
    defaults = list(preset.referents) if preset and preset.referents and focus == preset.focus else []
    defaults = [w for d in defaults for w in words if w.casefold() == d.casefold()] if defaults else []
    target0, rival0 = defaults if len(defaults) == 2 else words[:2]
    sig = signature(words, focus)
    cols = st.columns(3)
    target = cols[0].selectbox(text.TARGET_LABEL, words, key=bound_key("patch_target", sig, target0),
                               help=text.PRONOUN_HELP)  # fmt: skip
    rival = cols[1].selectbox(text.RIVAL_LABEL, words, key=bound_key("patch_rival", sig, rival0))
    layers = list(range(1, n_layers + 1))
    layer = cols[2].selectbox(text.LAYER_LABEL, layers, key=bound_key("patch_layer", n_layers, n_layers))
    return target, rival, int(layer)


# ---- running -----------------------------------------------------------------------------------------


def _grid(
    kind: str, engine, pair: Pair, answer: Answer, where: tuple, runs: int, ask: bool
) -> Patching | None:
    """The kind's grid from the session, else computed now (at once, or when the button is pressed),
    with a progress bar; None with the reason said."""
    (sig, limits), ss = where, st.session_state
    kept, shared = ss.setdefault("compare_patched", {}), shelf("patching", SHARED_GRIDS)
    found = kept.get((kind, sig)) or shared.get((kind, sig))  # this session's, or another's
    if found is not None:
        kept[(kind, sig)] = found
        return found
    if ask:
        if kind == "heads":
            st.caption(text.HEADS_ASK.format(runs=runs))
        else:
            st.caption(text.POSITIONS_ASK)
        label = (text.HEADS_BUTTON if kind == "heads" else text.POSITIONS_BUTTON).format(runs=runs)
        if not st.button(label, key=f"compare_patch_{kind}", icon=":material/play_arrow:"):
            return None
    try:
        count_new_text(f"compare_patch_{kind}", (sig,), limits.max_texts_per_minute)
        found = _run(kind, engine, pair, answer, shared, (kind, sig))
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
        return None
    except (ModelError, ValueError) as err:  # nothing to restore: both give the same answer
        st.info(text.UNPATCHABLE.format(reason=md(str(err))))
        return None
    kept[(kind, sig)] = found
    trim_to_budget(kept, KEPT_BYTES)
    return found


def _run(kind: str, engine, pair: Pair, answer: Answer, shared, key: tuple) -> Patching:
    bar = st.progress(0.0, text=text.PROGRESS.format(done=0, total="…"))

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 50) == 0:  # about fifty updates, however many runs
            bar.progress(done / total, text=text.PROGRESS.format(done=done, total=total))

    clean, corrupt = pair.ids
    with in_turn(place_line()):  # a worker of the classroom's queue for the whole sweep
        found = shared.get(key)  # another session's, finished while this one waited its turn
        if found is None and kind == "heads":
            found = patch_heads(engine, clean, corrupt, answer.metric, progress=progress)
        elif found is None:
            found = patch_residual(engine, clean, corrupt, answer.metric, progress=progress)
        shared.put(key, found)
    bar.empty()
    return found


# ---- drawing -----------------------------------------------------------------------------------------


def _sizing():
    return PRESENTER if presenting() else PAGE


def _link(pair: Pair, focus: str | None, answer: Answer) -> tuple[Link | None, dict]:
    """The head with the clearest focus → target attention, and every head's weight from the focus
    word to each of the answer's words ({word: (L, H)}), when the words are in sentence 1."""
    side = pair.clean
    rows = side.span_of(focus)
    if rows is None or answer.words is None:
        return None, {}
    weights = {}
    for word in answer.words:
        if (cols := side.span_of(word)) is not None:
            weights[word] = attention_between(side.result.attentions, rows, cols)
    target = answer.words[0]
    if target not in weights:
        return None, weights
    layer, head = clearest_link(weights[target])
    return Link(word_of(focus), target, layer, head, float(weights[target][layer, head])), weights


def word_of(ref: str) -> str:
    """A word reference's word, as a reader writes it ("the#2" -> "the")."""
    return re.sub(r"[#~]\d+$", "", ref)


def _heads_ui(found: Patching, pair: Pair, focus: str | None, answer: Answer) -> None:
    """The grid with the table of the heads that restore most under it (the wider column: the table
    keeps every column in view at 1280 px), the statements and the buttons that open a head beside."""
    n_layers, n_heads = found.restored.shape
    link, weights = _link(pair, focus, answer)
    top = np.argsort(-found.restored, axis=None, kind="stable")[:TOP]
    top = [tuple(int(i) for i in np.unravel_index(k, found.restored.shape)) for k in top]
    left, right = st.columns([3, 2])
    with right:
        st.markdown(values_statement(found.metric_clean, found.metric_corrupt, answer.means))
        st.markdown(heads_statement(found.restored, link))
    rows, cols = [str(i + 1) for i in range(n_layers)], [str(i + 1) for i in range(n_heads)]
    axes = (text.LAYER_AXIS.format(n=n_layers), text.HEAD_AXIS.format(n=n_heads))
    with left:
        fig = restored_grid(
            found.restored, rows, cols, title=text.HEADS_CHART, axes=axes, bar_title=text.BAR,
            outlined=top[:3], sizing=_sizing(), max_height=560 if presenting() else 720,
        )  # fmt: skip
        name = chart_filename("compare", "patching", "heads")
        chart(fig, "compare_patch_heads_chart", name, alt=heads_statement(found.restored, link))
        csv_download(
            found.restored, rows, cols, name, "compare_patch_heads_csv", corner="layer \\ head (from 1)"
        )
        st.caption(text.HEADS_CAPTION)
        _top_ui(found, top, pair, focus, weights)
    with right:
        for layer, head in top[:3]:
            st.button(
                text.OPEN_BUTTON.format(layer=layer + 1, head=head + 1), on_click=_open, args=(layer, head),
                key=f"compare_patch_open_{layer}_{head}", type="tertiary", icon=":material/open_in_new:",
            )  # fmt: skip


def _top_ui(found: Patching, top: list, pair: Pair, focus: str | None, weights: dict) -> None:
    """The heads that restore most, with what the focus word attends to in each: short headers, each
    with its meaning in its help, so every column shows in the column's width."""
    st.markdown(f"**{text.TOP_TITLE}**")
    rows, word = pair.clean.span_of(focus), md(word_of(focus or ""))
    table, config = (
        [],
        {text.TOP_COLUMNS[2]: st.column_config.NumberColumn(format="%d%%", help=text.RESTORED_HELP)},
    )
    for layer, head in top:
        restored = round(100 * float(found.restored[layer, head]))
        row = dict(zip(text.TOP_COLUMNS, (layer + 1, head + 1, restored), strict=True))
        for answer_word, grid in weights.items():
            column = text.LINK_COLUMN.format(word=answer_word)
            row[column] = round(float(grid[layer, head]), 2)
            config[column] = st.column_config.NumberColumn(
                format="%.2f", help=text.LINK_HELP.format(focus=word, word=md(answer_word))
            )
        if rows is not None:
            reading = pair.clean.result.attentions[layer, head, rows[0] : rows[1]].mean(axis=0)  # (T,)
            read = pair.tokens[0][int(np.argmax(reading))]
            row[text.READS_COLUMN] = read.strip() or shown_token(read)  # a space or line break, named
            config[text.READS_COLUMN] = st.column_config.TextColumn(help=text.READS_HELP.format(focus=word))
        table.append(row)
    st.dataframe(table, hide_index=True, column_config=config)


def _open(layer: int, head: int) -> None:
    """Callback: the head's maps, in the charts' place on a projector."""
    open_head(layer, head)
    if st.session_state.get("compare_show") == "patch":
        st.session_state["compare_show"] = "side"


def _positions_ui(found: Patching, pair: Pair) -> None:
    n_layers = found.restored.shape[0]
    st.markdown(trace_statement(found.restored, pair.tokens[0]))
    rows = [row_label(i) for i in range(n_layers)]
    columns = [t.strip() or shown_token(t) for t in pair.tokens[0]]  # a space or line break, named
    fig = restored_grid(
        found.restored, rows, columns, title=text.POSITIONS_CHART,
        axes=("", text.POSITION_AXIS), bar_title=text.BAR, share=1.0, sizing=_sizing(),
        max_height=560 if presenting() else 900,
    )  # fmt: skip
    name = chart_filename("compare", "patching", "positions")
    chart(fig, "compare_patch_positions_chart", name, alt=trace_statement(found.restored, pair.tokens[0]))
    csv_download(
        found.restored, rows, pair.tokens[0], name, "compare_patch_positions_csv", corner="layer \\ token"
    )
    st.caption(text.POSITIONS_CAPTION)
