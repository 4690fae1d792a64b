"""Shared pieces of the benchmarks: the result row, timing, and the table printer."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class Row:
    benchmark: str  # what was measured, e.g. "learn page rerun, 12 tokens"
    value: float  # the measured figure (median where repeated)
    unit: str  # "ms", "s", "MB", "x"
    target: float | None = None  # the bound, when it has one
    lower_is_better: bool = True
    note: str = ""

    @property
    def meets(self) -> str:
        if self.target is None:
            return ""
        ok = self.value <= self.target if self.lower_is_better else self.value >= self.target
        return "yes" if ok else "NO"


def median_time(fn: Callable[[], object], repeats: int = 15, warmup: int = 2) -> float:
    """Median wall time of fn() in seconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_over(fn: Callable[[object], object], inputs) -> float:
    """Median wall time of fn(item), once for each item of inputs (a new input each call)."""
    times = []
    for item in inputs:
        start = time.perf_counter()
        fn(item)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed_run(at) -> float:
    """Seconds one AppTest run takes (the server's script runner: widgets, figures, serialisation),
    checked to have raised nothing and shown no error."""
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not errors, errors
    return elapsed


def format_table(rows: list[Row]) -> str:
    """A Markdown table, ready to paste into the README."""
    lines = ["| benchmark | measured | target | met | note |", "|---|---:|---:|:-:|---|"]
    for r in rows:
        bound = "" if r.target is None else f"{'≤' if r.lower_is_better else '≥'} {r.target:g} {r.unit}"
        lines.append(f"| {r.benchmark} | {r.value:.3g} {r.unit} | {bound} | {r.meets} | {r.note} |")
    return "\n".join(lines)


# A CPU-bound loop in a process of its own: what a lecturer's laptop runs beside the app (slides, a
# call). Pure Python, so it takes a whole core without touching the BLAS or the memory bus much.
BUSY_LOOP = "while True:\n    pass\n"


@contextlib.contextmanager
def cpu_neighbours(n: int) -> Iterator[None]:
    """n CPU-bound processes running beside the block (n = 0: none), stopped after it. The issue's
    "under load" figures run the benchmark with two of them on this 2-core machine."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]
    try:
        if procs:
            time.sleep(1.0)  # both spinning before the first measurement
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def load_note() -> str:
    """The 1-minute load average, for a row's note (the benchmark's own processes included)."""
    return f"load {os.getloadavg()[0]:.2f}"
