"""Figure builder for the pronoun test: the focus word's cosine to a few content words after each
layer, one line per word. Arrays in, go.Figure out; no Streamlit, no model.

Letters: L layers (the x axis runs 0..L, 0 = the embeddings), K lines. Words are escaped (Plotly
reads a few HTML tags in any text it draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import FONT, unique_labels
from dashboard.charts.heatmap import top_title
from dashboard.charts.marks import head_symbol

# Colour-blind-safe (Okabe and Ito), the first line, the nearest word, the darkest.
LINE_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")


def closeness_lines(
    words: Sequence[str],
    cosines: np.ndarray,
    *,
    title: str,
    x_title: str,
    y_title: str,
    first_label: str,
    font: int = FONT["size"],
    height: int | None = None,
) -> go.Figure:
    """`cosines` (K, L + 1): the focus word's cosine to each of `words` (K,) after each layer, the
    first word drawn thickest. x = 0..L, 0 labelled `first_label` (the embeddings)."""
    y = np.asarray(cosines, dtype=np.float32)
    layers = np.arange(y.shape[1])
    names = unique_labels(words)
    traces = [
        go.Scatter(
            x=layers,
            y=row,
            name=name,
            mode="lines+markers",
            line={"color": LINE_COLORS[k % len(LINE_COLORS)], "width": 4 if k == 0 else 2},
            marker={"size": 8 if k == 0 else 6, "symbol": head_symbol(k)},  # a shape each, not only a colour
            hovertemplate=f"{name}<br>after layer %{{x}}: cos %{{y:.3f}}<extra></extra>",
        )
        for k, (name, row) in enumerate(zip(names, y, strict=True))
    ]
    # fonts set in full: Streamlit's theme greys an axis' text unless the axis sets it
    dark = {**FONT, "size": font}
    ticks = [first_label, *(str(i) for i in layers[1:])]
    # one constructor call: update_layout on a figure with traces costs about 10 ms a call
    return go.Figure(
        traces,
        layout={
            "title": top_title(title) | {"font": {"size": font + 2}},
            "height": height or 320,
            "margin": {"l": 10, "r": 10, "t": 50 + font, "b": 10},
            "font": dark,
            "legend": {"font": dark, "title": {"text": ""}},
            "xaxis": {
                "tickfont": dark,
                "title": {"text": x_title, "font": dark},
                "tickvals": layers,
                "ticktext": ticks,
            },
            "yaxis": {"tickfont": dark, "title": {"text": y_title, "font": dark}},
        },
    )
