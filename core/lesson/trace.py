"""One attention layer, step by step: the names every source of the learn page's seven steps fills.

Three sources produce the numbers: the seeded toy model (core/lesson/toy.py), the source articles' worked
examples (core/lesson/worked_examples.py) and a layer of a real BERT (core/models/bert.py's forward pass,
asked for a trace). Each fills one LayerTrace, with one name per intermediate, in the spirit of
TransformerLens' hook names (scores before the softmax, the pattern after), so the page draws them all with
one renderer and never asks where the numbers came from.

Names, with the learn page's step number (absent when a source does not have the step):

    step  name               shape              what it is
    1     x                  (T, d_model)       the layer's input, one row per token
    2     w_q, w_k, w_v      (d_model, H d_k)   projections (and b_q, b_k, b_v with biases)
    2     query, key, value  (H, T, d_k)        X W + b, split into heads
    3     scores             (H, T_q, T_k)      Q K^T, before scaling
    4     scaled             (H, T_q, T_k)      scores / sqrt(d_k) (as they are, scaling off)
    5     masked             (H, T_q, T_k)      -inf where a mask forbids (only with a mask)
    5     probs              (H, T_q, T_k)      softmax of each row
    6     context            (H, T_q, d_k)      probs @ value, one block per head
    7     concat             (T_q, H d_k)       the heads side by side
    7     w_o, b_o           (H d_k, d_model)   the output projection W^O (and its bias)
    7     output             (T_q, d_model)     concat @ W^O (+ b^O)
    7     residual           (T_q, d_model)     x + output
    7     ln_gamma, ln_beta  (d_model,)         LayerNorm's learned scale and shift (a real model's)
    7     normed             (T_q, d_model)     LayerNorm(residual)

Sources may keep more under their own names (the toy model's embeddings and positions; a real
layer's feed-forward output and the layer's output). Letters: T tokens (T_q queries, T_k keys when
they differ), d_model token width, H heads, d_k one head's width (the paper's name; BERT code calls
it the attention head size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.lesson.attention import attention_steps, merge_heads, split_heads
from core.lesson.layers import layer_norm, linear, residual

__all__ = ["STEP_OF", "LayerTrace", "from_inputs", "from_projections", "output_steps"]

# The learn page's step for each name (see the table above).
STEP_OF = {
    "x": 1,
    **dict.fromkeys(("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "query", "key", "value"), 2),
    "scores": 3,
    "scaled": 4,
    "masked": 5,
    "probs": 5,
    "context": 6,
    **dict.fromkeys(("concat", "w_o", "b_o", "output", "residual", "ln_gamma", "ln_beta", "normed"), 7),
}


@dataclass(frozen=True, eq=False)
class LayerTrace:
    """Every intermediate of one attention layer, by name (see the module docstring)."""

    query_tokens: tuple[str, ...]  # rows of scores / probs: the tokens that attend ("from")
    key_tokens: tuple[str, ...]  # columns: the tokens attended to ("to")
    arrays: dict[str, np.ndarray]  # name -> array; steps a source does not have are absent
    n_heads: int  # H
    d_k: int  # one head's width
    scale: bool = True  # whether the scores were divided by sqrt(d_k)
    mask: np.ndarray | None = None  # bool (T_q, T_k), True = may attend; None = no mask
    ln_eps: float = 1e-5  # eps inside LayerNorm's square root
    given: tuple[str, ...] = field(default=())  # names that were inputs rather than computed

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __contains__(self, name: object) -> bool:
        return name in self.arrays

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.key_tokens

    @property
    def d_model(self) -> int | None:
        """The token width, when the trace has the layer's input."""
        return self.arrays["x"].shape[-1] if "x" in self.arrays else None


def output_steps(
    context: np.ndarray,
    x: np.ndarray | None,
    w_o: np.ndarray | None,
    *,
    b_o: np.ndarray | None = None,
    ln_gamma: np.ndarray | None = None,
    ln_beta: np.ndarray | None = None,
    ln_eps: float = 1e-5,
) -> dict[str, np.ndarray]:
    """Step 7 from the heads' context (H, T_q, d_k): concat, and with W^O the output; with X as well
    the residual and the layer norm. Returns the names it could compute."""
    out = {"concat": merge_heads(context)}  # (T_q, H d_k)
    if w_o is None:
        return out
    if w_o.shape[0] != out["concat"].shape[-1]:
        raise ValueError(
            f"W_O must have {out['concat'].shape[-1]} rows (heads × d_k) to multiply the "
            f"concatenated heads, got shape {w_o.shape}"
        )
    out["output"] = linear(out["concat"], w_o, b_o)  # (T_q, d_model)
    if x is None:
        return out
    if x.shape != out["output"].shape:
        raise ValueError(
            f"the residual adds X {x.shape} to the output {out['output'].shape}: their shapes must match"
        )
    out["residual"] = residual(x, out["output"])
    out["normed"] = layer_norm(out["residual"], ln_gamma, ln_beta, eps=ln_eps)
    return out


def _as_2d(name: str, a: object) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains a value that is not a finite number")
    return arr


