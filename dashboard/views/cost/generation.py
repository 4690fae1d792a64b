"""The cost page's fourth part: what one more token costs a decoder at context n, with the KV cache
and without it (measure.next_timing: core.cost.generation.next_token_curves on the engine itself),
and the cache's size at a chosen n (core.cost.generation.cache_megabytes). An encoder gets one line
saying what the part is for and how to load a decoder.

The timing is measured before the page draws (page._measure_first); this module only draws it.
"""

from __future__ import annotations

import streamlit as st

from core.cost.generation import cache_megabytes, cache_numbers, megabytes
from core.cost.price import weights_megabytes
from dashboard.charts.cost import next_token_chart
from dashboard.charts.heatmap import PAGE as PAGE_SIZING
from dashboard.charts.heatmap import PRESENTER
from dashboard.content import cost as text
from dashboard.hosted import Limits
from dashboard.views.cost.measure import NextTiming, next_contexts, next_timing
from dashboard.views.cost.widgets import n_ui
from dashboard.widgets import chart, chart_filename, md

GO = "cost_next_go"  # set by the button: measure every context (kept until the sweep is complete)


def measure_next(model_key: str, engine, limits: Limits) -> NextTiming:
    """The decoder's timing so far: the first context always, every context when the estimate is
    short or the button asked for it."""
    contexts = next_contexts(engine.max_tokens, limits.max_price_layer_n)
    if not contexts:
        return NextTiming((), (), (0, 0.0), 0.0, 0)
    timing = next_timing(model_key, engine, contexts, everything=bool(st.session_state.get(GO)))
    if timing.complete:
        st.session_state.pop(GO, None)
    return timing


def encoder_line(limits: Limits) -> str:
    """What part 4 is for and how to load a decoder, in one line (the public demo loads none)."""
    return text.NEXT_ENCODER_HOSTED if limits.hosted else text.NEXT_ENCODER_ONLY


def next_token_part(spec, engine, timing: NextTiming | None, limits: Limits, sizing) -> None:
    """Part 4: the chart and the numbers for a decoder (timing), one line for an encoder (None)."""
    if sizing is PAGE_SIZING:
        st.header(text.NEXT_HEADER)
    if timing is None:
        st.info(encoder_line(limits))
        return
    if not timing.contexts:
        st.info(text.NEXT_NO_CONTEXT)
        return
    if sizing is PAGE_SIZING:
        st.markdown(text.NEXT_INTRO)
    n = int(st.session_state["cost_n"])  # links.check_n kept it within the model's context
    if not timing.complete:
        _measure_button(engine, timing)
    elif len(timing.contexts) < 3:
        cached, recomputed = timing.curves()
        st.markdown(
            text.NEXT_ONE_CONTEXT.format(
                max_tokens=engine.max_tokens,
                n=cached.lengths[-1],
                cached=cached.seconds[-1] * 1e3,
                recomputed=recomputed.seconds[-1] * 1e3,
            )
        )
    else:
        _timing_chart(spec, engine, timing, n, sizing)
    _cache_row(engine, n)
    last = timing.contexts[-1]
    limit = (
        text.NEXT_LIMIT_MODEL.format(last=last, max_tokens=engine.max_tokens)
        if last == engine.max_tokens - 1
        else text.NEXT_LIMIT_SERVER.format(last=last)
    )
    with st.expander("How this was measured") if sizing is PRESENTER else st.container():
        st.caption(text.NEXT_CAPTION.format(limit=limit))


def _measure_button(engine, timing: NextTiming) -> None:
    """The rest of the sweep is long for this machine: say what it costs, and measure it on request."""
    (first, last), (done, wall) = (timing.contexts[0], timing.contexts[-1]), timing.longest
    seconds = _duration(timing.estimate)
    st.markdown(
        text.NEXT_COST.format(
            measured=f"{first}" if done == first else f"{first} … {done}",
            done=done,
            wall=wall,
            last=last,
            seconds=seconds,
            passes=7 * timing.to_time,  # a context: its cache, 3 cached steps, 3 full passes
            longest=last + 1,
            mb=weights_megabytes(engine.n_layers, engine.n_heads, last + 1),
        )
    )
    st.button(
        text.NEXT_BUTTON.format(first=first, last=last, seconds=seconds),
        key="cost_next_measure",
        on_click=st.session_state.__setitem__,
        args=(GO, True),
        icon=":material/timer:",
    )


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _timing_chart(spec, engine, timing: NextTiming, n: int, sizing) -> None:
    cached, recomputed = timing.curves()
    lengths = sorted({*timing.contexts, n})
    fig = next_token_chart(
        (cached, recomputed),
        text.NEXT_LABELS,
        (lengths, [cache_megabytes(engine, m) for m in lengths]),
        (n, cache_megabytes(engine, n)),
        title=text.NEXT_TITLE.format(
            model=md(spec.label),
            n_layers=engine.n_layers,
            n_heads=engine.n_heads,
            d_model=engine.width,
        ),
        memory_title=text.NEXT_CACHE_TITLE,
        sizing=sizing,
    )
    chart(fig, "cost_next", chart_filename("cost", "next-token", spec.key))
    at_cache, at_full = cached.seconds[-1], recomputed.seconds[-1]
    saved = (
        text.NEXT_FASTER.format(ratio=at_full / at_cache)
        if at_full >= at_cache
        else text.NEXT_SLOWER.format(ratio=at_cache / at_full)
    )
    st.markdown(
        text.NEXT_SAVED.format(
            n=cached.lengths[-1],
            cached=at_cache * 1e3,
            recomputed=at_full * 1e3,
            saved=saved,
            e_cached=cached.exponent,
            e_recomputed=recomputed.exponent,
        )
    )


def _cache_row(engine, n: int) -> None:
    """The cache's size at the chosen n: the picker, the number, the formula."""
    d_head, kv_heads = engine.head_size, engine.kv_heads
    pick, number, line = st.columns([1, 1, 3], vertical_alignment="center")
    with pick:
        n = n_ui(engine.max_tokens)
    with number:
        st.metric(text.NEXT_METRIC.format(n=n), f"{megabytes(cache_megabytes(engine, n))} MB")
    sizes = {"n_layers": engine.n_layers, "n_heads": engine.n_heads, "d_head": d_head, "n": n}
    numbers, mb = cache_numbers(engine.n_layers, kv_heads, d_head, n), megabytes(cache_megabytes(engine, n))
    if kv_heads == engine.n_heads:
        said = text.NEXT_CACHE_LINE.format(**sizes, numbers=numbers, mb=mb)
    else:  # grouped-query attention: beside it, what full multi-head attention would hold
        full = megabytes(cache_megabytes(engine, n, kv_heads=engine.n_heads))
        group = engine.n_heads // kv_heads
        said = text.NEXT_CACHE_LINE_GQA.format(
            **sizes, kv_heads=kv_heads, group=group, numbers=numbers, mb=mb, mb_full=full
        )
    with line:
        st.markdown(said)
