"""Figure builders for the explore page: arrays in, go.Figure out (no Streamlit, no attention math).

Letters: L layers, H heads, W shown tokens (words after merging, without hidden specials).
Attention is [..., query, key]: rows = the token that attends ("from"), columns = the token
attended to ("to"). Layers and heads are 0-indexed in arguments and shown 1-indexed on screen.

Payload is a design constraint (the browser receives every number in a figure):
- numbers go out as float32 NumPy arrays, which plotly.py sends as base64 typed arrays, not text;
- the model view is one palette PNG (all L × H thumbnails, max-pooled when T is large), sent as a
  data URI in a go.Image, plus one invisible hover/click point per head: at 512 tokens and 12 × 12
  heads that is a few hundred kB, where sending every weight would be 150 MB of float32;
- the lines view draws each head's lines in a few opacity bins (Plotly has one opacity per trace)
  and, for long inputs, only each token's strongest lines.
Token labels are escaped: Plotly reads <b>, <br>, <a> and entities in any text it draws.
References: bertviz's head and model views (Vig 2019); Clark et al. 2019 for the head patterns.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative, sample_colorscale

from dashboard.charts.heatmap import SEQUENTIAL, cell_outline, number_repeats, top_title

# Twelve distinguishable, projector-safe colours for heads (more heads reuse them in order).
HEAD_COLOURS = [*list(qualitative.Dark24[:10]), "#8C564B", "#17BECF", *list(qualitative.Light24)]
GAP_COLOUR = (205, 210, 218)
_OPACITY_EDGES = np.array([0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.01])
_OPACITY = [0.08, 0.14, 0.22, 0.35, 0.5, 0.7, 0.95]  # about each bin's weight, as bertviz does
FONT = {"size": 14}


def escape_label(text: str) -> str:
    """Show a token literally in Plotly text, which otherwise reads a few HTML tags and entities, and
    in hover templates, where "%{...}" is a placeholder (Plotly turns the entities back into text)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("%", "&#37;")


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Escaped labels, repeats numbered ("the", "the (2)"): Plotly merges equal category labels."""
    return number_repeats(escape_label(label) for label in labels)


def head_heatmap(
    matrix: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = "",
    highlight: tuple[int, int] | None = None,
    height: int | None = None,
) -> go.Figure:
    """One head's (W, W) attention; hover shows the exact weight and both tokens.

    highlight=(row, col) outlines one cell, e.g. the focus token's weight on the target token.
    """
    z = np.asarray(matrix, dtype=np.float32)  # (W, W), sent as float32 bytes
    names = unique_labels(labels)
    w = len(names)
    show_numbers = w <= 20
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=names,
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            # numbers only where they say something: tiny weights would print a wall of "0.00"
            text=np.where(z >= 0.05, np.char.mod("%.2f", z), "") if show_numbers else None,
            texttemplate="%{text}" if show_numbers else None,
            textfont={"size": 11 if w > 12 else 13},
            hovertemplate="from (query): <b>%{y}</b><br>to (key): <b>%{x}</b><br>"
            "weight: %{z:.4f}<extra></extra>",
            xgap=1 if w <= 64 else 0,
            ygap=1 if w <= 64 else 0,
        )
    )
    if highlight is not None:
        fig.add_shape(cell_outline(*highlight, width=3))
    fig.update_layout(
        title=top_title(title) if title else None,
        height=height or int(min(900, max(380, 140 + 26 * w))),
        # the title sits above the top axis (its title and tick labels), which needs room of its own
        margin={"l": 10, "r": 10, "t": (130 if w > 10 else 100) if title else 10, "b": 10},
        font=FONT,
    )
    fig.update_xaxes(
        title_text="to (key)", side="top", type="category", tickangle=0 if w <= 10 else -60, showgrid=False
    )
    fig.update_yaxes(title_text="from (query)", autorange="reversed", type="category", showgrid=False)
    return fig


def select_lines(
    weights: np.ndarray,
    *,
    token: int | None = None,
    direction: str = "from",
    min_weight: float = 0.0,
    top_k: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which lines of one head's (W, W) map to draw: (rows, cols, weights) of the kept cells.

    token + direction "from": only that token's row; "to": only its column.
    top_k: per query row, only its k strongest lines (long inputs stay readable).
    """
    w = np.asarray(weights, dtype=np.float32)
    keep = w >= min_weight
    if top_k is not None and top_k < w.shape[1]:
        # kth largest per row: ties may keep a line or two more, which is harmless.
        kth = -np.partition(-w, top_k - 1, axis=1)[:, top_k - 1 : top_k]
        keep &= w >= kth
    if token is not None:
        mask = np.zeros_like(keep)
        if direction == "to":
            mask[:, token] = True
        else:
            mask[token, :] = True
        keep &= mask
    rows, cols = np.nonzero(keep)
    return rows, cols, w[rows, cols]


