"""What attention costs, measured on this machine: time and peak memory of steps 3-6 (scores,
scaling, softmax, weighted sum: core.attention.attention_steps, the code the lessons show) at growing
lengths n, for one head and for a layer's H heads, beside the projections (Q, K, V and W^O: the
n·d² part); the exponent of each curve fitted on a log-log scale; the length where scoring starts to
cost more than projecting, from the measurements and from FLOP counts.

Inputs are random, of the model's width (seeded): the cost depends on the shapes, not the values.
Peak memory is tracemalloc's peak during the call (NumPy reports its arrays to it).

Letters: n tokens, D model width, H heads, d_k = D / H.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.attention import attention_steps, split_heads

__all__ = [
    "LENGTHS",
    "Curve",
    "crossover",
    "flop_crossover",
    "measure",
    "measure_curves",
    "weights_megabytes",
]

LENGTHS = tuple(2**i for i in range(4, 13))  # 16, 32, ..., 4096


@dataclass(frozen=True)
class Curve:
    """One measured curve: seconds and peak bytes at each length, and the fitted exponent."""

    name: str
    lengths: tuple[int, ...]
    seconds: tuple[float, ...]
    peak_bytes: tuple[int, ...]

    @property
    def exponent(self) -> float:
        """The slope of log(seconds) against log(n), least squares over the longer half of the
        lengths (at short lengths fixed overheads hide the growth)."""
        n = len(self.lengths)
        x = np.log(self.lengths[n // 2 :])
        y = np.log(self.seconds[n // 2 :])
        return float(np.polyfit(x, y, 1)[0])


def measure(fn: Callable[[], object], repeats: int = 3) -> tuple[float, int]:
    """(median seconds, peak bytes allocated) of fn()."""
    times, peak = [], 0
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return float(np.median(times)), peak


def _inputs(n: int, d_model: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d_model)).astype(np.float32)


def measure_curves(
    d_model: int,
    n_heads: int,
    lengths: Sequence[int] = LENGTHS,
    progress: Callable[[int, int], None] | None = None,
    seed: int = 0,
) -> list[Curve]:
    """Curves "one head", "H heads" (steps 3-6) and "projections" (X W^Q, X W^K, X W^V and W^O)."""
    rng = np.random.default_rng(seed)
    w = [(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(np.float32) for _ in range(4)]
    rows = {"one head": [], f"{n_heads} heads": [], "projections": []}
    for done, n in enumerate(lengths, start=1):
        x = _inputs(n, d_model, seed)
        q, k, v = (split_heads(x @ wi, n_heads) for wi in w[:3])  # (H, n, d_k)
        steps = (
            ("one head", lambda q=q, k=k, v=v: attention_steps(q[0], k[0], v[0])),
            (f"{n_heads} heads", lambda q=q, k=k, v=v: attention_steps(q, k, v)),
            ("projections", lambda x=x: [x @ wi for wi in w]),
        )
        for name, fn in steps:
            fn()  # once untimed: the first call of a size pays for page faults and thread start-up
            rows[name].append(measure(fn))
        if progress:
            progress(done, len(lengths))
    return [
        Curve(name, tuple(lengths), tuple(s for s, _ in found), tuple(b for _, b in found))
        for name, found in rows.items()
    ]


def crossover(attention: Curve, projections: Curve) -> float | None:
    """The length where the attention curve first costs more time than the projections,
    interpolated on the log-log scale; None when it never does within the lengths measured."""
    a, p = np.log(attention.seconds), np.log(projections.seconds)
    x = np.log(attention.lengths)
    above = np.flatnonzero(a > p)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(attention.lengths[0])
    gap0, gap1 = a[i - 1] - p[i - 1], a[i] - p[i]  # from <= 0 to > 0
    return float(np.exp(x[i - 1] + (x[i] - x[i - 1]) * gap0 / (gap0 - gap1)))


def flop_crossover(d_model: int) -> float:
    """Where the FLOPs of steps 3-6 (about 4 n² D: Q Kᵀ and the weighted sum, 2 n² d_k each, over
    H heads) reach the projections' (4 products of n × D by D × D: 8 n D²): n = 2 D."""
    return 2.0 * d_model


def weights_megabytes(n_layers: int, n_heads: int, n: int, bytes_per_weight: int = 4) -> float:
    """The T × T weights of every head of every layer at n tokens, in MB (float32)."""
    return n_layers * n_heads * n * n * bytes_per_weight / 1e6