def from_inputs(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray | None,
    *,
    tokens: tuple[str, ...] | list[str],
    n_heads: int = 1,
    scale: bool = True,
    mask: np.ndarray | None = None,
    ln_eps: float = 1e-5,
    extra: dict[str, np.ndarray] | None = None,
) -> LayerTrace:
    """The whole layer from an explicit X (T, d_model) and weights (x @ W, W shaped (d_in, d_out)).

    The seeded toy model and a presenter's edited numbers both run through here.
    extra: arrays to keep in the trace as they are (the toy model's embeddings and positions).
    """
    x = _as_2d("X", x)
    w_q, w_k, w_v = _as_2d("W_Q", w_q), _as_2d("W_K", w_k), _as_2d("W_V", w_v)
    tokens = tuple(tokens)
    if len(tokens) != x.shape[0]:
        raise ValueError(f"X has {x.shape[0]} rows but there are {len(tokens)} tokens")
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        if w.shape[0] != x.shape[1]:
            raise ValueError(
                f"{name} must have d_model = {x.shape[1]} rows to multiply X, got shape {w.shape}"
            )
        if w.shape[1] % n_heads:
            raise ValueError(f"{name} has {w.shape[1]} columns, which {n_heads} heads cannot share equally")
    if w_q.shape != w_k.shape:
        raise ValueError(f"W_Q {w_q.shape} and W_K {w_k.shape} must have the same shape (queries meet keys)")
    w_o = None if w_o is None else _as_2d("W_O", w_o)
    # 2) project, then give each head its own block of columns
    query = split_heads(linear(x, w_q), n_heads)  # (H, T, d_k)
    key = split_heads(linear(x, w_k), n_heads)  # (H, T, d_k)
    value = split_heads(linear(x, w_v), n_heads)  # (H, T, d_v)
    arrays = dict(extra or {})
    arrays.update({"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "query": query, "key": key, "value": value})
    if w_o is not None:
        arrays["w_o"] = w_o
    # 3) to 6) scores, scale, mask + softmax, weighted sum
    arrays.update(attention_steps(query, key, value, mask, scale=scale))
    # 7) merge heads, W^O, residual, layer norm
    arrays.update(output_steps(arrays["context"], x, w_o, ln_eps=ln_eps))
    return LayerTrace(
        query_tokens=tokens,
        key_tokens=tokens,
        arrays=arrays,
        n_heads=n_heads,
        d_k=query.shape[-1],
        scale=scale,
        mask=None if mask is None else np.asarray(mask, dtype=bool),
        ln_eps=ln_eps,
        given=("x", "w_q", "w_k", "w_v", "w_o"),
    )


def from_projections(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    *,
    query_tokens: tuple[str, ...] | list[str],
    key_tokens: tuple[str, ...] | list[str],
    scale: bool = True,
    mask: np.ndarray | None = None,
    x: np.ndarray | None = None,
    w_o: np.ndarray | None = None,
    ln_eps: float = 1e-5,
) -> LayerTrace:
    """The layer from step 3 on, when Q, K and V are given instead of X and weights.

    This is how the articles present their examples: they print Q, K, V but not W^Q, W^K, W^V.
    query (T_q, d_k), key (T_k, d_k), value (T_k, d_v), one head; or (H, T, d) for H heads.
    x (T_q, d_model), when given with w_o, adds the residual and the layer norm.
    """
    arrs = []
    for name, a in (("Q", query), ("K", key), ("V", value)):
        arr = np.asarray(a, dtype=np.float64)
        if arr.ndim == 2:
            arr = arr[None]  # one head: (1, T, d)
        if arr.ndim != 3:
            raise ValueError(f"{name} must be (T, d) or (H, T, d), got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains a value that is not a finite number")
        arrs.append(arr)
    query, key, value = arrs
    query_tokens, key_tokens = tuple(query_tokens), tuple(key_tokens)
    if query.shape[1] != len(query_tokens) or key.shape[1] != len(key_tokens):
        raise ValueError("Q needs one row per query token and K, V one row per key token")
    arrays: dict[str, np.ndarray] = {"query": query, "key": key, "value": value}
    given = ["query", "key", "value"]
    if x is not None:
        x = _as_2d("X", x)
        arrays["x"] = x
        given.append("x")
    if w_o is not None:
        w_o = _as_2d("W_O", w_o)
        arrays["w_o"] = w_o
        given.append("w_o")
    # 3) to 6) scores, scale, mask + softmax, weighted sum
    arrays.update(attention_steps(query, key, value, mask, scale=scale))
    # 7) merge heads, W^O, residual, layer norm (as far as the given inputs go)
    arrays.update(output_steps(arrays["context"], x, w_o, ln_eps=ln_eps))
    return LayerTrace(
        query_tokens=query_tokens,
        key_tokens=key_tokens,
        arrays=arrays,
        n_heads=query.shape[0],
        d_k=query.shape[-1],
        scale=scale,
        mask=None if mask is None else np.asarray(mask, dtype=bool),
        ln_eps=ln_eps,
        given=tuple(given),
    )