def lines_figure(
    layer_attn: np.ndarray,
    labels: Sequence[str],
    *,
    heads: Sequence[int] | None = None,
    shown_heads: Sequence[int] | None = None,
    token: int | None = None,
    direction: str = "from",
    min_weight: float = 0.02,
    top_k: int | None = None,
    title: str = "",
) -> go.Figure:
    """The bertviz-style view of one layer: tokens twice, queries left, keys right, one line per
    weight with opacity by weight, one colour per head (legend entries toggle heads).

    layer_attn: (H, W, W). heads: the heads in the figure (default all); shown_heads: those drawn
    at first (default all), the others start hidden ("legendonly") until clicked in the legend.
    """
    n_heads, w = layer_attn.shape[0], layer_attn.shape[-1]
    heads = list(range(n_heads)) if heads is None else list(heads)
    shown = set(heads if shown_heads is None else shown_heads)
    names = [escape_label(label) for label in labels]
    y = -np.arange(w, dtype=np.float32)  # token i at height -i: the sentence reads top to bottom
    fig = go.Figure()
    for h in heads:
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        rows, cols, vals = select_lines(
            layer_attn[h], token=token, direction=direction, min_weight=min_weight, top_k=top_k
        )
        bins = np.digitize(vals, _OPACITY_EDGES) - 1
        first = True
        for b, opacity in enumerate(_OPACITY):
            sel = bins == b
            # skip empty bins, but give every head one legend entry even when it draws no line
            if not sel.any() and not (first and b == len(_OPACITY) - 1):
                continue
            n = int(sel.sum())
            # segments (0, -row) -> (1, -col), separated by NaN gaps: one trace per opacity bin
            xs = np.tile(np.array([0.0, 1.0, np.nan], dtype=np.float32), n)
            ys = np.empty(3 * n, dtype=np.float32)
            ys[0::3], ys[1::3], ys[2::3] = y[rows[sel]], y[cols[sel]], np.nan
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line={"color": colour, "width": 2},
                    opacity=opacity,
                    name=f"head {h + 1}",
                    legendgroup=f"head{h}",
                    showlegend=first,
                    visible=True if h in shown else "legendonly",
                    hoverinfo="skip",
                )
            )
            first = False
    highlight = token if token is not None else -1
    for x, side, position in ((0.0, "query", "middle left"), (1.0, "key", "middle right")):
        colours = [
            "#d62728" if i == highlight and (side == "query") == (direction == "from") else "#222"
            for i in range(w)
        ]
        fig.add_trace(
            go.Scatter(
                x=np.full(w, x, dtype=np.float32),
                y=y,
                mode="markers+text",
                text=names,
                textposition=position,
                textfont={"size": 15 if w <= 40 else 12, "color": colours},
                marker={"size": 6, "color": "#555"},
                hovertemplate=f"{side}: %{{text}}<extra></extra>",
                showlegend=False,
            )
        )
    row_px = 26 if w <= 40 else 18
    fig.update_layout(
        title=top_title(title) if title else None,
        height=int(max(320, 90 + row_px * w, 80 + 22 * len(heads))),  # room for the legend too
        margin={"l": 10, "r": 10, "t": 70 if title else 30, "b": 10},
        font=FONT,
        legend={"yanchor": "top", "y": 1.0, "x": 1.0, "xanchor": "right", "title": {"text": "heads"}},
        plot_bgcolor="white",
        hovermode="closest",
    )
    fig.update_xaxes(visible=False, range=[-0.6, 1.6], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-w + 0.4, 0.8], fixedrange=True)
    fig.add_annotation(x=0.0, y=0.8, text="from (query)", showarrow=False, xanchor="right", yanchor="bottom")
    fig.add_annotation(x=1.0, y=0.8, text="to (key)", showarrow=False, xanchor="left", yanchor="bottom")
    return fig


def _palette() -> list[int]:
    """256 RGB entries: 255 steps of the sequential scale, then the gap colour at index 255."""
    colours = sample_colorscale(SEQUENTIAL, list(np.linspace(0.0, 1.0, 255)), colortype="tuple")
    flat = [round(c * 255) for rgb in colours for c in rgb]
    return flat + list(GAP_COLOUR)


