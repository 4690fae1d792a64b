"""What an activation-patching grid says, as numbers a page can put into words (core/measures/patching.py
makes the grids): the heads that carry most of a minimal pair's difference, the layers they sit in,
the head whose attention links the focus word to a target most clearly and what it restores, and, from
the positions grid (causal tracing), where along the layers the difference is carried.

Restored fractions: 0 = the patch brings nothing of the difference across, 1 = all of it; a patch may
overshoot (> 1) or push the other way (< 0). Layers, heads and positions are 0-indexed here.

Letters: L layers, H heads, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CARRIES", "Carrier", "Stretch", "attention_between", "carriers", "clearest_link", "stretches"]

CARRIES = 0.10  # a component that restores at least this fraction is named as carrying the difference


@dataclass(frozen=True)
class Carrier:
    """One component and the fraction of the difference it restores alone."""

    layer: int
    index: int  # the head (heads grid) or the position (positions grid)
    restored: float


def carriers(restored: np.ndarray, least: float = CARRIES) -> list[Carrier]:
    """The cells of an (L, H) or (L, T) grid that restore at least `least`, largest first."""
    grid = np.asarray(restored, np.float64)
    rows, cols = np.nonzero(grid >= least)
    cells = [Carrier(int(r), int(c), float(grid[r, c])) for r, c in zip(rows, cols, strict=True)]
    return sorted(cells, key=lambda c: (-c.restored, c.layer, c.index))


def attention_between(attentions: np.ndarray, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    """(L, H): the weight from one word (token rows start..stop, their mean: the word's pieces share
    it) to another (columns start..stop, summed: all of the word's pieces), in every head."""
    weights = np.asarray(attentions, np.float64)[:, :, rows[0] : rows[1], cols[0] : cols[1]]  # (L, H, r, c)
    return weights.sum(axis=-1).mean(axis=-1)


def clearest_link(link: np.ndarray) -> tuple[int, int]:
    """The (layer, head) whose attention from the focus word to the target is largest."""
    layer, head = np.unravel_index(int(np.argmax(link)), link.shape)
    return int(layer), int(head)


@dataclass(frozen=True)
class Stretch:
    """Consecutive layers at whose input the same position carries the most of the difference."""

    first: int  # the layer whose input is patched, 0-indexed (0: the embeddings)
    last: int
    position: int
    low: float  # the smallest and largest restored fraction at that position across the stretch
    high: float


def stretches(restored: np.ndarray) -> list[Stretch]:
    """An (L, T) positions grid read layer by layer: the position whose patch restores most, with the
    layers grouped where that position stays the same (causal tracing's "where the difference is")."""
    grid = np.asarray(restored, np.float64)
    best = np.argmax(grid, axis=1)  # (L,)
    found: list[Stretch] = []
    start = 0
    for layer in range(1, len(best) + 1):
        if layer == len(best) or best[layer] != best[start]:
            values = grid[start:layer, best[start]]
            found.append(
                Stretch(start, layer - 1, int(best[start]), float(values.min()), float(values.max()))
            )
            start = layer
    return found
