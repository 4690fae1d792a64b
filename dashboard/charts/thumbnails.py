"""The explore page's model view: every layer's and head's attention map as one thumbnail grid.

Payload is a design constraint: the grid is one palette PNG (all L × H thumbnails, max-pooled when
T is large), sent as a data URI in a go.Image, plus one invisible hover/click point per head. At
512 tokens and 12 × 12 heads that is a few hundred kB, where sending every weight would be 150 MB
of float32. Letters: L layers, H heads, T (or W) tokens. Reference: bertviz's model view (Vig 2019).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from dashboard.charts.explore import FONT
from dashboard.charts.heatmap import SEQUENTIAL

GAP_COLOUR = (205, 210, 218)


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
    one-token patterns, which averaging would wash out). A map that is not square (a translator's
    cross-attention, (L, H, T, S)) sits in the top-left of a square cell, the rest in the gap colour.
    """
    from PIL import Image

    rows, cols = attn.shape[-2:]
    if rows != cols:
        square = np.full((*attn.shape[:2], max(rows, cols), max(rows, cols)), np.nan, dtype=np.float32)
        square[..., :rows, :cols] = attn
        attn = square
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
    shade = np.clip(np.rint(np.power(np.clip(np.nan_to_num(cells), 0.0, 1.0), gamma) * 254), 0, 254)
    idx = np.where(np.isnan(cells), 255, shade).astype(np.uint8)  # 255: the gap colour
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


def _head_points(n_layers: int, n_heads: int, cell: int, gap: int, hover: Sequence[str] | None) -> go.Scatter:
    """One invisible point per head at its thumbnail's centre: hover text and click target."""
    step = cell + gap
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    texts = (
        list(hover)
        if hover is not None
        else [f"layer {la + 1}, head {he + 1}" for la, he in zip(layers.ravel(), heads.ravel(), strict=True)]
    )
    return go.Scatter(
        x=(gap + heads * step + cell / 2).ravel().astype(np.float32),
        y=(gap + layers * step + cell / 2).ravel().astype(np.float32),
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
    fig = go.Figure(go.Image(source=source, x0=0, y0=0, dx=1, dy=1, hoverinfo="skip", name="thumbnails"))
    fig.add_trace(_head_points(n_layers, n_heads, cell, gap, hover))
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
    axis = {"showgrid": False, "zeroline": False, "fixedrange": True}
    fig.update_xaxes(
        range=[0, gap + n_heads * step],
        tickvals=[gap + h * step + cell / 2 for h in range(n_heads)],
        ticktext=[str(h + 1) for h in range(n_heads)],
        side="top",
        title_text="head",
        **axis,
    )
    fig.update_yaxes(
        range=[gap + n_layers * step, 0],
        tickvals=[gap + la * step + cell / 2 for la in range(n_layers)],
        ticktext=[str(la + 1) for la in range(n_layers)],
        title_text="layer",
        scaleanchor="x",
        **axis,
    )
    return fig
