"""Nothing is told by colour alone (issue 50, point 2; WCAG 2.1, 1.4.1): the picked cell has a badge
besides its red box, the gold alignment a dashed box named in a legend, each head of the lines view a
dash, each head's training curve a marker symbol, each cost curve a dash and a symbol, the chosen
next token a hatch, and a negative value its minus sign in its printed number and hover. Pure builders, no
Streamlit, no browser; the colours themselves are measured in test_colour_vision.py."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from core.cost.price import Curve
from dashboard.charts.compare import difference_map
from dashboard.charts.cost import price_chart, timing_chart
from dashboard.charts.decoder import next_token_bars
from dashboard.charts.explore import head_heatmap, head_weight_grid
from dashboard.charts.heatmap import OUTLINE_COLOR, matrix_heatmap
from dashboard.charts.lines import HEAD_COLOURS, lines_figure
from dashboard.charts.marks import GOLD_DASH, GOLD_NAME, gold_outlines, head_dash, head_symbol
from dashboard.charts.patching import restored_grid
from dashboard.charts.train import training_curves
from dashboard.charts.translate import cross_attention_grid, translation_curves
from tests.dashboard.test_colour_vision import confused_heads

WORDS = ["the", "cat", "sat", "down"]
RNG = np.random.default_rng(0)


def _attention(*shape: int) -> np.ndarray:
    x = RNG.random(shape)
    return x / x.sum(-1, keepdims=True)


def _badges(fig) -> list[tuple[float, float]]:
    return [(a.x, a.y) for a in fig.layout.annotations if a.name == "picked"]


def test_the_picked_cell_has_a_badge_besides_its_red_box():
    fig = head_heatmap(_attention(4, 4), WORDS, highlight=(1, 2))
    assert [s.line.color for s in fig.layout.shapes] == [OUTLINE_COLOR]
    assert _badges(fig) == [(1.5, 0.5)]  # on the cell's top-left corner: column 2, row 1
    assert not _badges(head_heatmap(_attention(4, 4), WORDS))
    grid = head_weight_grid(RNG.random((3, 4)), "it", "cat", selected=(2, 1))
    assert _badges(grid) == [(0.5, 1.5)]


def test_outlined_cells_of_a_signed_grid_are_badged_and_print_their_signs():
    """A red box on the diverging scale's red end is faint: the badge stays visible."""
    restored = np.array([[0.5, -0.25, 0.0], [1.2, 0.03, -0.9]])
    fig = restored_grid(restored, ["1", "2"], ["1", "2", "3"], title="t", axes=("layer", "head"),
                        bar_title="restored", outlined=[(1, 0), (0, 1)])  # fmt: skip
    assert sorted(_badges(fig)) == [(-0.5, 0.5), (0.5, -0.5)]
    printed = np.asarray(fig.data[0].text)
    assert printed[0, 0] == "0.50" and printed[0, 1] == "-0.25" and printed[1, 0] == "1.20"
    assert "%{z:.2f}" in fig.data[0].hovertemplate  # d3 prints the minus sign


def test_diverging_maps_print_the_sign_the_colour_shows():
    signed = matrix_heatmap(np.array([[0.5, -0.5]]), ["a"], ["b", "c"])
    assert list(np.asarray(signed.data[0].text)[0]) == ["0.5000", "-0.5000"]
    assert "%{z:.4f}" in signed.data[0].hovertemplate
    diff = difference_map(np.array([[0.2, -0.1], [0.0, 0.3]]), ["a", "b"], ["a", "c"], title="diff")
    assert "-0.10" in np.asarray(diff.data[0].text) and "%{z:.2f}" in diff.data[0].hovertemplate


def test_the_gold_alignment_is_dashed_and_named():
    links = [(0, 1), (1, 0)]
    fig = matrix_heatmap(_attention(2, 3), ["le", "chat"], ["the", "cat", "</s>"], probabilities=True,
                         shapes=gold_outlines(links))  # fmt: skip
    assert [s.line.dash for s in fig.layout.shapes] == [GOLD_DASH, GOLD_DASH]
    assert [s.name for s in fig.layout.shapes if s.showlegend] == [GOLD_NAME]  # named once
    assert fig.layout.legend.orientation == "h"  # under the chart, clear of the colour bar
    grid = cross_attention_grid(
        _attention(2, 2, 2, 3),
        ["le", "chat"],
        ["the", "cat", "</s>"],
        links,
        title="t",
        axis_titles=("fr", "en"),
    )
    assert len(grid.layout.shapes) == 2 * 2 * len(links)  # in every map
    assert {s.line.dash for s in grid.layout.shapes} == {GOLD_DASH}
    assert [s.name for s in grid.layout.shapes if s.showlegend] == [GOLD_NAME]


def test_lines_view_heads_differ_by_dash_and_name():
    n_heads = 12
    fig = lines_figure(_attention(n_heads, 4, 4), WORDS, token=1)
    dashes, names = defaultdict(set), {}
    for trace in fig.data:
        if trace.legendgroup:
            head = int(trace.legendgroup.removeprefix("head"))
            dashes[head].add(trace.line.dash)
            names[head] = trace.name
            assert trace.line.color == HEAD_COLOURS[head]
    assert {h: d for h, d in dashes.items()} == {h: {head_dash(h)} for h in range(n_heads)}
    assert names == {h: f"head {h + 1}" for h in range(n_heads)}  # the legend names each head
    for a, b in confused_heads(n_heads):
        assert dashes[a] != dashes[b], (a, b)
    queries = fig.data[-2]  # the picked token: bold, an arrowhead, not only red
    assert queries.text[1] == "<b>cat ▸</b>" and queries.text[0] == "the"


def test_training_curves_give_each_head_a_marker_symbol():
    steps, n = np.arange(5), 5
    fig = training_curves(
        steps, RNG.random(n), RNG.random(n), RNG.random((n, 2, 3)), RNG.random((n, 2, 3)), total_steps=5,
        titles=dict.fromkeys(["first", "repeat", "step", "loss", "previous", "induction", "title"], "x"),
    )  # fmt: skip
    heads = [t for t in fig.data if t.name and t.name.startswith("L")]
    assert heads and all(t.marker.symbol == head_symbol(int(t.name.split("H")[1]) - 1) for t in heads)
    titles = dict.fromkeys(
        ["loss", "best", "exact", "level", "step", "loss_axis", "score_axis", "title"], "x"
    )
    fig = translation_curves(steps, RNG.random(n), RNG.random(n), RNG.random((n, 2, 3)), total_steps=5,
                             titles=titles)  # fmt: skip
    heads = [t for t in fig.data if t.name and t.name.startswith("L")]
    assert len(heads) == 6 and len({(t.line.dash, t.marker.symbol) for t in heads}) == 6


def test_cost_curves_have_a_dash_and_a_symbol_each():
    curves = [Curve(f"c{i}", (8, 16, 32), (1e-3, 2e-3, 4e-3), (10, 20, 40)) for i in range(4)]
    fig = price_chart(curves, {}, title="t", memory_title="memory")
    looks = {(t.line.dash, t.marker.symbol) for t in fig.data}
    assert len(looks) == 4
    timing = timing_chart(curves[0], curves[1], "variant", title="t")
    assert timing.data[0].line.dash != timing.data[1].line.dash


def test_the_chosen_next_token_is_hatched():
    fig = next_token_bars(["a", "b", "c"], [0.5, 0.3, 0.2], title="t", x_title="p", chosen=1)
    assert list(fig.data[0].marker.pattern.shape) == ["", "/", ""]
