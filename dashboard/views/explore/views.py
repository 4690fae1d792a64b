"""The explore page's three views of heads: head (one head as a heatmap), lines (bertviz-style, one
layer) and model (every layer and head as thumbnails); the focus view is focus.py.

Each view draws its own pickers (dashboard/views/explore/widgets.py) and its charts (pure builders
in dashboard/charts/: explore.py, lines.py, thumbnails.py) from an AttentionResult and the
TokenView the toggles ask for.
Letters: L layers, H heads, W shown tokens.
"""

from __future__ import annotations

import streamlit as st

from core.measures.analysis import TokenView, head_stats
from core.measures.claims import may_claim
from core.models.result import AttentionResult
from dashboard.chart_text import strongest_line
from dashboard.charts.explore import head_heatmap
from dashboard.charts.heatmap import number_repeats
from dashboard.charts.lines import lines_figure
from dashboard.charts.thumbnails import model_grid_figure
from dashboard.content import explore as text
from dashboard.on_screen import attention_kind
from dashboard.presenter import presenting
from dashboard.views.explore import flow, neuron, pairs
from dashboard.views.explore.decoder import sink_line
from dashboard.views.explore.results import link_ranking, model_grid_data, specials_text
from dashboard.views.explore.widgets import (
    bound_key,
    layer_head_ui,
    on_grid_select,
    open_head,
    reset_widgets,
    step_ui,
)
from dashboard.widgets import chart, chart_filename, csv_download, md

LINES_FULL_LIMIT = 64  # above this many tokens the lines view draws only each token's strongest lines
LINES_TOP_K = 3
ROOM_HEIGHT = 800  # presenter mode's head chart at 1920x1080: below the controls panel, above the fold


def view_note(view: TokenView) -> str:
    notes = []
    if view.merged:
        notes.append(text.MERGED_NOTE)
    if view.renormalised:
        notes.append(text.HIDDEN_NOTE)
    return " · ".join(notes)


def _titled(title: str, view: TokenView) -> str:
    note = view_note(view)
    return title + (f" · {note}" if note else "")


# ---- head ------------------------------------------------------------------------------------------


def head_view(
    result: AttentionResult, view: TokenView, pair: tuple[int | None, int | None], controls=None
) -> None:
    """`controls`: where the pickers go (presenter mode: a closed panel); default here."""
    with controls or st.container():
        layer, head = layer_head_ui(result)
        measure = flow.measure_ui()
    norms = flow.head_norms(result, view, layer, head, measure)  # None: weights (chosen, or no norms here)
    matrix = view.matrix(result.attentions[layer, head]) if norms is None else norms.matrix  # (W, W)
    highlight = pair if pair[0] is not None and pair[1] is not None else None
    title = _titled(f"Layer {layer + 1}, head {head + 1}", view) if norms is None else norms.title
    slug = None if norms is None else "norms-rescaled" if norms.rescaled else "norms"
    name = chart_filename("explore", "head", f"layer{layer + 1}", f"head{head + 1}", slug)
    if highlight and presenting():  # the answer to "which head?" above the chart, on a projector
        st.markdown(_pair_answer(result, view, highlight, layer, head))
    fig = head_heatmap(
        matrix, view.labels, title=title, highlight=highlight, height=ROOM_HEIGHT if presenting() else None
    )
    flow.restyle(fig, norms)
    if presenting():  # a projector: larger labels and numbers, the chart filling the screen below the panel
        fig.update_layout(font_size=18, title_font_size=24).update_traces(textfont_size=17)
        fig.update_xaxes(tickfont_size=17).update_yaxes(tickfont_size=17)
    clicks = neuron.click_kwargs(fig, matrix, result, view, norms=norms is not None)
    stats = head_stats(result.attentions[layer : layer + 1, head : head + 1], result.special_mask)
    caption = _stats_caption(result, stats, view.renormalised)
    said = flow.head_caption(norms, caption)  # the head's shares in words: the chart's finding too
    chart(pairs.mark(fig, result, view, "heatmap"), "explore_head_chart", name, alt=said, **clicks)
    labels = number_repeats(view.labels)
    csv_download(matrix, labels, labels, name, "explore_head_csv", corner="query (from) \\ key (to)")
    step_ui(result)
    flow.note_ui(norms)
    st.caption(said + (text.HEAD_CAPTION_PAIR if highlight else ""))
    if result.decoder and (sink := sink_line(result, layer, head)):
        st.caption(sink)  # the attention-sinks view's number, for this head
    neuron.neuron_ui(result, view, layer, head, norms)  # where the chosen cell's weight comes from


