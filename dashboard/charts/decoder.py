"""Pure figure builders for the explore page's decoder views: arrays in, go.Figure out.

- next_token_bars: the likeliest next tokens as horizontal bars (next word, and each generation step);
- step_attention: one generation step's attention, heads × tokens so far;
- lens_heatmap: the logit lens, layers × positions, each cell a token shaded by its probability;
- copy_losses_bars: the induction test's loss on each copy.
Layer × head grids (sinks, induction scores) reuse dashboard/charts/ablation.py's effect_grid.
Tokens are escaped before Plotly sees them (charts.explore.escape_label): it reads a few HTML tags.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import FONT, escape_label, unique_labels
from dashboard.charts.heatmap import LABEL_COLOR, SEQUENTIAL, SLANT_DEGREES, top_title

BAR_COLOR = "#2171b5"  # the heatmaps' dark blue
CHOSEN_COLOR = "#d62728"  # the token the step took: the outline colour of every other view


def _title(text: str, font: int) -> dict:
    """top_title, grown with the chart's type on a projector."""
    return {**top_title(text), "font": {"size": max(16, font + 4)}}


def _axis(title: str, font: int, **settings) -> dict:
    text = {"size": font, "color": LABEL_COLOR}  # dark: readable from the back of a room
    return {"title": {"text": title, "font": text}, "tickfont": text, **settings}


def shown_token(token: str) -> str:
    """A token as a label: its leading space as "␣" (GPT-2 folds the space into the token), line
    breaks and tabs named, so " the" and "the" are told apart on a slide."""
    text = str(token).replace("\n", "⏎").replace("\t", "⇥")
    return "␣" + text[1:] if text.startswith(" ") else text or "∅"


def next_token_bars(
    tokens: Sequence[str],
    probs: Sequence[float],
    *,
    title: str,
    x_title: str,
    chosen: int | None = None,
    font: int = 14,
    height: int | None = None,
) -> go.Figure:
    """The likeliest next tokens, most likely on top, the probability printed at each bar's end;
    `chosen` (an index into tokens) is drawn in red and hatched: the token a generation step took."""
    labels = unique_labels(shown_token(t) for t in tokens)
    p = np.asarray(probs, dtype=np.float64)
    colors = [CHOSEN_COLOR if i == chosen else BAR_COLOR for i in range(len(labels))]
    return go.Figure(
        go.Bar(
            x=p,
            y=labels,
            orientation="h",
            marker_color=colors,
            # the chosen bar hatched as well as red: not told by its colour alone
            marker_pattern_shape=["/" if i == chosen else "" for i in range(len(labels))],
            text=[f"{v:.1%}" for v in p],
            textposition="outside",
            textfont={"size": font, "color": LABEL_COLOR},
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        ),
        layout={
            "title": _title(title, font),
            "height": height or 120 + 44 * len(labels),
            "margin": {"l": 10, "r": 70, "t": 70, "b": 50},
            "font": {**FONT, "size": font},
            "xaxis": _axis(x_title, font, range=[0, 1.0], tickformat=".0%"),
            "yaxis": _axis("", font + 2, autorange="reversed", type="category"),
        },
    )


def step_attention(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    font: int = 14,
    height: int | None = None,
) -> go.Figure:
    """(H, S) one step's attention from the predicting position to every token so far, rows = heads
    (counted from 1), the newest token last; numbers printed where the row is short enough."""
    z = np.asarray(weights, dtype=np.float32)
    n_heads, s = z.shape
    labels = unique_labels(shown_token(t) for t in tokens)
    numbers = s <= 24
    return go.Figure(
        go.Heatmap(
            z=z,
            x=labels,
            y=[str(h + 1) for h in range(n_heads)],
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            text=np.where(z >= 0.05, np.char.mod("%.2f", z), "") if numbers else None,
            texttemplate="%{text}" if numbers else None,
            textfont={"size": max(11, font - 3)},
            hovertemplate="head %{y}<br>to: <b>%{x}</b><br>weight: %{z:.4f}<extra></extra>",
            xgap=1 if s <= 64 else 0,
            ygap=1,
        ),
        layout={
            "title": _title(title, font),
            "height": height or min(720, 160 + 30 * n_heads),
            "margin": {"l": 10, "r": 10, "t": 70, "b": 10},
            "font": {**FONT, "size": font},
            "xaxis": _axis(x_title, font, type="category", tickangle=-SLANT_DEGREES if s > 8 else 0),
            "yaxis": _axis(y_title, font, type="category", autorange="reversed"),
        },
    )


def lens_heatmap(
    guesses: np.ndarray,
    probs: np.ndarray,
    positions: Sequence[str],
    row_names: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    bar_title: str,
    font: int = 14,
    height: int | None = None,
) -> go.Figure:
    """(R, W) each reading's guessed token (strings) shaded by its probability; rows bottom-up in the
    order given (the embeddings first, the model's output last), columns = the input's tokens."""
    z = np.asarray(probs, dtype=np.float32)
    n_rows, w = z.shape
    as_label = np.vectorize(lambda t: escape_label(shown_token(t)), otypes=[object])
    cells = as_label(np.asarray(guesses, dtype=object))
    return go.Figure(
        go.Heatmap(
            z=z,
            x=unique_labels(shown_token(t) for t in positions),
            y=list(row_names),
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": bar_title}, "thickness": 14},
            text=cells,
            texttemplate="%{text}" if w <= 16 else None,
            textfont={"size": max(11, font - 2)},
            hovertemplate="%{y}, at <b>%{x}</b><br>guess: <b>%{text}</b><br>"
            + bar_title
            + ": %{z:.3f}<extra></extra>",
            xgap=1,
            ygap=1,
        ),
        layout={
            "title": _title(title, font),
            "height": height or min(860, 150 + 32 * n_rows),
            "margin": {"l": 10, "r": 10, "t": 70, "b": 10},
            "font": {**FONT, "size": font},
            "xaxis": _axis(x_title, font, type="category", tickangle=-SLANT_DEGREES if w > 8 else 0),
            "yaxis": _axis(y_title, font, type="category"),
        },
    )


def copy_losses_bars(
    names: Sequence[str], losses: Sequence[float], *, title: str, y_title: str, font: int = 14, height=None
) -> go.Figure:
    """The induction test's mean loss per copy, one bar each, the value printed on top."""
    return go.Figure(
        go.Bar(
            x=list(names),
            y=list(losses),
            marker_color=["#969696", BAR_COLOR, CHOSEN_COLOR][: len(names)],
            text=[f"{v:.2f}" for v in losses],
            textposition="outside",
            textfont={"size": font, "color": LABEL_COLOR},
            cliponaxis=False,
            hovertemplate="%{x}: %{y:.3f} nats<extra></extra>",
        ),
        layout={
            "title": _title(title, font),
            "height": height or 420,
            "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
            "font": {**FONT, "size": font},
            "xaxis": _axis("", font),
            "yaxis": _axis(y_title, font, rangemode="tozero"),
        },
    )
