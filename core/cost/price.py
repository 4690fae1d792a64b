"""What attention costs, measured on this machine: time and peak memory of steps 3-6 (scores,
scaling, softmax, weighted sum: core.lesson.attention.attention_steps, the code the lessons show) at growing
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
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from core.cost.variants import Variant
from core.lesson.attention import attention_steps, scaled_dot_product_attention, split_heads

__all__ = [
    "LENGTHS",
    "MB",
    "VARIANT_LENGTHS",
    "Curve",
    "crossover",
    "curves_from",
    "flop_crossover",
    "heads_curve",
    "measure",
    "measure_curves",
    "measure_length",
    "variant_curves",
    "weights_megabytes",
]

LENGTHS = tuple(2**i for i in range(4, 13))  # 16, 32, ..., 4096
# Bytes in a megabyte: the decimal MB every page prints (10**6; not the 2**20 of a MiB)
MB = 10**6


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


def measure(fn: Callable[[], object], repeats: int = 3, fastest: bool = False) -> tuple[float, int]:
    """(median seconds, or the fastest run's, and the peak bytes allocated) of fn()."""
    times, peak = [], 0
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return float(min(times) if fastest else np.median(times)), peak


def _inputs(n: int, d_model: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d_model)).astype(np.float32)


def _weights(d_model: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(np.float32) for _ in range(4)]


Row = dict[str, tuple[float, int]]  # curve name -> (median seconds, peak bytes) at one length


def measure_length(n: int, d_model: int, n_heads: int, seed: int = 0, heads_up_to: int | None = None) -> Row:
    """One length of the curves "one head", "H heads" (steps 3-6) and "projections" (X W^Q, X W^K,
    X W^V and W^O); the H heads only while n <= heads_up_to (None: always)."""
    w = _weights(d_model, seed)
    x = _inputs(n, d_model, seed)
    q, k, v = (split_heads(x @ wi, n_heads) for wi in w[:3])  # (H, n, d_k)
    steps = {
        "one head": lambda: attention_steps(q[0], k[0], v[0]),
        heads_curve(n_heads): lambda: attention_steps(q, k, v),
        "projections": lambda: [x @ wi for wi in w],
    }
    if heads_up_to is not None and n > heads_up_to:
        del steps[heads_curve(n_heads)]
    row = {}
    for name, fn in steps.items():
        fn()  # once untimed: the first call of a size pays for page faults and thread start-up
        row[name] = measure(fn, repeats=5, fastest=True)  # other work on the machine only adds time
    return row


def heads_curve(n_heads: int) -> str:
    return f"{n_heads} heads"


def curves_from(rows: Sequence[tuple[int, Row]]) -> list[Curve]:
    """(length, row) pairs -> one Curve per name, over the lengths that measured it."""
    names = list(dict.fromkeys(name for _, row in rows for name in row))
    curves = []
    for name in names:
        found = [(n, row[name]) for n, row in rows if name in row]
        curves.append(
            Curve(
                name,
                tuple(n for n, _ in found),
                tuple(s for _, (s, _) in found),
                tuple(b for _, (_, b) in found),
            )
        )
    return curves


def measure_curves(
    d_model: int,
    n_heads: int,
    lengths: Sequence[int] = LENGTHS,
    progress: Callable[[int, int], None] | None = None,
    seed: int = 0,
) -> list[Curve]:
    """Curves "one head", "H heads" (steps 3-6) and "projections" at every length."""
    rows = []
    for done, n in enumerate(lengths, start=1):
        rows.append((n, measure_length(n, d_model, n_heads, seed)))
        if progress:
            progress(done, len(lengths))
    return curves_from(rows)


VARIANT_LENGTHS = tuple(2**i for i in range(4, 11))  # 16 .. 1024: a strided row's keys grow as n / s


def variant_curves(
    variant: Variant, d_k: int, lengths: Sequence[int] = VARIANT_LENGTHS, seed: int = 0
) -> tuple[Curve, Curve]:
    """Time of one head's output under full attention and under `variant` (Variant.output: the
    variant's own cost, its fixed parts prepared once per length), on random Q, K, V of width d_k."""
    full, other = [], []
    for n in lengths:
        rng = np.random.default_rng(seed)
        q, k, v = (rng.standard_normal((n, d_k)).astype(np.float32) for _ in range(3))
        bound = replace(variant, global_tokens=(0, n - 1)) if variant.global_tokens else variant
        prepared = bound.prepare(n, d_k)
        for found, fn in (
            (full, partial(scaled_dot_product_attention, q, k, v)),
            (other, partial(bound.output, q, k, v, prepared)),
        ):
            fn()
            # the fastest of seven: a call that the server's other work (or a browser on the same
            # cores) interrupts only ever takes longer
            found.append(measure(fn, repeats=7, fastest=True))
    return tuple(
        Curve(name, tuple(lengths), tuple(s for s, _ in found), tuple(b for _, b in found))
        for name, found in (("full", full), (variant.name, other))
    )


def crossover(attention: Curve, projections: Curve) -> float | None:
    """The length where the attention curve first costs more time than the projections, over the
    lengths both measured, interpolated on the log-log scale; None when it never does."""
    projected = dict(zip(projections.lengths, projections.seconds, strict=True))
    shared = [(n, s) for n, s in zip(attention.lengths, attention.seconds, strict=True) if n in projected]
    x = np.log([n for n, _ in shared])
    a, p = np.log([s for _, s in shared]), np.log([projected[n] for n, _ in shared])
    above = np.flatnonzero(a > p)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(shared[0][0])
    gap0, gap1 = a[i - 1] - p[i - 1], a[i] - p[i]  # from <= 0 to > 0
    return float(np.exp(x[i - 1] + (x[i] - x[i - 1]) * gap0 / (gap0 - gap1)))


def flop_crossover(d_model: int) -> float:
    """Where the FLOPs of steps 3-6 (about 4 n² D: Q Kᵀ and the weighted sum, 2 n² d_k each, over
    H heads) reach the projections' (4 products of n × D by D × D: 8 n D²): n = 2 D."""
    return 2.0 * d_model


def weights_megabytes(n_layers: int, n_heads: int, n: int, bytes_per_weight: int = 4) -> float:
    """The T × T weights of every head of every layer at n tokens, in MB (float32)."""
    return n_layers * n_heads * n * n * bytes_per_weight / MB
