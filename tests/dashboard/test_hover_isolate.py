"""Hover to isolate (issue 51, point 3): the lines figure carries what dashboard/chart_hover.py's script
looks for (the marker, each label's side and word, each line's head, a word's lines drawn at its
height), the heatmaps it outlines are over categories, and the script is fixed text mounted by the app.
The script itself runs in tests/e2e/test_hover_isolate_browser.py."""

from __future__ import annotations

import re

import numpy as np

from dashboard import chart_hover
from dashboard.charts.explore import head_heatmap
from dashboard.charts.heatmap import matrix_heatmap
from dashboard.charts.lines import ISOLATE, lines_figure
from tests.dashboard.harness import ROOT

WORDS = ["the", "cat", "<b>sat</b>", "%{x}"]


def _attention(n_heads: int, n_queries: int, n_keys: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.dirichlet(np.ones(n_keys), size=(n_heads, n_queries)).astype(np.float32)


def _labels(fig, side: str):
    return [t for t in fig.data if (t.meta or {}).get("words") == side]


def test_lines_figure_is_marked_for_the_script():
    fig = lines_figure(_attention(3, 4, 4), WORDS, shown_heads=[1])
    assert fig.layout.meta == {"isolate": ISOLATE}
    for side in ("query", "key"):
        (labels,) = _labels(fig, side)
        assert list(labels.customdata) == [0, 1, 2, 3]  # each label's word index
        assert list(-labels.y) == [0, 1, 2, 3]  # drawn at height -i, which the script reads back
    heads = {t.meta["head"] for t in fig.data if t.meta and "head" in t.meta}
    assert heads == {0, 1, 2}  # hidden heads too: a legend click draws them, and they isolate as well


def test_each_line_is_drawn_from_its_query_to_its_key():
    """The script tells a line's words by its ends' heights: query i at -i on the left, key j at -j
    on the right, the same numbers select_lines kept."""
    attention = _attention(1, 3, 5)
    fig = lines_figure(attention, WORDS[:3], key_labels=["a", "b", "c", "d", "e"], min_weight=0.0)
    pairs = set()
    for trace in fig.data:
        if (trace.meta or {}).get("head") == 0:
            y = np.asarray(trace.y, dtype=float)
            pairs |= {(int(-q), int(-k)) for q, k in zip(y[0::3], y[1::3], strict=True)}
            assert list(np.asarray(trace.x, dtype=float)[:2]) == [0.0, 1.0]
    assert pairs == {(q, k) for q in range(3) for k in range(5)}
    assert list(_labels(fig, "key")[0].customdata) == [0, 1, 2, 3, 4]  # a cross-attention's keys


def test_heatmaps_outlined_on_hover_are_over_categories():
    """The row and column outline is drawn on heatmaps whose two axes are categories."""
    w = np.full((3, 3), 1 / 3)
    for fig in (head_heatmap(w, WORDS[:3]), matrix_heatmap(w, WORDS[:3], WORDS[:3])):
        assert fig.layout.xaxis.type == "category" and fig.layout.yaxis.type == "category"
        assert fig.data[0].type == "heatmap"


def test_script_is_fixed_and_mounted_once_per_run():
    script = chart_hover._JS
    assert f'=== "{ISOLATE}"' in script and chart_hover.BAND_EDGE in script
    assert not re.search(r"%\(\w+\)s", script)  # every placeholder filled, nothing else formatted in
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script  # labels stay text
    app = (ROOT / "dashboard" / "app.py").read_text()
    assert app.count("chart_hover.isolate_ui()") == 1
