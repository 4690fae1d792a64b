"""How the matrix heatmaps make room for their labels: how many maps share a row (learn's "All heads"),
column labels slanted steeply enough to clear each other, and room for the last one.
The browser checks the result on screen (tests/e2e/test_layout.py); these pin the rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.charts.heatmap import PAGE, PRESENTER, maps_per_row, matrix_heatmap

LETTERS = list("<thecatsatonthemat")  # 18 tokens: a sentence in the letter model
PIECES = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]


@pytest.mark.parametrize(
    ("n_maps", "labels", "most", "expected"),
    [
        (4, LETTERS, 4, 2),  # four in a row would be about 75 px wide each
        (4, LETTERS * 3, 4, 1),  # 54 letters: one map a row, as wide as the page
        (12, PIECES, 3, 3),  # BERT's 12 heads of a short sentence: four rows of three
        (2, list("abcdef"), 4, 2),  # the toy model's two heads side by side
    ],
)
def test_maps_share_a_row_while_their_columns_stay_readable(n_maps, labels, most, expected):
    assert maps_per_row(n_maps, labels, len(labels), most) == expected


def test_a_projector_sets_at_least_as_many_maps_in_a_row_as_the_laptop():
    on = {sizing: maps_per_row(4, LETTERS, len(LETTERS), 4, sizing) for sizing in (PAGE, PRESENTER)}
    assert on[PRESENTER] >= on[PAGE]


def test_crowded_column_labels_are_slanted_steeply_enough_to_clear_each_other():
    # Plotly prints every k-th label of a crowded category axis, at least round(1.2 em) apart; two
    # labels slanted at angle a clear each other when that pitch times sin(a) is at least one em
    labels = [f"t{i}" for i in range(51)]
    layout = matrix_heatmap(np.eye(51), labels, labels, share=0.5, show_colorbar=False).layout
    assert round(1.2 * PAGE.font) * math.sin(math.radians(abs(layout.xaxis.tickangle))) >= PAGE.font
    assert layout.xaxis.dtick is None  # Plotly's own thinning, which the angle was chosen for


def test_the_last_slanted_label_has_room_to_the_right_of_the_cells():
    labels = [*("abcdefghijklmnop"), "[SEP]"]
    layout = matrix_heatmap(np.eye(17), labels, labels, share=1 / 3, show_colorbar=False).layout
    assert layout.xaxis.tickangle != 0
    assert layout.margin.r >= 0.5 * PAGE.label_char_px * len("[SEP]") - 1  # cos 60° of its width
