"""Compare's patching sentences (dashboard/views/compare/patch_said.py) against the numbers they state,
on hand-made grids: heads that carry the difference or none, heads that push back, the head with the
clearest attention, whether the answer flips, and the causal trace's stretches."""

from __future__ import annotations

import numpy as np

from dashboard.views.compare.patch_said import Link, heads_statement, trace_statement, values_statement

GRID = np.array([[0.02, 0.45, -0.30], [0.12, 0.05, 0.01]])  # (2 layers, 3 heads)


def test_the_heads_that_carry_it_are_counted_and_the_largest_named():
    said = heads_statement(GRID, None)
    assert "**2 heads** restore at least 10% of the difference each, in layers 1–2" in said
    assert "**layer 1, head 2**, restores **45%**" in said
    assert "1 head pushes the other way (most: layer 1, head 3, -30%)" in said


def test_no_head_alone_says_the_difference_is_spread():
    said = heads_statement(np.array([[0.05, 0.08], [0.02, -0.01]]), None)
    assert "No single head restores 10% of the difference" in said
    assert "layer 1, head 2, 8%" in said
    assert "push" not in said


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
