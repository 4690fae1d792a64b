"""The cost page put together: state from the link, the model (NumPy engine), then four parts: the
price measured on this machine; the variants on one real head; a variant in the whole model with the
window and Performer sweeps; one more token with the KV cache and without (generation.py). An
encoder gets parts 1-3 and one line for part 4; a decoder parts 1 and 4 and one line for 2-3 (the
variants are an argument of the BERT engine's forward pass). In presenter mode one part fills the
screen at a time. Each step that can fail says why and stops there."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.cost.price import crossover, flop_crossover, heads_curve, weights_megabytes
from core.cost.variant_model import THRESHOLD, compare_head, head_qkv
from core.cost.variants import VARIANTS, Variant
from core.models.architectures import is_decoder
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.charts.cost import layer_bars, price_chart, sweep_chart, timing_chart, variant_maps
from dashboard.charts.heatmap import PAGE as PAGE_SIZING
from dashboard.charts.heatmap import PRESENTER
from dashboard.content import cost as text
from dashboard.engines import load_engine, session_result
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, current_limits
from dashboard.model_pick import model_pick_ui
from dashboard.presenter import presenting
from dashboard.state import clean_widget_text
from dashboard.views.cost import links
from dashboard.views.cost.generation import encoder_line, measure_next, next_token_part
from dashboard.views.cost.measure import (
    ENGINE,
    NextTiming,
    in_every_head,
    price_curves,
    price_first,
    price_shape,
    sweeps,
    variant_timing,
)
from dashboard.views.cost.widgets import PRESENTER_CONTROLS, head_ui, part_ui, sentence_ui, variant_ui
from dashboard.widgets import chart, chart_filename, error_md, md

LOG = logging.getLogger(__name__)


def render() -> None:
    if not presenting():  # on a projector the chart comes first
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    limits = current_limits()
    try:
        _render(limits)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("cost page failed")
        st.error(
            f"Something went wrong while drawing this view ({type(err).__name__}). Try another sentence."
        )
    finally:
        links.page_links(limits).save()


def _render(limits: Limits) -> None:
    notes = links.init_state(limits)
    if note := clean_widget_text("cost_text", links.max_chars(limits), "sentence"):
        notes.append(note)
    picked = model_pick_ui(links.PAGE, limits, engines=[ENGINE])
    if picked is None:
        links.write_url(limits)
        return
    spec = picked[0]
    engine = load_engine(spec.key, ENGINE)
    decoder = is_decoder(engine)
    notes += links.check_positions(engine.n_layers, engine.n_heads)
    if decoder and (note := links.check_n(engine.max_tokens)):
        notes.append(note)
    for note in notes:
        st.warning(note)
    # Measured before anything is drawn: while this run's charts are being sent, the server's other
    # threads take turns with the timed code (Python's GIL), and the clock would count their time.
    priced, timing = _measure_first(spec.key, engine, decoder, limits)
    present = presenting()
    sizing = PRESENTER if present else PAGE_SIZING
    part = _part(decoder, limits) if present else None
    if part in (None, "price") and priced:  # not priced: the ask above waits for its button
        _price(spec, engine, limits, sizing)
    if decoder:
        if part is None:
            st.info(text.VARIANTS_ENCODER_ONLY)
        if part in (None, "next"):
            next_token_part(spec, engine, timing, limits, sizing)
    elif part in (None, "head", "model"):
        _variants(spec, engine, part, limits, sizing)
    if not decoder and part is None:
        next_token_part(spec, engine, None, limits, sizing)
    links.write_url(limits, model=spec.key)


def _part(decoder: bool, limits: Limits) -> str:
    """Presenter mode's part; a link's part this model lacks says why in one line."""
    parts = text.DECODER_PARTS if decoder else text.ENCODER_PARTS
    asked = st.session_state.get("cost_part")
    part = part_ui(parts)
    if asked != part and asked in text.PARTS:
        st.info(text.VARIANTS_ENCODER_ONLY if decoder else encoder_line(limits))
    return part


def _variants(spec, engine, part: str | None, limits: Limits, sizing) -> None:
    """Parts 2 and 3 (an encoder's): the sentence, head and variant, then one head, the whole model."""
    if sizing is PAGE_SIZING:
        st.header(text.HEAD_HEADER)
    with st.expander(PRESENTER_CONTROLS, icon=":material/tune:") if part else st.container():
        sentence = sentence_ui(links.max_chars(limits))
        layer, head = head_ui(engine.n_layers, engine.n_heads)
        name, params = variant_ui()
    result = _result(spec.key, sentence, limits)
    if result is not None:
        variant = Variant(name, **params)
        if part in (None, "head"):
            _head(engine, result, layer, head, variant, sizing)
        if part in (None, "model"):
            _model(spec.key, sentence, result, variant, limits, sizing)


def _width(engine) -> int:
    """The model's width D (the price is timed at it)."""
    return engine.width if is_decoder(engine) else engine.layer_weights(0).w_q.shape[0]


def _measure_first(model_key: str, engine, decoder: bool, limits: Limits) -> tuple[bool, NextTiming | None]:
    """Fill the caches of this run's timings: the price curves (asked for first when that is long
    here: whether they are measured), then a decoder's one more token or an encoder's chosen variant
    (its widgets' values are in session state before they are drawn)."""
    priced = price_first(model_key, price_shape(_width(engine), engine.n_heads, limits))
    if decoder:
        return priced, measure_next(model_key, engine, limits)
    ss = st.session_state
    name = ss.get("cost_variant") if ss.get("cost_variant") in VARIANTS else "window"
    params = {p: int(ss.get(f"cost_{p}", default)) for p, default in links.DEFAULTS.items()}
    variant_timing(_timed(Variant(name, **params)), engine.layer_weights(0).d_k)
    return priced, None


def _timed(variant: Variant) -> Variant:
    """The variant as its timing is cached: global tokens stand for [CLS] and [SEP] at any length."""
    return replace(variant, global_tokens=(0,) if variant.name in ("longformer", "bigbird") else ())


# ---- 1. the price ---------------------------------------------------------------------------------


def _price(spec, engine, limits: Limits, sizing) -> None:
    if sizing is PAGE_SIZING:
        st.header(text.PRICE_HEADER)
    d_model, n_heads = _width(engine), engine.n_heads
    shape = price_shape(d_model, n_heads, limits)
    curves = {c.name: c for c in price_curves(shape)}
    layer = curves[heads_curve(n_heads)]
    labels = {
        "one head": text.CURVE_LABELS["one head"],
        layer.name: text.CURVE_LABELS["heads"].format(n_heads=n_heads),
        "projections": text.CURVE_LABELS["projections"],
    }
    fig = price_chart(
        list(curves.values()),
        labels,
        title=text.PRICE_TITLE.format(d_model=d_model, n_heads=n_heads),
        memory_title=text.MEMORY_TITLE,
        sizing=sizing,
    )
    chart(fig, "cost_price", chart_filename("cost", "price", spec.key))
    found = crossover(layer, curves["projections"])
    flops = flop_crossover(d_model)
    if found is None:
        measured, why = text.CROSSOVER_NONE.format(n_heads=n_heads, max_n=layer.lengths[-1]), ""
    else:
        measured = f"{found:,.0f}"
        why = text.CROSSOVER_WHY_EARLY if found < flops else text.CROSSOVER_WHY_LATE
    st.markdown(text.CROSSOVER.format(n_heads=n_heads, measured=measured, flops=flops, why=why))
    st.markdown(
        text.WEIGHTS.format(
            n_layers=engine.n_layers,
            n_heads=n_heads,
            n_maps=engine.n_layers * n_heads,
            model=md(spec.label),
            mb512=weights_megabytes(engine.n_layers, n_heads, 512),
            gb32k=weights_megabytes(engine.n_layers, n_heads, 32_768) / 1e3,
        )
    )
    if limits.hosted:
        limit = text.LIMIT_HOSTED.format(max_n=shape.max_n, max_heads=shape.max_heads)
    else:
        gb = layer.peak_bytes[-1] * (4096 / layer.lengths[-1]) ** 2 / 1e9
        limit = text.LIMIT_LOCAL.format(max_heads=shape.max_heads, gb=gb)
    with st.expander("How this was measured") if sizing is PRESENTER else st.container():
        st.caption(text.PRICE_CAPTION.format(d_model=d_model) + " " + limit)
        st.caption(text.SOURCE_NOTE)


# ---- 2. one head ----------------------------------------------------------------------------------


def _result(model_key: str, sentence: str, limits: Limits) -> AttentionResult | None:
    """The sentence's result, or None with the reason shown."""
    if not sentence.strip():
        st.info("Type a sentence above to try the variants on it.")
        return None
    try:
        result = session_result("cost", model_key, ENGINE, sentence, limits)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
        return None
    except (ModelError, ValueError) as err:  # ValueError: text the engine cannot read (TextError)
        st.error(f"Could not run the model on this sentence: {error_md(err)}")
        return None
    if result.special_mask.all():
        st.info(
            "The model finds no words in this sentence: its tokenizer drops control characters and "
            "invisible marks, leaving only \\[CLS\\] and \\[SEP\\]. Type a sentence with words."
        )
        return None
    if result.truncated:
        st.warning(f"Only the sentence's first {result.n_tokens} tokens are used.")
    return result


def _head(engine, result: AttentionResult, layer: int, head: int, variant: Variant, sizing) -> None:
    query, key, value = head_qkv(result.hidden_states[layer], engine.layer_weights(layer), head)
    reference = Variant("full")(query, key, value)
    bound = variant.with_globals(result.special_mask)
    found = compare_head(bound, query, key, value, reference)
    label, complexity, about = text.VARIANT_TEXT[variant.name]
    where = {"layer": layer + 1, "head": head + 1}
    titles = (text.FULL_TITLE.format(**where), text.VARIANT_TITLE.format(variant=label, **where))
    for column, fig, side in zip(
        st.columns(2),
        variant_maps(reference[1], found.weights, result.tokens, titles, sizing),
        ("full", "variant"),
        strict=True,
    ):
        with column:
            chart(
                fig,
                f"cost_map_{side}",
                chart_filename("cost", side, variant.name, f"L{layer + 1}H{head + 1}"),
            )
    st.caption(text.SAME_SCALE)
    errors = text.ERRORS_SHORT if sizing is PRESENTER else text.ERRORS
    st.markdown(errors.format(tv=found.tv, rel=found.relative_error))
    st.markdown(f"**{label}** · {complexity} · {about}")
    if variant.name == "linformer" and variant.k > len(key):
        st.caption(
            f"k = {variant.k} is more than this sentence's {len(key)} tokens: Linformer uses k = {len(key)}."
        )
    if sizing is PRESENTER:
        return
    d_k = query.shape[-1]
    full_curve, variant_curve = variant_timing(_timed(variant), d_k)
    chart(
        timing_chart(full_curve, variant_curve, label, title=text.TIMING_TITLE.format(d_k=d_k)),
        "cost_timing",
        chart_filename("cost", "timing", variant.name),
    )
    st.caption(text.TIMING_CAPTION)
    st.subheader(text.ALL_VARIANTS)
    rows = []
    for name in VARIANTS:
        other = compare_head(replace(bound, name=name), query, key, value, reference)
        rows.append((text.VARIANT_TEXT[name][0], other.tv, other.relative_error, text.VARIANT_TEXT[name][1]))
    st.dataframe(
        pd.DataFrame(rows, columns=text.TABLE_COLUMNS).style.format(
            {"mean row TV": "{:.3f}", "output error": "{:.1%}"}
        ),
        hide_index=True,
    )


# ---- 3. the whole model ---------------------------------------------------------------------------


def _model(
    model_key: str, sentence: str, result: AttentionResult, variant: Variant, limits: Limits, sizing
) -> None:
    if sizing is PAGE_SIZING:
        st.header(text.MODEL_HEADER)
    label = text.VARIANT_TEXT[variant.name][0]
    with st.spinner(text.RUNNING.format(what=label)):
        change, layers = in_every_head(model_key, sentence, limits.max_tokens, variant)
    st.markdown(text.EMBEDDING.format(variant=label, change=change))
    with st.spinner(text.SWEEPING):
        found = sweeps(model_key, sentence, limits.max_tokens)
    left, right = st.columns(2)
    with left:
        fig = layer_bars(
            np.asarray(layers),
            title=text.LAYERS_TITLE.format(variant=label),
            x_title=text.LAYER_AXIS,
            y_title=text.TV_AXIS,
            sizing=sizing,
        )
        chart(fig, "cost_layers", chart_filename("cost", "layers", variant.name))
    with right:
        fig = sweep_chart(
            found.window,
            THRESHOLD,
            title=text.SWEEP_TITLE,
            x_title="window radius w",
            y_title=text.CHANGE_AXIS,
            answer=found.window_answer,
            sizing=sizing,
        )
        chart(fig, "cost_window_sweep", chart_filename("cost", "window-sweep"))
    st.markdown(_window_answer(found.window, found.window_answer, result.n_tokens))
    st.markdown(_performer_answer(found.performer, found.performer_from))
    if sizing is PRESENTER:
        return
    fig = sweep_chart(
        found.performer,
        THRESHOLD,
        title=text.PERFORMER_TITLE,
        x_title="random features m",
        y_title=text.CHANGE_AXIS,
        answer=found.performer_from,
        log_x=True,
    )
    chart(fig, "cost_performer_sweep", chart_filename("cost", "performer-sweep"))


def _window_answer(found, answer: int | None, n_tokens: int) -> str:
    if answer is None:
        return text.SWEEP_NONE.format(n=n_tokens, threshold=THRESHOLD)
    changes = dict(found)
    radii = [r for r, _ in found]
    below = ""
    if radii.index(answer) > 0:
        previous = radii[radii.index(answer) - 1]
        below = text.SWEEP_BELOW.format(radius=previous, change=changes[previous])
    sentence = text.SWEEP_ANSWER.format(
        n=n_tokens, radius=answer, threshold=THRESHOLD, change=changes[answer], below=below
    )
    if radii != list(range(1, n_tokens)):
        sentence += text.SWEEP_GRID.format(tried=len(radii))
    return sentence


def _performer_answer(found, from_m: int | None) -> str:
    (worst_m, worst), (best_m, best) = found[0], found[-1]
    verdict = (
        text.PERFORMER_NEVER.format(threshold=THRESHOLD)
        if from_m is None
        else text.PERFORMER_OK.format(m=from_m, threshold=THRESHOLD)
    )
    return text.PERFORMER_ANSWER.format(
        best_m=best_m, best=best, worst_m=worst_m, worst=worst, verdict=verdict
    )
