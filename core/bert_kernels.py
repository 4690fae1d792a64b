"""The NumPy BERT engine's speed-shaped pieces: in-place kernels, activations, and the weight block.

Both halves of the engine use them: core/bert.py (the forward pass in this process) and
core/bert_partner.py (half of every layer in a second process), which imports only this module,
core.layers and NumPy, so the partner process starts without the tokenizer or the model registry.
"""

from __future__ import annotations

import contextlib
import mmap

import numpy as np

from core.layers import gelu_fast, gelu_tanh

# In-place float32 activations for the hot loop, keyed by config.json's `hidden_act`; `scratch` holds
# reusable temporaries. "gelu" is the exact (erf) GELU: core.layers.gelu_fast is within 6e-7 of it.
FAST_ACTIVATIONS = {
    "gelu": lambda h, scratch: gelu_fast(h, out=h, scratch=scratch),
    "gelu_new": lambda h, scratch: np.copyto(h, gelu_tanh(h)),
    "gelu_pytorch_tanh": lambda h, scratch: np.copyto(h, gelu_tanh(h)),
    "relu": lambda h, scratch: np.maximum(h, 0, out=h),
}


# ---- rows for the matrix products -------------------------------------------------------------------
# OpenBLAS's AVX2 "Haswell" SGEMM kernel (also what its Zen kernel set runs) works on the rows of x in
# x @ W four at a time; the one, two or three rows left over go through edge kernels that read the
# weights again, so rows past a multiple of 4 cost more than their share. The partner path runs its
# products on token rows padded to a multiple of 4: the padding rows hold finite numbers that no token
# attends to, and a product's real rows never depend on them. The whole forward pass, padded / not,
# one engine switching in one process (`python -m bench --only bert_speed`, the "rows padded" rows;
# two runs): 1.00x at 16 tokens (nothing padded: the noise), 0.98-1.00x at 17, 0.96-0.99x at 18 and
# 0.88-0.91x at 19.
# OpenBLAS's SkylakeX kernels showed no such step in a quick check, and other libraries were not
# measured: both get no padding.
_ROW_MULTIPLE = {"haswell": 4, "zen": 4}


def gemm_row_multiple(kernels: str | None) -> int:
    """The row count multiple at which the named OpenBLAS kernel set (core.blas_threads.kernels())
    runs x @ W fastest; 1 for kernels not measured."""
    return _ROW_MULTIPLE.get((kernels or "").lower(), 1)


