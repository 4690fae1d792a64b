"""What a translator's training did, measured from its record, for the train page to state:

- when a cross-attention head first aligned (its alignment accuracy, core/translate/measures.py, at
  ALIGNED_MIN or more), against when the translations were right (held-out exact match at RIGHT_MIN
  or more), and which came first, by how many steps;
- how far the heads had aligned while most translations were still wrong (the last snapshot with an
  exact match under EARLY_EXACT): a head can find where to look before the words come out right;
- when the loss had fallen to half its first value;
- which head aligns best at the measured step, and which heads do not align (under WEAK_MAX).

Everything is measured up to one snapshot (the last by default), so a replay can state what was
known by the step it shows. Pure: arrays in, numbers out.

Letters: S snapshots, L decoder layers, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.translate.record import TranslationRecord

__all__ = ["ALIGNED_MIN", "EARLY_EXACT", "RIGHT_MIN", "WEAK_MAX", "Findings", "Mark", "measure"]

ALIGNED_MIN = 0.9  # a head aligns: its largest weight is on a gold source word for 9 words in 10
RIGHT_MIN = 0.9  # the translations are right: 9 held-out sentences in 10 word for word
EARLY_EXACT = 0.5  # "still mostly wrong": fewer than half the held-out sentences right
WEAK_MAX = 0.5  # a head that does not align: its largest weight on a gold word for under half


@dataclass(frozen=True)
class Mark:
    """When a curve first reached its mark, up to the measured step."""

    step: int | None  # the first snapshot's step at the mark, None when it never got there
    best: float  # the curve's best value so far (the highest; the lowest for a loss)
    best_step: int  # ... and the step where it was first reached


@dataclass(frozen=True)
class Findings:
    step: int  # the step measured at
    aligned: Mark  # the best head's alignment (per snapshot, over every head) reaching ALIGNED_MIN
    aligned_head: tuple[int, int] | None  # the head that reached it first (layer, head), 0-indexed
    right: Mark  # exact match reaching RIGHT_MIN
    order: str  # "aligned first", "right first", "together", "only aligned", "only right", "neither"
    gap: int  # steps between the two marks when both were reached, else 0
    early: tuple[int, float, float] | None  # (step, exact match, best alignment) at the last
    # snapshot with exact match under EARLY_EXACT, when a later one is at or above it
    loss_first: float  # the loss before training
    loss_now: float  # ... and at the measured step
    halved: Mark  # the loss at or under half its first value
    best_head: tuple[int, int, float]  # (layer, head, accuracy) of the best head at the measured step
    weak: tuple[tuple[int, int, float], ...]  # heads under WEAK_MAX there, in layer and head order


def _mark(values: np.ndarray, steps: np.ndarray, reached: np.ndarray, lowest: bool = False) -> Mark:
    """values (S,), reached (S,) bool: where the mark was first reached, and the best value."""
    k = int(np.argmin(values) if lowest else np.argmax(values))
    first = int(steps[int(np.argmax(reached))]) if reached.any() else None
    return Mark(step=first, best=float(values[k]), best_step=int(steps[k]))


def _order(aligned: Mark, right: Mark) -> tuple[str, int]:
    if aligned.step is not None and right.step is not None:
        gap = abs(aligned.step - right.step)
        if gap == 0:
            return "together", 0
        return ("aligned first" if aligned.step < right.step else "right first"), gap
    if aligned.step is not None:
        return "only aligned", 0
    return ("only right" if right.step is not None else "neither"), 0


def _early(exact: np.ndarray, best: np.ndarray, steps: np.ndarray) -> tuple[int, float, float] | None:
    """The last snapshot with exact match under EARLY_EXACT before the first at or above it."""
    above = exact >= EARLY_EXACT
    if not above.any() or above[0]:
        return None
    k = int(np.argmax(above)) - 1
    return int(steps[k]), float(exact[k]), float(best[k])


def measure(record: TranslationRecord, at: int | None = None) -> Findings:
    """The findings up to snapshot index `at` (the last by default; negative counts from the end)."""
    n = len(record.steps)
    at = n - 1 if at is None else min(max(at + n if at < 0 else at, 0), n - 1)
    steps = np.asarray(record.steps[: at + 1])
    loss, exact = np.asarray(record.loss[: at + 1]), np.asarray(record.exact_match[: at + 1])
    heads = np.asarray(record.alignment[: at + 1])  # (S', L, H)
    best = heads.reshape(len(steps), -1).max(axis=1)  # (S',) the best head at each snapshot
    aligned = _mark(best, steps, best >= ALIGNED_MIN)
    aligned_head = None
    if aligned.step is not None:
        k = int(np.argmax(best >= ALIGNED_MIN))
        layer, head = np.unravel_index(int(np.argmax(heads[k])), heads[k].shape)
        aligned_head = (int(layer), int(head))
    right = _mark(exact, steps, exact >= RIGHT_MIN)
    order, gap = _order(aligned, right)
    now = heads[-1]
    layer, head = np.unravel_index(int(np.argmax(now)), now.shape)
    weak = tuple((int(lay), int(hd), float(now[lay, hd])) for lay, hd in np.argwhere(now < WEAK_MAX).tolist())
    return Findings(
        step=int(steps[-1]),
        aligned=aligned,
        aligned_head=aligned_head,
        right=right,
        order=order,
        gap=gap,
        early=_early(exact, best, steps),
        loss_first=float(loss[0]),
        loss_now=float(loss[-1]),
        halved=_mark(loss, steps, loss <= loss[0] / 2, lowest=True),
        best_head=(int(layer), int(head), float(now[layer, head])),
        weak=weak,
    )