def _stats_caption(result: AttentionResult, stats: dict, hidden: bool) -> str:
    """The head's shares in words, each where it applies to this model (see HEAD_CAPTION_STATS)."""
    specials = md(specials_text(result))
    share = {name: float(value[0, 0]) for name, value in stats.items()}
    special = ""
    if specials:
        special = text.HEAD_CAPTION_SPECIAL.format(share=share["to_special"], specials=specials)
    overlap = ""
    if result.special_mask[0]:  # a start token: the first word's previous token is that one
        first = md(result.tokens[0])
        overlap = text.HEAD_CAPTION_OVERLAP.format(
            first=first, hidden=text.HEAD_CAPTION_HIDDEN.format(specials=specials) if hidden else ""
        )
    next_share = may_claim("next_token_share", attention_kind(result))  # a causal row has none: the mask
    following = text.HEAD_CAPTION_NEXT.format(share=share["to_next"]) if next_share else ""
    return text.HEAD_CAPTION_STATS.format(
        special=special, previous=share["to_previous"], self=share["to_self"], next=following, overlap=overlap
    )


def _pair_answer(
    result: AttentionResult, view: TokenView, pair: tuple[int, int], layer: int, head: int
) -> str:
    """One line: what this head gives from the focus to the target, and where it ranks among the
    heads linking them (core.measures.analysis.rank_heads_specific)."""
    focus, target = pair
    ranked = link_ranking(result, view, focus, target)
    rank = next(i for i, link in enumerate(ranked, start=1) if (link.layer, link.head) == (layer, head))
    best = ranked[0]
    where = (
        text.PAIR_BEST.format(n=len(ranked))
        if rank == 1
        else text.PAIR_RANK.format(rank=rank, n=len(ranked), layer=best.layer + 1, head=best.head + 1)
    )
    return text.PAIR_ANSWER.format(
        layer=layer + 1,
        head=head + 1,
        focus=md(view.labels[focus]),
        target=md(view.labels[target]),
        weight=ranked[rank - 1].weight,
        where=where,
    )


# ---- lines -----------------------------------------------------------------------------------------


def _lines_controls_ui(
    view: TokenView, head: int, sig: str, long_input: bool
) -> tuple[int, str, float, bool]:
    """(token, or -1 for every token; direction "from" | "to"; lightest weight drawn; all heads)."""
    cols = st.columns([2, 2, 2, 1.4])  # the toggle's label in full at 1280 px
    with cols[0]:
        labels = view.labels
        token = st.selectbox(
            "Show the lines of",
            [-1, *range(view.n_items)],
            format_func=lambda i: "every token" if i < 0 else f"{labels[i]}  (#{i + 1})",
            key=f"explore_w_lines_token_{sig}",
        )
    with cols[1]:
        direction = st.radio(
            "Direction",
            ["from", "to"],
            format_func=lambda d: "its attention (from it)" if d == "from" else "attention to it",
            horizontal=True,
            key="explore_lines_direction",
            disabled=token < 0,
        )
    with cols[2]:
        min_weight = st.slider(
            "Hide lines lighter than",
            0.0,
            0.5,
            0.0 if long_input else 0.02,  # long inputs: the top-k rule already thins the lines
            0.01,
            key=f"explore_lines_min_{'long' if long_input else 'short'}",
            help=text.LINES_MIN_HELP,
        )
    with cols[3]:
        all_heads = st.toggle(
            "All heads",
            key="explore_lines_all_heads",
            help=f"Off: only head {head + 1}, as in the head view.",
        )
    return token, direction, min_weight, all_heads


