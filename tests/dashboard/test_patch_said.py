"""Compare's patching sentences (dashboard/views/compare/patch_said.py) against the numbers they state,
on hand-made grids: heads that carry the difference or none, heads that push back (both counted on
the grid as it prints), the head with the clearest attention, a share past 100% or below 0 explained
where it is stated, whether the answer flips, and the causal trace's stretches."""

from __future__ import annotations

import numpy as np

from dashboard.charts.patching import DECIMALS
from dashboard.content.patching import BELOW_ZERO, OVERSHOOT
from dashboard.views.compare.patch_said import Link, heads_statement, trace_statement, values_statement

GRID = np.array([[0.02, 0.45, -0.30], [0.12, 0.05, 0.01]])  # (2 layers, 3 heads)


def test_the_heads_that_carry_it_are_counted_and_the_largest_named():
    said = heads_statement(GRID, None)
    assert (
        "**2 heads** restore at least 10% of the difference each (cells of 0.10 or more), in layers 1–2"
        in said
    )
    assert "**layer 1, head 2**, restores **45%**" in said
    assert (
        "**1 head** moves the answer the other way by at least 10% of the difference each (cells of "
        "−0.10 or less; the most, layer 1, head 3, -30%)."
    ) in said
    assert said.endswith(BELOW_ZERO) and OVERSHOOT not in said


def test_heads_are_counted_as_the_grid_prints_them():
    """The counts are checkable against the grid: every cell printed 0.10 or more (−0.10 or less) is
    counted, whatever its third decimal, and no other."""
    rng = np.random.default_rng(3)
    grid = rng.uniform(-0.3, 0.5, size=(6, 12))
    grid[0, :4] = [0.0953, -0.0953, 0.0949, -0.0949]  # printed 0.10, −0.10, 0.09, −0.09
    printed = np.array([[float(f"{v:.{DECIMALS}f}") for v in row] for row in grid])
    said = heads_statement(grid, None)
    carry, back = int((printed >= 0.10).sum()), int((printed <= -0.10).sum())
    assert f"**{carry} heads** restore at least 10%" in said
    assert f"**{back} heads** move the answer the other way by at least 10%" in said
    low = np.unravel_index(np.argmin(grid), grid.shape)
    assert f"the most, layer {low[0] + 1}, head {low[1] + 1}, {grid[low]:.0%})" in said


def test_a_share_past_either_end_is_explained_where_it_is_stated():
    over = heads_statement(np.array([[1.17, 0.02], [0.3, 0.05]]), None)
    assert "restores **117%**" in over and over.endswith(OVERSHOOT) and BELOW_ZERO not in over
    both = heads_statement(np.array([[1.17, -0.4], [0.3, 0.05]]), None)
    assert both.endswith(OVERSHOOT + " " + BELOW_ZERO)
    link_below = heads_statement(np.array([[0.5, -0.05], [0.3, 0.05]]), Link("it", "trophy", 0, 1, 0.6))
    assert "restores **-5%** of the difference" in link_below and link_below.endswith(BELOW_ZERO)
    inside = heads_statement(np.array([[0.5, 0.02], [0.3, -0.05]]), None)
    assert OVERSHOOT not in inside and BELOW_ZERO not in inside  # −5%: in the grid, not stated
    trace = trace_statement(np.array([[1.0, 0.0], [1.08, 0.1]]), ["a", "b"])
    assert "(100%–108%)" in trace and trace.endswith(OVERSHOOT)


def test_no_head_alone_says_the_difference_is_spread():
    said = heads_statement(np.array([[0.05, 0.08], [0.02, -0.01]]), None)
    assert "No single head restores 10% of the difference" in said
    assert "layer 1, head 2, 8%" in said
    assert "other way" not in said


def test_the_clearest_attention_head_is_checked_against_its_effect():
    weak = heads_statement(GRID, Link("it", "trophy", 1, 1, 0.62))  # restores 0.05
    assert "**layer 2, head 2** (0.62 of its row), restores **5%**" in weak
    assert "looking at “trophy” is not the same as carrying the difference" in weak
    strong = heads_statement(GRID, Link("it", "trophy", 0, 1, 0.5))
    assert "restores **45%** of the difference: its attention and its effect agree." in strong


def test_values_say_whether_the_answer_flips():
    means = ("A wins", "B wins")
    assert "The answer flips: in sentence 1 A wins, in sentence 2 B wins." in values_statement(
        0.4, -0.2, means
    )
    kept = values_statement(-0.117, -0.106, means)
    assert "a change of +0.011" in kept and "in both sentences B wins" in kept
    assert "flip" not in values_statement(0.0, 0.5, None)


def test_the_trace_names_each_stretch_of_layers_by_its_token():
    grid = np.array([[1.0, 0.0], [0.9, 0.1], [0.2, 0.7]])
    said = trace_statement(grid, ["Ġlarge", " it"])
    assert said == (
        "Where the difference travels: embeddings to after layer 1: at “Ġlarge” (90%–100%); "
        "after layer 2: at “it” (70%–70%)."
    )
