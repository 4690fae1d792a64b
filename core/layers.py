"""Layer normalisation, GELU, feed-forward and the residual connection, in NumPy.

LayerNorm follows torch.nn.LayerNorm (and BERT): biased variance, eps inside the square root.
The form (x - mean) / (std + eps) that some tutorials print is a different function; for BERT's
eps = 1e-12 the two agree closely, but for a toy eps of 1e-5 on small vectors they do not.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ACTIVATIONS", "feed_forward", "gelu", "gelu_tanh", "layer_norm", "linear", "residual"]


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x @ W (+ b) with W shaped (d_in, d_out), as in Q = X W^Q."""
    y = x @ w
    return y if b is None else y + b


def layer_norm(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    beta: np.ndarray | None = None,
    eps: float = 1e-5,
) -> np.ndarray:
    """Normalise the last axis to mean 0 and variance 1, then scale by gamma and shift by beta."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased, as torch
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def _erf(x: np.ndarray) -> np.ndarray:
    # math.erf is exact to double precision; vectorise it so no SciPy is needed.
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU: x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)) (BERT's "gelu")."""
    x = np.asarray(x)
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.result_type(x, np.float32))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """The tanh approximation of GELU (GPT-2's "gelu_new")."""
    x = np.asarray(x)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = {
    "gelu": gelu,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "relu": lambda x: np.maximum(x, 0),
}


def feed_forward(
    x: np.ndarray,
    w_1: np.ndarray,
    b_1: np.ndarray | None,
    w_2: np.ndarray,
    b_2: np.ndarray | None,
    activation: str = "gelu",
) -> np.ndarray:
    """Position-wise feed-forward: act(x W_1 + b_1) W_2 + b_2, the same for every token."""
    return linear(ACTIVATIONS[activation](linear(x, w_1, b_1)), w_2, b_2)


def residual(x: np.ndarray, sublayer_out: np.ndarray) -> np.ndarray:
    """The residual (skip) connection: the sub-layer adds to its input instead of replacing it."""
    return x + sublayer_out


# ---- fast float32 GELU for the BERT engine ---------------------------------------------------
# gelu() above is exact but calls math.erf once per element from Python: fine for a teaching-sized
# array, far too slow for BERT's (T, I) activations. gelu_fast() needs 17 whole-array float32 passes.
#
# The form: GELU(x) = x Phi(x) = x / (1 + exp(-h(x))), where h = logit(Phi) = log(Phi / (1 - Phi)) is
# odd and smooth, so h(x) = x P(x^2) with a degree-6 polynomial P. Two reasons for this shape:
# - Speed: one exp (as exp2), one divide and a Horner loop; erf-based forms need a rational function,
#   or an extra exp and reciprocal (25 passes), and each pass over a (T, I) array costs about the same.
# - Accuracy where it matters: Phi = 1/2 + erf(x / sqrt 2) / 2 cancels catastrophically for negative
#   x in float32 (1/2 - 0.4999...); x / (1 + exp(-h)) never subtracts nearly equal numbers.
# P was fitted in float64 by Lawson's iteration (weighted minimax) on x in [0, 7.5], weighting the
# error in h by dGELU/dh = x Phi (1 - Phi); it is increasing, so h keeps its sign and growth beyond the
# fitted range (exp overflows to inf for x << 0, giving x / inf = -0, and GELU(x) = x for x >> 0).
# Measured on [-12, 12]: within 6e-7 of the exact GELU (torch's float32 GELU: 1.2e-6), mean error
# below 1e-8 (tests/core/test_bert.py checks both).

_GELU_LOGIT = (  # h(x) = x (c0 + c1 x^2 + ... + c6 x^12) ~= logit(Phi(x))
    1.595768432298881,
    0.07266856682079484,
    -6.625983243655989e-05,
    -0.00011048036303440827,
    7.938225176308874e-06,
    -2.6689320293716503e-07,
    3.611241371999747e-09,
)
# -h log2(e): exp(-h) = 2^(-h log2 e) needs no negation pass, and np.exp2 runs twice as fast as np.exp
_GELU_NEG_LOGIT2 = tuple(np.float32(-c * math.log2(math.e)) for c in _GELU_LOGIT)


def gelu_fast(
    x: np.ndarray, out: np.ndarray | None = None, scratch: tuple[np.ndarray, ...] | None = None
) -> np.ndarray:
    """GELU(x) = x Phi(x) in float32, within 6e-7 of the exact function (see the note above).

    out=x computes in place. scratch: two float32 arrays shaped like x for the temporaries; a caller
    that runs many times passes the same ones, since fresh multi-megabyte arrays cost page faults."""
    x = np.asarray(x, dtype=np.float32)
    if scratch is None:
        scratch = (np.empty_like(x), np.empty_like(x))
    x2, neg_h = scratch[0], scratch[1]
    # overflow is harmless here: |x| > 1.8e19 squares to inf and x << 0 makes exp(-h) inf; either way
    # the result is the right limit (x / 1 = x, or x / inf = -0); exp(-h) underflowing to 0 is exact
    with np.errstate(over="ignore", under="ignore"):
        np.multiply(x, x, out=x2)
        # -h(x) log2(e) = x (-c0 - c1 x^2 - ...) log2(e): Horner's rule in place, one pass per step
        c = _GELU_NEG_LOGIT2
        np.multiply(x2, c[-1], out=neg_h)
        for coefficient in reversed(c[1:-1]):
            neg_h += coefficient
            neg_h *= x2
        neg_h += c[0]
        neg_h *= x
        np.exp2(neg_h, out=neg_h)  # exp(-h)
    neg_h += np.float32(1.0)  # 1 + exp(-h) = 1 / Phi(x)
    return np.divide(x, neg_h, out=out)