def lines_view(result: AttentionResult, view: TokenView, sig: str, max_lines: int, controls=None) -> None:
    long_input = view.n_items > LINES_FULL_LIMIT
    with controls or st.container():
        layer, head = layer_head_ui(result, with_head=False)
        token, direction, min_weight, all_heads = _lines_controls_ui(view, head, sig, long_input)
    top_k = LINES_TOP_K if long_input and token < 0 else None
    # Every head's lines are in the figure (hidden heads too, for the legend): cap their number.
    per_token = top_k or view.n_items
    if token < 0 and result.n_heads * view.n_items * per_token > max_lines:
        top_k = max(1, max_lines // (result.n_heads * max(view.n_items, 1)))
    fig = lines_figure(
        view.matrix(result.attentions[layer]),
        view.labels,
        shown_heads=None if all_heads else [head],
        token=None if token < 0 else token,
        direction=direction,
        min_weight=min_weight,
        top_k=top_k,
        title=_titled(f"Layer {layer + 1}, " + ("all heads" if all_heads else f"head {head + 1}"), view),
    )
    fig = pairs.mark(fig, result, view, "lines")  # sentence B's rows shaded, when there is one
    heads = range(result.n_heads) if all_heads else [head]  # the finding: its strongest line (all tokens)
    said = strongest_line(view.matrix(result.attentions[layer]), view.labels, heads) if token < 0 else None
    chart(fig, "explore_lines_chart", chart_filename("explore", "lines", f"layer{layer + 1}"), alt=said)
    step_ui(result, "layer")
    st.caption(
        text.LINES_CAPTION + (text.LINES_CAPTION_TOP_K.format(n=view.n_items, top_k=top_k) if top_k else "")
    )


# ---- model -----------------------------------------------------------------------------------------


def _model_pickers_ui(result: AttentionResult) -> tuple[int, int]:
    """Layer and head boxes and the "Open in head view" button; returns the (layer, head) picked."""
    ss = st.session_state
    layer = min(int(ss.get("explore_layer", 0)), result.n_layers - 1)
    head = min(int(ss.get("explore_head", 0)), result.n_heads - 1)
    cols = st.columns([2, 2, 1], vertical_alignment="bottom")
    with cols[0]:
        layer = st.selectbox(
            "Layer",
            list(range(result.n_layers)),
            format_func=lambda i: f"layer {i + 1}",
            key=bound_key("model_layer", result.n_layers, layer),
        )
    with cols[1]:
        head = st.selectbox(
            "Head",
            list(range(result.n_heads)),
            format_func=lambda i: f"head {i + 1}",
            key=bound_key("model_head", result.n_heads, head),
        )
    with cols[2]:
        st.button(
            "Open in head view",
            key="explore_open_head",
            on_click=open_head,
            args=(layer, head),
            type="primary",
            width="stretch",
        )
    return layer, head


def model_view(
    result: AttentionResult, view: TokenView, model_key: str, engine: str, sentence: str, max_tokens: int
) -> None:
    ss = st.session_state
    png, cell, gap, hover = model_grid_data(
        model_key, engine, sentence, view.merged, view.renormalised, max_tokens
    )
    pooled = text.MODEL_CAPTION_POOLED if view.n_items > 96 else ""
    st.caption(text.MODEL_CAPTION.format(layers=result.n_layers, heads=result.n_heads, pooled=pooled))
    chart_slot = st.container()  # the grid goes above the pickers but is drawn after them
    layer, head = _model_pickers_ui(result)
    if (layer, head) != (ss.get("explore_layer"), ss.get("explore_head")):
        ss["explore_layer"], ss["explore_head"] = layer, head
        reset_widgets("layer")
        reset_widgets("head")
    fig = model_grid_figure(
        png, result.n_layers, result.n_heads, cell, gap, hover=hover, selected=(layer, head)
    )
    fig = pairs.mark_model(fig, result, view, cell, gap)  # a sentence pair's boundary and crossing shares
    with chart_slot:
        chart(fig, "explore_model_grid", on_select=on_grid_select, selection_mode="points")
    if note := view_note(view):
        st.caption(note)