def padded_rows(n: int, multiple: int) -> int:
    """n rows rounded up to `multiple`; one row stays one row (a matrix-vector product, cheaper still)."""
    return n if n <= 1 else -(-n // multiple) * multiple


# ---- one block for every layer's weights ---------------------------------------------------------
# On short inputs the forward pass is bound by streaming the layers' weights through the GEMMs (42 MB
# for MiniLM, more than the L3 cache, so every call reads them from memory). In 4 KiB pages that stream
# costs a TLB miss every 4 KiB, and in a virtual machine each miss walks two page tables. One block
# in 2 MiB pages (Linux transparent huge pages, asked for with madvise) made the whole forward pass
# 4-7% faster at 17 and 32 tokens (`python -m bench --only bert_speed`, the huge-page rows); where
# the system has no huge pages the block is ordinary memory.

_HUGE_PAGE = 2 << 20
_PIECE_ALIGN = 16  # float32s: each piece starts on a 64-byte line, as vector loads like


class WeightBlock:
    """One float32 buffer, 2 MiB-aligned, handed out in consecutive pieces by `store`."""

    def __init__(self, n_floats: int):
        # Anonymous memory costs nothing until written, so reserving the block never adds to the RSS.
        # Private, not mmap's default shared mapping: Linux gives huge pages to private anonymous memory.
        size = 4 * n_floats + _HUGE_PAGE
        if hasattr(mmap, "MAP_PRIVATE"):  # fileno -1: CPython adds MAP_ANONYMOUS itself
            self._buffer = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        else:  # Windows
            self._buffer = mmap.mmap(-1, size)
        if hasattr(mmap, "MADV_HUGEPAGE"):  # Linux only; a refusal leaves ordinary pages
            with contextlib.suppress(OSError):
                self._buffer.madvise(mmap.MADV_HUGEPAGE)
        whole = np.frombuffer(self._buffer, dtype=np.float32)
        start = (-whole.ctypes.data % _HUGE_PAGE) // 4
        self._free = whole[start : start + n_floats]

    @staticmethod
    def floats_for(array: np.ndarray) -> int:
        """How much of a block `array` takes, alignment padding included."""
        return -(-array.size // _PIECE_ALIGN) * _PIECE_ALIGN

    def store(self, array: np.ndarray) -> np.ndarray:
        """A copy of `array` in the next free piece of the block."""
        n = self.floats_for(array)
        if n > self._free.size:
            raise ValueError("the weight block is full: it was sized for fewer or smaller tensors")
        piece = self._free[: array.size].reshape(array.shape)
        piece[...] = array
        self._free = self._free[n:]
        return piece


# ---- the speed-shaped kernels ------------------------------------------------------------------
# Each does what its core/ counterpart does, in float32 and in place. At BERT sizes NumPy's time goes
# into passes over memory, so the kernels avoid temporaries and extra passes, and hand row sums to
# BLAS: `x @ ones` (a GEMV) sums rows about four times faster than x.sum(axis=-1) for rows this short.
# Each kernel is checked against its teaching counterpart in tests/core/test_bert.py.


def layer_norm_(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, mean_weights: np.ndarray, sq: np.ndarray
):
    """core.layers.layer_norm (torch semantics: biased variance, eps inside the root), in place on x (N, D).

    mean_weights: float32 (D,) filled with 1 / D, so `x @ mean_weights` is the row mean (a GEMV);
    sq: float32 scratch shaped like x."""
    mean = x @ mean_weights  # (N,)
    x -= mean[:, None]
    np.multiply(x, x, out=sq)
    var = sq @ mean_weights  # biased variance, as torch
    var += np.float32(eps)
    np.sqrt(var, out=var)
    np.divide(1.0, var, out=var)  # (N,) divides, then one multiply per element instead of a divide
    x *= var[:, None]
    x *= gamma
    x += beta
    return x


# 2^s / sum 2^s is safe while no row sum overflows and no row sum shrinks to where float32 loses
# precision (2^-100 ~ 8e-31, far above the smallest normal number ~1e-38).
TINY_ROW_SUM = 1e-30


def softmax2_rows_(scores2: np.ndarray, ones: np.ndarray) -> bool:
    """core.attention.softmax over the last axis, in place, for scores in base 2 (s log2 e, see
    query_scale): 2^(s log2 e) = e^s, and np.exp2 runs twice as fast as np.exp.

    No row maximum is subtracted: it is there for stability only (e^(s-m) / sum e^(s-m) equals
    e^s / sum e^s), and BERT's scores are small enough without it, which saves two passes over all
    H x T x T scores (a reduction and a subtraction). Returns False, with `scores2` spoilt, when a row
    overflowed or underflowed: the caller recomputes the scores and calls softmax2_rows_stable_.
    ones: float32 (T_k,) of 1.0."""
    with np.errstate(over="ignore"):  # an overflow is detected below and handled by the caller
        np.exp2(scores2, out=scores2)  # masked keys hold -inf: exp2 gives exactly 0
    total = scores2 @ ones  # (..., T_q) row sums by GEMV
    if not (np.isfinite(total).all() and total.min() > TINY_ROW_SUM):
        return False
    np.divide(1.0, total, out=total)  # one divide per row, then one multiply per element
    scores2 *= total[..., None]
    return True


def softmax2_rows_stable_(scores2: np.ndarray) -> np.ndarray:
    """The textbook stable softmax (core.attention.softmax) for base-2 scores, in place: the fallback."""
    scores2 -= scores2.max(axis=-1, keepdims=True)
    np.exp2(scores2, out=scores2)
    scores2 /= scores2.sum(axis=-1, keepdims=True)
    return scores2