def thumbnail_geometry(n_tokens: int, max_cell: int = 96, min_cell: int = 48) -> tuple[int, int]:
    """(pool, repeat) for one thumbnail: max-pool by `pool` when T is large, repeat pixels by
    `repeat` when T is small, so a cell is min_cell..max_cell pixels and gaps stay thin."""
    if n_tokens > max_cell:
        return math.ceil(n_tokens / max_cell), 1
    return 1, max(1, math.ceil(min_cell / max(n_tokens, 1)))


def thumbnail_grid_png(attn: np.ndarray, gamma: float = 0.5, gap: int = 3) -> tuple[bytes, int, int]:
    """All heads' (L, H, W, W) maps as one palette PNG; returns (png bytes, cell px, gap px).

    Colour is weight ** gamma (0.5: square root) so diffuse heads stay visible at long inputs;
    when W is large each pixel shows the largest weight of its block (max-pooling keeps sharp
    one-token patterns, which averaging would wash out).
    """
    from PIL import Image

    n_layers, n_heads, w = attn.shape[0], attn.shape[1], attn.shape[-1]
    pool, repeat = thumbnail_geometry(w)
    if pool > 1:
        padded_w = math.ceil(w / pool) * pool
        padded = np.zeros((n_layers, n_heads, padded_w, padded_w), dtype=np.float32)
        padded[..., :w, :w] = attn
        cells = padded.reshape(n_layers, n_heads, padded_w // pool, pool, padded_w // pool, pool).max(
            axis=(3, 5)
        )
    else:
        cells = np.asarray(attn, dtype=np.float32)
    # (L, H, c, c) -> palette indices 0..254
    idx = np.clip(np.rint(np.power(np.clip(cells, 0.0, 1.0), gamma) * 254), 0, 254).astype(np.uint8)
    if repeat > 1:
        idx = idx.repeat(repeat, axis=2).repeat(repeat, axis=3)
    cell = idx.shape[-1]
    step = cell + gap
    canvas = np.full((gap + n_layers * step, gap + n_heads * step), 255, dtype=np.uint8)
    for layer in range(n_layers):
        for head in range(n_heads):
            top, left = gap + layer * step, gap + head * step
            canvas[top : top + cell, left : left + cell] = idx[layer, head]
    image = Image.fromarray(canvas, mode="P")
    image.putpalette(_palette())
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue(), cell, gap


def model_grid_figure(
    png: bytes,
    n_layers: int,
    n_heads: int,
    cell: int,
    gap: int,
    *,
    hover: Sequence[str] | None = None,
    selected: tuple[int, int] | None = None,
) -> go.Figure:
    """The L × H grid of thumbnails from thumbnail_grid_png, with one invisible point per head
    (hover text, and a click target that the page reads as a selection).

    hover: L*H strings in layer-major order (escaped by the caller where they hold tokens).
    Point customdata is [layer, head], 0-indexed.
    """
    step = cell + gap
    source = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    width_px, height_px = gap + n_heads * step, gap + n_layers * step
    fig = go.Figure(go.Image(source=source, x0=0, y0=0, dx=1, dy=1, hoverinfo="skip", name="thumbnails"))
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    centre_x = (gap + heads * step + cell / 2).ravel().astype(np.float32)
    centre_y = (gap + layers * step + cell / 2).ravel().astype(np.float32)
    texts = (
        list(hover)
        if hover is not None
        else [f"layer {la + 1}, head {he + 1}" for la, he in zip(layers.ravel(), heads.ravel(), strict=True)]
    )
    fig.add_trace(
        go.Scatter(
            x=centre_x,
            y=centre_y,
            mode="markers",
            marker={"size": 28, "color": "rgba(0,0,0,0)", "symbol": "square"},
            selected={"marker": {"opacity": 0}},
            unselected={"marker": {"opacity": 0}},
            customdata=np.stack([layers.ravel(), heads.ravel()], axis=1).tolist(),  # plain lists survive
            hoverlabel={"bgcolor": "white", "bordercolor": "#888", "font": {"color": "#222"}},
            text=texts,
            hovertemplate="%{text}<extra></extra>",
            showlegend=False,
            name="heads",
        )
    )
    if selected is not None:
        layer, head = selected
        x0, y0 = gap + head * step - gap / 2, gap + layer * step - gap / 2
        fig.add_shape(
            type="rect", x0=x0, x1=x0 + step, y0=y0, y1=y0 + step, line={"color": "#d62728", "width": 3}
        )
    fig.update_layout(
        height=int(min(1000, max(320, 90 + 1000 * n_layers / max(n_heads, 1)))),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        font=FONT,
        plot_bgcolor="white",
        clickmode="event+select",
        dragmode=False,
    )
    fig.update_xaxes(
        range=[0, width_px],
        tickvals=[gap + h * step + cell / 2 for h in range(n_heads)],
        ticktext=[str(h + 1) for h in range(n_heads)],
        side="top",
        title_text="head",
        showgrid=False,
        zeroline=False,
        fixedrange=True,
    )
    fig.update_yaxes(
        range=[height_px, 0],
        tickvals=[gap + la * step + cell / 2 for la in range(n_layers)],
        ticktext=[str(la + 1) for la in range(n_layers)],
        title_text="layer",
        showgrid=False,
        zeroline=False,
        scaleanchor="x",
        fixedrange=True,
    )
    return fig


