"""core/measures/patch_summary.py on hand-worked grids: which cells carry the difference, the weight
from one word to another, the clearest link, and the stretches of a causal trace."""

from __future__ import annotations

import numpy as np

from core.measures.patch_summary import (
    Carrier,
    Stretch,
    attention_between,
    carriers,
    clearest_link,
    stretches,
)


def test_carriers_are_the_cells_at_or_above_the_bar_largest_first():
    grid = np.array([[0.05, 0.10, -0.4], [0.6, 0.099, 0.3]])
    assert carriers(grid) == [Carrier(1, 0, 0.6), Carrier(1, 2, 0.3), Carrier(0, 1, 0.10)]
    assert carriers(-grid) == [Carrier(0, 2, 0.4)]  # the cells that push the other way
    assert carriers(np.zeros((2, 2))) == []


def test_attention_between_sums_the_target_pieces_and_averages_the_focus_pieces():
    attentions = np.zeros((1, 1, 4, 4))
    attentions[0, 0, 2] = [0.1, 0.2, 0.3, 0.4]
    attentions[0, 0, 3] = [0.4, 0.3, 0.2, 0.1]
    # focus = tokens 2..3 (two pieces), target = tokens 0..1: (0.1 + 0.2 + 0.4 + 0.3) / 2
    assert attention_between(attentions, (2, 4), (0, 2)) == np.array([[0.5]])
    assert attention_between(attentions, (2, 3), (3, 4)) == np.array([[0.4]])


def test_clearest_link_is_the_largest_weight():
    link = np.array([[0.1, 0.7], [0.69, 0.2]])
    assert clearest_link(link) == (0, 1)


def test_stretches_group_layers_by_the_position_that_restores_most():
    grid = np.array(
        [
            [0.0, 1.0, 0.0],  # layer 0: at position 1
            [0.1, 0.8, 0.2],  # layer 1: still position 1
            [0.0, 0.3, 0.6],  # layer 2: position 2
            [0.0, 0.0, 0.9],
            [0.7, 0.0, 0.1],  # layer 4: position 0
        ]
    )
    assert stretches(grid) == [
        Stretch(0, 1, 1, 0.8, 1.0),
        Stretch(2, 3, 2, 0.6, 0.9),
        Stretch(4, 4, 0, 0.7, 0.7),
    ]
