"""A generation step's sampling drawn on its next-token distribution: arrays in, go.Figure out.

sampling_bars: the likeliest candidates as horizontal bars, most likely on top. A kept token's bar is
its probability after the cut, renormalised (blue), with a tick where it stood before; a cut token's
bar is its probability before the cut, grey, and its printed value says "cut"; the drawn token is
red, hatched, and its printed value says "drawn" with its rank. So nothing is told by colour alone.
Greedy (no sampling): the bars are the distribution itself and the token taken is marked the same way.
Tokens are escaped before Plotly sees them (charts.explore.unique_labels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.decoder import BAR_COLOR, CHOSEN_COLOR, shown_token
from dashboard.charts.explore import FONT, unique_labels
from dashboard.charts.heatmap import LABEL_COLOR, top_title

CUT_COLOR = "#bdbdbd"  # light grey: out of the draw
BEFORE_COLOR = "#111111"  # the tick at a kept token's probability before the cut
HATCH = "/"


@dataclass(frozen=True)
class Candidates:
    """The bars: one per candidate, most likely first (the drawn token may be added last, past the
    likeliest, with its rank)."""

    tokens: Sequence[str]
    before: Sequence[float]  # softmax(logits / temperature): before the cut
    after: Sequence[float]  # renormalised over the kept; 0 for a cut token
    kept: Sequence[bool]
    ranks: Sequence[int]  # 0: the likeliest
    drawn: int | None  # index of the drawn token, when it is among the bars


@dataclass(frozen=True)
class Words:
    """The chart's text (dashboard/content/sampling.py)."""

    title: str
    x_title: str
    kept_name: str  # legend: the kept tokens' bars
    before_name: str  # legend: the ticks
    cut_name: str  # legend: the cut tokens' bars
    cut: str  # printed on a cut bar, {p}
    drawn: str  # printed on the drawn bar, {p}, {rank}
    hover_kept: str  # {token}, {after}, {before}
    hover_cut: str  # {token}, {before}


def _labels(c: Candidates) -> list[str]:
    """Token labels, a candidate past the likeliest numbered by its rank ("#57 ␣the")."""
    shown = [shown_token(t) for t in c.tokens]
    return unique_labels(
        [t if r == i else f"#{r + 1} {t}" for i, (t, r) in enumerate(zip(shown, c.ranks, strict=True))]
    )


def _bar_text(c: Candidates, words: Words, shown: np.ndarray, labels: list[str]) -> tuple[list, list]:
    """Each bar's printed value ("cut", "drawn" said in words) and its hover line."""
    text, hover = [], []
    for i, label in enumerate(labels):
        p, before, after = shown[i], c.before[i], c.after[i]
        if i == c.drawn:
            text.append(words.drawn.format(p=p, rank=c.ranks[i] + 1))
        else:
            text.append(f"{p:.1%}" if c.kept[i] else words.cut.format(p=p))
        kept = words.hover_kept.format(token=label, after=after, before=before)
        hover.append(kept if c.kept[i] else words.hover_cut.format(token=label, before=before))
    return text, hover


def sampling_bars(
    c: Candidates, words: Words, *, greedy: bool = False, font: int = 13, height: int | None = None
) -> go.Figure:
    """The candidates' bars (see the module's docstring); greedy: one bar per token, its probability."""
    labels = _labels(c)
    before, after = np.asarray(c.before, dtype=np.float64), np.asarray(c.after, dtype=np.float64)
    kept = np.asarray(c.kept, dtype=bool)
    drawn = [i == c.drawn for i in range(len(labels))]
    shown = before if greedy else np.where(kept, after, before)
    text, hover = _bar_text(c, words, shown, labels)
    colors = [CHOSEN_COLOR if d else BAR_COLOR if k else CUT_COLOR for d, k in zip(drawn, kept, strict=True)]
    traces = [
        go.Bar(
            x=shown,
            y=labels,
            orientation="h",
            name=words.kept_name,
            marker={"color": colors, "pattern": {"shape": [HATCH if d else "" for d in drawn]}},
            text=text,
            textposition="outside",
            textfont={"size": font, "color": LABEL_COLOR},
            cliponaxis=False,
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            showlegend=False,
        )
    ]
    if not greedy and not np.allclose(
        after[kept], before[kept]
    ):  # nothing cut: the ticks would sit on the bars' ends
        traces += _legend_and_ticks(labels, before, kept, words, font)
    top = float(shown.max()) if len(shown) else 1.0
    return go.Figure(
        traces,
        layout={
            "title": {**top_title(words.title), "font": {"size": max(16, font + 4)}},
            "height": height or 130 + 26 * len(labels),
            "margin": {"l": 10, "r": 10, "t": 70, "b": 50},
            "font": {**FONT, "size": font},
            "barmode": "overlay",
            "bargap": 0.25,
            "xaxis": _axis(words.x_title, font, **_probability_ticks(top)),
            "yaxis": _axis("", font + 1, autorange="reversed", type="category"),
            "legend": {"orientation": "h", "y": -0.12, "yanchor": "top", "x": 0, "font": {"size": font}},
        },
    )


def _legend_and_ticks(labels, before, kept, words: Words, font: int) -> list:
    """A tick at each kept token's probability before the cut, and the legend's two kinds of bar
    (empty traces: the one bar trace above has several colours)."""
    ticks = go.Scatter(
        x=before[kept],
        y=[lab for lab, k in zip(labels, kept, strict=True) if k],
        mode="markers",
        name=words.before_name,
        marker={
            "symbol": "line-ns-open",
            "size": font + 9,
            "color": BEFORE_COLOR,
            "line": {"width": 3, "color": BEFORE_COLOR},
        },
        hoverinfo="skip",
    )

    def swatch(name: str, color: str) -> go.Scatter:
        marker = {"symbol": "square", "size": font + 2, "color": color}
        return go.Scatter(x=[None], y=[None], mode="markers", name=name, marker=marker, hoverinfo="skip")

    return [swatch(words.kept_name, BAR_COLOR), ticks, swatch(words.cut_name, CUT_COLOR)]


def _probability_ticks(top: float) -> dict:
    """The x axis up to the longest bar, with room past it for its printed value ("drawn #1 · 61.0%"),
    ticked only from 0 to at most 100%."""
    step = next((s for s in (0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5) if top / s <= 3.5), 0.5)
    ticks = np.arange(0.0, min(1.0, top) + 1e-9, step)
    return {
        "range": [0, 2.0 * max(top, 0.01)],
        "tickvals": ticks.tolist(),
        "tickformat": ".1%" if step < 0.01 else ".0%",
    }


def _axis(title: str, font: int, **settings) -> dict:
    text = {"size": font, "color": LABEL_COLOR}
    return {"title": {"text": title, "font": text}, "tickfont": text, **settings}