def focus_heatmap(rows: np.ndarray, labels: Sequence[str], focus_label: str) -> go.Figure:
    """Where one token looks, in every head: (L, H, W) -> an (L·H) × W heatmap, layers separated.

    The colour scale ends at the largest weight shown (not at 1): over hundreds of tokens the
    weights are small, and a 0–1 scale would draw an empty page. The colour bar says so.
    """
    n_layers, n_heads, w = rows.shape
    z = np.asarray(rows, dtype=np.float32).reshape(n_layers * n_heads, w)
    names = unique_labels(labels)
    row_names = [f"L{la + 1} H{he + 1}" for la in range(n_layers) for he in range(n_heads)]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=row_names,
            zmin=0.0,
            zmax=float(max(0.05, z.max())) if z.size else 1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            hovertemplate=f"{escape_label(focus_label)} → <b>%{{x}}</b><br>"
            "%{y} (layer, head)<br>weight: %{z:.4f}<extra></extra>",
            xgap=1 if w <= 64 else 0,
        )
    )
    for layer in range(1, n_layers):
        fig.add_hline(y=layer * n_heads - 0.5, line={"color": "white", "width": 3})
    row_px = 12 if n_layers * n_heads <= 80 else 8
    fig.update_layout(
        height=int(max(300, 110 + row_px * n_layers * n_heads)),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        font=FONT,
    )
    fig.update_xaxes(
        title_text="to (key)", side="top", type="category", tickangle=0 if w <= 10 else -60, showgrid=False
    )
    fig.update_yaxes(
        title_text="layer, head",
        autorange="reversed",
        type="category",
        tickvals=[f"L{la + 1} H1" for la in range(n_layers)],
        ticktext=[f"layer {la + 1}" for la in range(n_layers)],
        showgrid=False,
    )
    return fig


def head_weight_grid(
    weights: np.ndarray, from_label: str, to_label: str, *, selected: tuple[int, int] | None = None
) -> go.Figure:
    """(L, H) weights of one query → key pair in every head, numbers printed: where the link lives."""
    n_layers, n_heads = weights.shape
    z = np.asarray(weights, dtype=np.float32)
    pair = f"{escape_label(from_label)} → {escape_label(to_label)}"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(n_heads)),
            y=list(range(n_layers)),
            zmin=0.0,
            zmax=float(max(0.05, z.max())),
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            text=np.char.mod("%.2f", z),
            texttemplate="%{text}" if n_heads <= 16 else None,
            textfont={"size": 12},
            # 1-indexed [layer, head] per cell, as plain lists (a 3-D typed array is not read back)
            customdata=(
                np.stack(np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij"), -1) + 1
            ).tolist(),
            hovertemplate=f"{pair}<br>layer %{{customdata[0]}}, head %{{customdata[1]}}<br>"
            "weight: %{z:.4f}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    if selected is not None:
        fig.add_shape(cell_outline(*selected, width=3))
    fig.update_layout(
        height=int(max(260, 100 + 40 * n_layers)),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        font=FONT,
    )
    fig.update_xaxes(
        title_text="head",
        side="top",
        tickvals=list(range(n_heads)),
        ticktext=[str(h + 1) for h in range(n_heads)],
        showgrid=False,
    )
    fig.update_yaxes(
        title_text="layer",
        autorange="reversed",
        tickvals=list(range(n_layers)),
        ticktext=[str(la + 1) for la in range(n_layers)],
        showgrid=False,
    )
    return fig
