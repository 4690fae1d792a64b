"""Training the translator from scratch in NumPy (core/translate), default settings (BART layout,
2 + 2 layers, 4 heads, width 64, batch 32 pairs):

- steps per second: Translator.train_step (forward, the hand-written backward, AdamW) over 50 steps
  after 5 warm-up steps; the median step time, inverted;
- per seed: the training time (snapshots excluded) until held-out exact match reaches 0.9, and until
  the best cross-attention head's alignment accuracy reaches 0.9 (every 25 steps), and the whole
  command's wall time (`python -m core train --task translate`, snapshots and saving included); the
  issue's target is 120 s for the command;
- memory: the largest peak RSS of the three commands (getrusage of the finished child processes).

    python -m bench --only translate
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
TARGET_S, MARK = 120.0, 0.9


def _step_time(steps: int) -> float:
    from core.translate.trainer import TranslateSettings, Translator

    run = Translator(replace(TranslateSettings(), steps=steps + 5, record_every=10_000))
    for _ in range(5):
        run.train_step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run.train_step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _command(seed: int) -> tuple[float, dict]:
    """The command's wall time and its record."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "core", "train", "--task", "translate", "--seed", str(seed), "--out", out],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        return time.perf_counter() - start, json.loads(done.stdout)


def _first(record: dict, values: list[float]) -> tuple[float | None, int | None]:
    """(training seconds, step) of the first snapshot whose value reaches MARK."""
    for step, seconds, value in zip(record["steps"], record["seconds"], values, strict=True):
        if value >= MARK:
            return seconds, step
    return None, None


def _rows_for(seed: int, wall: float, record: dict) -> list[Row]:
    best = [float(np.max(a)) for a in record["alignment"]]
    rows = []
    for what, values in (("exact match", record["exact_match"]), ("alignment (best head)", best)):
        seconds, step = _first(record, values)
        rows.append(
            Row(
                f"translate: training time to held-out {what} ≥ {MARK}, seed {seed}",
                float("nan") if seconds is None else seconds,
                "s",
                note=f"step {step}; final {values[-1]:.3f}"
                if step is not None
                else f"never; final {values[-1]:.3f}",
            )
        )
    rows.append(
        Row(
            f"translate: the command, seed {seed} (train, snapshots, save)",
            wall,
            "s",
            target=TARGET_S,
            note=f"final exact match {record['exact_match'][-1]:.3f}, best head's alignment {best[-1]:.3f}",
        )
    )
    return rows


def run(quick: bool = False) -> list[Row]:
    load = Path("/proc/loadavg").read_text().split()[0]
    step = _step_time(20 if quick else 50)
    rows = [
        Row(
            "translate: steps per second, default settings",
            1 / step,
            "steps/s",
            note=f"median step {1e3 * step:.1f} ms (forward, backward, AdamW); load {load}",
        )
    ]
    for seed in (0,) if quick else (0, 1, 2):
        rows += _rows_for(seed, *_command(seed))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
    rows.append(Row("translate: the command's peak RSS, largest of the seeds", peak, "MB"))
    return rows
