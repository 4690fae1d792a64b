"""Scoring heads on the probe while a model trains: how much each head looks at the previous token,
and how much it does prefix matching (Olsson et al. 2022), from its attention on one fixed sequence.

The probe is <s>, n letters, the same n letters again (core/train/data.py's probe_sequence):

    previous-token score  = mean over positions i >= 2 of the weight from i to i - 1
    prefix-matching score = mean over the copy's positions i = 1 + n + j of the weight from i to
                            2 + j, the position right after the earlier occurrence of i's letter

Letters: L layers, H heads, T = 1 + 2 n probe positions.
"""

from __future__ import annotations

import numpy as np

from core.measures.induction import prefix_matching_scores

__all__ = ["induction_scores", "previous_token_scores"]


def previous_token_scores(probs: np.ndarray) -> np.ndarray:
    """(L, H, T, T) attention on the probe -> (L, H): each head's mean weight on the token just before
    (from position 2 on: position 1's previous token is the start token, where idle heads rest)."""
    rows = np.arange(2, probs.shape[-1])
    return probs[:, :, rows, rows - 1].mean(axis=-1)


def induction_scores(probs: np.ndarray, length: int) -> np.ndarray:
    """(L, H, T, T) attention on the probe of two copies of `length` letters -> (L, H): each head's
    mean weight from the copy's letters to what followed their earlier occurrence."""
    return prefix_matching_scores(probs[:, :, 1:, 1:], length)  # without <s>: the layout it scores
