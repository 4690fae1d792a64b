"""Training a small GPT-2 from scratch in NumPy (core/train), with the default settings (2 blocks, 4
heads, width 32, context 64, batch 32):

- steps per second: Trainer.train_step (forward, the hand-written backward, AdamW) over 50 steps
  after 5 warm-up steps; the median step time, inverted;
- time to the heads: a full default run per seed, the training time (snapshots excluded) until the
  probe's best layer-2 prefix-matching score passes 0.4 and the repeats' loss is under half the
  first occurrences' (both at one snapshot, every 25 steps); the issue's target is 60 s;
- memory: the peak of NumPy's allocations in a 100-step run (tracemalloc), and the process's peak RSS.

    python -m bench --only train
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import Row

TARGET_S = 60.0
INDUCTION, LOSS_RATIO = 0.4, 0.5


def _step_time(steps: int) -> float:
    from core.train.trainer import Trainer, TrainSettings

    trainer = Trainer(replace(TrainSettings(), steps=steps + 5))
    for _ in range(5):
        trainer.train_step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        trainer.train_step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_to_heads(seed: int) -> tuple[float | None, int | None, float]:
    """(training seconds, step) where both marks are first met, or None; and the final best score."""
    from core.train.trainer import Trainer, TrainSettings

    trainer = Trainer(replace(TrainSettings(), seed=seed))
    while not trainer.done:
        for snap in trainer.run(n_steps=trainer.settings.record_every):
            if snap.induction[1:].max() > INDUCTION and snap.loss_repeat < LOSS_RATIO * snap.loss_first:
                return snap.seconds, snap.step, float(snap.induction[1:].max())
    return None, None, float(trainer.snapshots[-1].induction[1:].max())


def _numpy_peak_mb() -> float:
    """A run of 100 steps with snapshots under tracemalloc (apart: tracing slows every allocation)."""
    from core.train.trainer import Trainer, TrainSettings

    tracemalloc.start()
    Trainer(replace(TrainSettings(), steps=100)).run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def _peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run(quick: bool = False) -> list[Row]:
    load = Path("/proc/loadavg").read_text().split()[0]
    step = _step_time(20 if quick else 50)
    rows = [
        Row(
            "train: steps per second, default settings",
            1 / step,
            "steps/s",
            note=f"median step {1e3 * step:.1f} ms (forward, backward, AdamW); load {load}",
        )
    ]
    seeds = (0,) if quick else (0, 1, 2)
    results = [_time_to_heads(seed) for seed in seeds]
    for seed, (seconds, at_step, best) in zip(seeds, results, strict=True):
        rows.append(
            Row(
                f"train: time to an induction head (> {INDUCTION}) and repeats' loss < half, seed {seed}",
                float("nan") if seconds is None else seconds,
                "s",
                target=TARGET_S,
                note=f"step {at_step}; best layer-2 score then {best:.2f}; training time, snapshots excluded"
                if seconds is not None
                else f"not within the default 600 steps (best score {best:.2f})",
            )
        )
    reached = [r[0] for r in results if r[0] is not None]
    if reached:
        rows.append(
            Row(
                "train: time to the heads, median over seeds",
                float(np.median(reached)),
                "s",
                target=TARGET_S,
                note=f"{len(reached)} of {len(seeds)} seeds reached both marks",
            )
        )
    rows.append(Row("train: peak NumPy allocations, 100 steps", _numpy_peak_mb(), "MB", note="tracemalloc"))
    rows.append(Row("train: process peak RSS (imports, runs)", _peak_rss_mb(), "MB", note="VmHWM"))
    return rows
