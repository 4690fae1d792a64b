"""Layer normalisation, GELU, feed-forward and the residual connection, in NumPy; and the Llama
family's versions of two of them: RMSNorm and the gated (SwiGLU) feed-forward.

LayerNorm follows torch.nn.LayerNorm (and BERT): biased variance, eps inside the square root.
The form (x - mean) / (std + eps) that some tutorials print is a different function; for BERT's
eps = 1e-12 the two agree closely, but for a toy eps of 1e-5 on small vectors they do not.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ACTIVATIONS", "feed_forward", "gelu", "gelu_tanh", "layer_norm", "linear", "residual"]
__all__ += ["rms_norm", "silu", "swiglu_feed_forward"]


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x @ W (+ b) with W shaped (d_in, d_out), as in Q = X W^Q. x (..., d_in): every row is multiplied
    in one matrix product (NumPy multiplies a stacked x, B runs at once, slice by slice: half as fast)."""
    y = (x.reshape(-1, x.shape[-1]) @ w).reshape(*x.shape[:-1], w.shape[-1])
    if b is not None:
        y += b  # y is this product's own array: adding in place spares a copy of it
    return y


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


def rms_norm(x: np.ndarray, gamma: np.ndarray | None = None, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm (Zhang & Sennrich 2019), the Llama family's LayerNorm: divide the last axis by its root
    mean square, then scale by gamma. No mean is subtracted and there is no shift (beta): the vector's
    direction is kept, only its length is set. eps inside the square root, as transformers'
    LlamaRMSNorm, which also computes in float32 whatever the weights' type."""
    x32 = np.asarray(x, dtype=np.float32)
    y = x32 / np.sqrt((x32 * x32).mean(axis=-1, keepdims=True) + eps)
    return y if gamma is None else y * gamma


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): x sigmoid(x) = x / (1 + e^-x), the gate's activation in a SwiGLU feed-forward."""
    x = np.asarray(x)
    with np.errstate(over="ignore"):  # e^-x -> inf for very negative x: x / inf = -0, the right limit
        return x / (1.0 + np.exp(-x))


def swiglu_feed_forward(x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray):
    """The gated feed-forward of the Llama family (Shazeer 2020): (silu(x W_gate) * (x W_up)) W_down.
    Two projections up instead of one: the SiLU of the first decides, element by element, how much
    of the second passes. No biases."""
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)


# Abramowitz & Stegun 7.1.26: erfc(z) ~= t (a1 + a2 t + ... + a5 t^4) e^(-z^2), t = 1 / (1 + p z), z >= 0,
# within 1.5e-7 of erfc. Below, z = |x| / sqrt 2 is folded into p and the exponent, and the 1/2 of
# Phi(-|x|) = erfc(|x| / sqrt 2) / 2 into the coefficients.
_P = 0.3275911 / math.sqrt(2.0)
_A = tuple(a / 2 for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU(x) = x Phi(x) = x/2 (1 + erf(x / sqrt 2)), BERT's "gelu", for whole arrays at once.

    Phi comes from the approximation above: within 7.5e-8 of the exact Phi (so GELU(x) within
    7.5e-8 |x|), about float32's own rounding. Only the smaller tail Phi(-|x|) is computed, and
    x Phi(x) = max(x, 0) - |x| Phi(-|x|) (for x >= 0 as Phi(x) = 1 - Phi(-x)), so GELU(-x) = GELU(x) - x
    holds and nothing cancels for x < 0.
    """
    x = np.asarray(x)
    x = x.astype(np.result_type(x, np.float32), copy=False)  # float32 stays float32; ints become floats
    if x.ndim == 0:  # a single number: as an array of one, since the steps below write into arrays
        return gelu(x.reshape(1)).reshape(())
    # Every step works in place on one of three arrays the size of x: a feed-forward's (T, I) is
    # megabytes, and each new array of that size is fresh memory the system hands over page by page.
    size = np.abs(x)
    t = size * _P
    t += 1
    np.reciprocal(t, out=t)  # t = 1 / (1 + p |x|)
    tail = _A[4] * t  # Horner's rule, in place: t (a1 + t (a2 + t (a3 + t (a4 + t a5))))
    for a in _A[3::-1]:
        tail += a
        tail *= t
    with np.errstate(over="ignore", under="ignore"):  # e^(-x²/2) -> 0 for large |x|: the right limit
        gauss = np.multiply(size, -0.5, out=t)  # into t, no longer needed
        gauss *= size
        tail *= np.exp(gauss, out=gauss)  # Phi(-|x|)
    tail *= size  # |x| Phi(-|x|)
    # max(x, 0) - |x| Phi(-|x|): no branch per element, where a masked np.where costs as much as the rest
    result = np.maximum(x, 0, out=size)
    result -= tail
    return result


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """The tanh approximation of GELU (GPT-2's "gelu_new")."""
    x = np.asarray(x)
    cube = x * x * x  # not x**3: NumPy's power on float32 is about 80 times slower than two products
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * cube)))


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
