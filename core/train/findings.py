"""What a training run did, measured from its record and its final model, for the page to state:

- the drop: the window of about WINDOW_STEPS steps where the loss on repeats fell the most, and
  whether the best prefix-matching score (in a layer after the first) rose by RISE_MIN or more in
  it, its own fastest rise starting within a window of it: the heads and the loss changing
  together (Olsson et al. 2022's phase change);
- the previous-token head: the first layer's head with the highest previous-token score at the end;
- the induction heads: the later layers' heads whose prefix-matching score at the end is at least
  core/measures/induction.py's INDUCTION_MIN, the rule explore's induction view uses too;
- ablation: the loss on repeats (held-out sequences) with each head cut in turn, through the NumPy
  engine's `ablate`, against the loss with every head in place.

Thresholds say when a score counts as a head doing the job; below them the page says no head does.

Letters: S snapshots, L layers, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.train.data import Batch
from core.train.model import cross_entropy
from core.train.record import TrainingRecord

__all__ = ["PREVIOUS_MIN", "Drop", "best_head", "fastest_drop", "repeat_loss_with_ablation"]

PREVIOUS_MIN = 0.5  # a previous-token head puts at least half its weight on the token just before
RISE_MIN = 0.1  # a rise of the best prefix-matching score over the drop's window that counts as one
WINDOW_STEPS = 100  # the span over which falls and rises are compared (snapshots are noisy one by one)


@dataclass(frozen=True)
class Drop:
    start: int  # the window's first step
    end: int  # ... and its last
    loss_before: float  # the repeats' loss at start
    loss_after: float  # ... and at end
    induction_before: float  # the best later-layer prefix-matching score at start (nan for 1 layer)
    induction_after: float  # ... and at end
    rise_start: int  # the window where that score rose the most (start and end with one layer)
    rise_end: int
    with_induction: bool  # the score rose by RISE_MIN in this window, its fastest rise near it


def _best_later(record: TrainingRecord) -> np.ndarray:
    """(S,) the best prefix-matching score among the heads after the first layer (nan with one layer)."""
    later = record.induction[:, 1:]
    return (
        later.reshape(len(record.steps), -1).max(axis=1) if later.size else np.full(len(record.steps), np.nan)
    )


def _window(record: TrainingRecord) -> int:
    """Snapshots per window: about WINDOW_STEPS of training, a single interval for short records."""
    intervals = len(record.steps) - 1
    per = max(1, int(np.median(np.diff(record.steps))))
    return max(1, min(round(WINDOW_STEPS / per), intervals // 4))


def fastest_drop(record: TrainingRecord) -> Drop | None:
    """The window where the repeats' loss fell the most, or None before two snapshots (or when it
    never fell). A window, not one interval, so the first quick fall (from guessing any letter to
    guessing one already seen) does not hide the longer fall that copying brings."""
    if len(record.steps) < 2:
        return None
    w = _window(record)
    fall = record.loss_repeat[:-w] - record.loss_repeat[w:]  # (S - w,) nats over each window
    if not (fall > 0).any():
        return None
    k = int(np.argmax(fall))
    best = _best_later(record)
    gains = best[w:] - best[:-w]
    fastest = int(np.argmax(gains)) if np.isfinite(gains).all() else -1
    together = fastest >= 0 and bool(gains[k] >= RISE_MIN) and abs(fastest - k) <= w
    return Drop(
        start=int(record.steps[k]),
        end=int(record.steps[k + w]),
        loss_before=float(record.loss_repeat[k]),
        loss_after=float(record.loss_repeat[k + w]),
        induction_before=float(best[k]),
        induction_after=float(best[k + w]),
        rise_start=int(record.steps[fastest if fastest >= 0 else k]),
        rise_end=int(record.steps[(fastest if fastest >= 0 else k) + w]),
        with_induction=together,
    )


def best_head(scores: np.ndarray, layers: range, minimum: float) -> tuple[int, int, float] | None:
    """(layer, head, score) of the highest score (L, H) within `layers`, or None below `minimum`."""
    rows = [layer for layer in layers if layer < scores.shape[0]]
    if not rows:
        return None
    part = scores[rows]
    layer, head = np.unravel_index(int(np.argmax(part)), part.shape)
    score = float(part[layer, head])
    return (rows[layer], int(head), score) if score >= minimum else None


def _repeats_loss(engine, final_hidden: np.ndarray, targets: np.ndarray, repeat: np.ndarray) -> float:
    """The summed cross-entropy (nats) of the repeated targets, from (T, D) states after ln_f."""
    logits = engine.unembed(final_hidden).astype(np.float64)  # (T, V)
    return float(cross_entropy(logits, targets)[0][repeat].sum())


def repeat_loss_with_ablation(engine, batch: Batch) -> tuple[float, np.ndarray]:
    """(the repeats' mean loss, (L, H) the same with each head ablated) over the batch's sequences.
    Each sequence runs once whole; a head cut in layer l reruns only layers l.. (engine.layers_from),
    from the hidden state entering it, which the cut cannot change."""
    layers, heads = engine.n_layers, engine.n_heads
    total, cut, count = 0.0, np.zeros((layers, heads)), 0
    for inputs, targets, repeat in zip(batch.inputs, batch.targets, batch.repeat, strict=True):
        whole = engine.forward(inputs)
        total += _repeats_loss(engine, whole.hidden_states[-1], targets, repeat)
        for layer in range(layers):
            for head in range(heads):
                out = engine.layers_from(layer, whole.hidden_states[layer], ablate=[(layer, head)])
                cut[layer, head] += _repeats_loss(engine, out.hidden_states[-1], targets, repeat)
        count += int(repeat.sum())
    count = max(count, 1)
    return total / count, cut / count
