"""Figure builder for one head's query/key space: the corpus's queries and keys as two clouds of small
points in two colours, the current sentence's on top, larger and labelled. Arrays in, go.Figure out;
no Streamlit, no model.

The corpus clouds are WebGL traces (Scattergl): some 8700 points as SVG took the browser about 3 s
longer to draw on a head change (bench/representations.py); the sentence's few labelled marks stay
SVG, where text labels are sharp.

Letters: N corpus tokens, T sentence tokens. Every text is escaped (Plotly reads a few HTML tags).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import FONT, escape_label
from dashboard.charts.heatmap import top_title

# Colour-blind-safe (Okabe and Ito): queries blue, keys vermillion
QUERY_COLOR, KEY_COLOR = "#0072B2", "#D55E00"
SYMBOLS = {"query": "circle", "key": "diamond"}  # a shape each, not only a colour
WHITE_EDGE = {"color": "white", "width": 1.5}  # the sentence's marks stand out of the clouds


def _hover(kind: str) -> str:
    return f"<b>%{{customdata[0]}}</b> · {kind}<br>%{{customdata[1]}}<extra></extra>"


def qk_figure(
    corpus_points: tuple[np.ndarray, np.ndarray],
    corpus_tokens: Sequence[str],
    corpus_sentences: Sequence[str],
    sentence_points: tuple[np.ndarray, np.ndarray],
    sentence_tokens: Sequence[str],
    *,
    title: str,
    axis_titles: tuple[str, str],
    names: tuple[str, str, str, str],
    font: int = FONT["size"],
    height: int = 640,
) -> go.Figure:
    """corpus_points: (N, 2) queries and (N, 2) keys, with each point's token and sentence (N,);
    sentence_points: (T, 2) queries and keys of the sentence on the page, labelled by its tokens.
    names: the legend's (corpus queries, corpus keys, sentence queries, sentence keys)."""
    tokens = [escape_label(t) for t in corpus_tokens]
    custom = np.array(
        [[t, escape_label(s)] for t, s in zip(tokens, corpus_sentences, strict=True)], dtype=object
    )
    labels = [escape_label(t) for t in sentence_tokens]
    own = np.array([[t, "(this sentence)"] for t in labels], dtype=object)
    fig = go.Figure()
    for points, color, name, kind in (
        (corpus_points[0], QUERY_COLOR, names[0], "query"),
        (corpus_points[1], KEY_COLOR, names[1], "key"),
    ):
        fig.add_trace(
            go.Scattergl(
                x=points[:, 0].astype(np.float32), y=points[:, 1].astype(np.float32), mode="markers",
                name=name, customdata=custom,
                marker={"color": color, "size": 4, "opacity": 0.25, "symbol": SYMBOLS[kind]},
                hovertemplate=_hover(kind),
            )
        )  # fmt: skip
    for points, color, name, kind, symbol in (
        (sentence_points[0], QUERY_COLOR, names[2], "query", SYMBOLS["query"]),
        (sentence_points[1], KEY_COLOR, names[3], "key", SYMBOLS["key"]),
    ):
        fig.add_trace(
            go.Scatter(
                x=points[:, 0], y=points[:, 1], mode="markers+text", name=name, text=labels,
                textposition="top center", customdata=own, hovertemplate=_hover(kind),
                textfont={"size": font, "color": color, "shadow": "1px 1px 2px white, -1px -1px 2px white"},
                marker={"color": color, "size": 11, "symbol": symbol, "line": WHITE_EDGE},
            )
        )  # fmt: skip
    _lay_out(fig, title, axis_titles, font, height)
    return fig


def _lay_out(fig: go.Figure, title: str, axis_titles: tuple[str, str], font: int, height: int) -> None:
    """The qk figure's title, size, fonts and legend; both axes on one scale."""
    dark = {**FONT, "size": font}
    fig.update_layout(
        title=top_title(title),
        height=height,
        margin={"l": 10, "r": 10, "t": 50 + font, "b": 10},
        font=dark,
        legend={"font": dark, "orientation": "h", "y": -0.12, "x": 0, "itemsizing": "constant"},
        hoverlabel={"font_size": font},
    )
    fig.layout.title.font.size = font + 2
    fig.update_xaxes(tickfont=dark, title_font=dark, title_text=axis_titles[0], zeroline=False)
    # one unit is the same length on both axes: distances in the picture are distances in the plane
    fig.update_yaxes(
        tickfont=dark, title_font=dark, title_text=axis_titles[1], zeroline=False, scaleanchor="x"
    )
