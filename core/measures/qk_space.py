"""One head's queries and keys in one picture (AttentionViz, Yeh et al. 2023).

A head scores query i against key j by q_i · k_j. Put every corpus token's query and key for one
(layer, head) in the same 2-D plane and a query should land near the keys it scores high. Two
changes leave every attention weight as it was, and AttentionViz makes both before drawing (Yeh et
al. 2023, §4.1):
- a shift of the keys: adding t to every key adds q · t to all of one query's scores alike, and
  softmax ignores that; the keys are moved onto the queries' centre;
- a scale: queries times c and keys times 1/c leave every q · k unchanged; c is chosen so that the
  two sets have the same mean norm about that centre, and neither swamps the other.
Here each set is centred and the keys are scaled to the queries' mean norm: the same points as
AttentionViz's, up to one shift and one overall scale, which PCA and the picture do not see
(tests/core/test_qk_space.py checks it). Then PCA: both sets stacked, projected on the top two
right singular vectors (NumPy's SVD).

Queries and keys are computed from the hidden state entering the layer, as the forward pass does:
Q = X W^Q + b^Q, and the head's d_k columns of it (core/models/bert.py, core/lesson/attention.py).

Letters: N tokens, D hidden size, d_k the head's width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["QKSpace", "head_queries_keys", "qk_space"]


def head_queries_keys(x: np.ndarray, weights, head: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, D) hidden states entering a layer -> that layer's head `head` queries and keys, (N, d_k)
    each. `weights` has w_q, b_q, w_k, b_k (x @ W) and d_k, as BertNumpy.layer_weights gives."""
    cols = slice(head * weights.d_k, (head + 1) * weights.d_k)
    x = np.asarray(x, dtype=np.float32)
    query = x @ weights.w_q[:, cols] + weights.b_q[cols]
    key = x @ weights.w_k[:, cols] + weights.b_k[cols]
    return query, key


@dataclass(frozen=True)
class QKSpace:
    """The fitted normalisation and projection: `place` puts any queries and keys in the plane."""

    query_mean: np.ndarray  # (d_k,)
    key_mean: np.ndarray  # (d_k,)
    key_scale: float  # keys are multiplied by this after centring
    axes: np.ndarray  # (2, d_k): the top two principal directions
    centre: np.ndarray  # (d_k,): the mean of the normalised queries and keys together
    explained: tuple[float, float]  # share of the variance along each axis

    def place(self, query: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, d_k) queries and (M, d_k) keys -> their (N, 2) and (M, 2) points."""
        q = np.asarray(query, dtype=np.float64) - self.query_mean
        k = (np.asarray(key, dtype=np.float64) - self.key_mean) * self.key_scale
        return (q - self.centre) @ self.axes.T, (k - self.centre) @ self.axes.T


def qk_space(query: np.ndarray, key: np.ndarray) -> QKSpace:
    """Fit the plane on (N, d_k) queries and keys: centre each set, scale the keys to the queries'
    mean norm, then PCA on both together (signs fixed: each axis's largest loading is positive).
    Needs d_k >= 2."""
    query = np.asarray(query, dtype=np.float64)
    key = np.asarray(key, dtype=np.float64)
    q_mean, k_mean = query.mean(axis=0), key.mean(axis=0)
    q, k = query - q_mean, key - k_mean
    key_norm = np.linalg.norm(k, axis=1).mean()
    scale = float(np.linalg.norm(q, axis=1).mean() / key_norm) if key_norm > 0 else 1.0
    both = np.concatenate([q, k * scale])
    centre = both.mean(axis=0)
    _, s, vt = np.linalg.svd(both - centre, full_matrices=False)
    axes = vt[:2] * np.sign(vt[:2][np.arange(2), np.abs(vt[:2]).argmax(axis=1)])[:, None]
    variance = s**2
    total = variance.sum() or 1.0
    return QKSpace(
        q_mean, k_mean, scale, axes, centre, (float(variance[0] / total), float(variance[1] / total))
    )
