"""What one sentence adds to the head atlas (core/measures/atlas.py): the classes of its tokens and,
per statistic, the per-row quantity summed over its rows. The module docstring of atlas.py defines
every statistic; this file is its arithmetic.

Letters: L layers, H heads, T tokens, R rows averaged (T for an encoder, T - 1 for a decoder).
"""

from __future__ import annotations

import unicodedata

import numpy as np

from core.measures.analysis import piece_text
from core.measures.decoder_reads import first_token_share
from core.models.result import AttentionResult

__all__ = ["is_punctuation", "row_sums", "token_classes"]


def is_punctuation(token: str) -> bool:
    """A token made only of Unicode punctuation (categories Pc, Pd, Pe, Pf, Pi, Po, Ps), once the
    WordPiece "##" or a BPE space mark is removed: ".", ",", "'", "##!", "«"."""
    text = piece_text(token)
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


def token_classes(result: AttentionResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cls, sep, punct) boolean masks over the T tokens of a result."""
    special = np.asarray(result.special_mask, dtype=bool)
    cls = special & (np.arange(len(special)) == 0)
    sep = special & ~cls
    punct = ~special & np.array([is_punctuation(t) for t in result.tokens], dtype=bool)
    return cls, sep, punct


def row_sums(a: np.ndarray, result: AttentionResult, decoder: bool) -> dict[str, np.ndarray]:
    """Each statistic's per-row quantity summed over one sentence's rows, (L, H) each. A decoder's
    first row is left out (it sees only itself), and its rows' spread is read against what each sees."""
    t = a.shape[-1]
    cls, sep, punct = token_classes(result)
    pos = np.arange(t)
    first = 1 if decoder else 0
    rows = a[..., first:, :]  # (L, H, R, T): the rows averaged, R = T - first
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(rows > 0, rows * np.log2(np.where(rows > 0, rows, 1.0)), 0.0)
    row_entropy = -plogp.sum(axis=-1)  # (L, H, R) bits
    if decoder:  # row i sees i + 1 tokens
        entropy_norm = (row_entropy / np.log2(pos[first:] + 1.0)).sum(axis=-1)
    else:
        entropy_norm = row_entropy.sum(axis=-1) / np.log2(t)
    sums = {
        "to_cls": rows[..., cls].sum(axis=(-2, -1)),
        "to_sep": rows[..., sep].sum(axis=(-2, -1)),
        "to_punct": rows[..., punct].sum(axis=(-2, -1)),
        "to_self": np.diagonal(a, axis1=-2, axis2=-1)[..., first:].sum(axis=-1),
        "to_prev": np.diagonal(a, offset=-1, axis1=-2, axis2=-1).sum(axis=-1),  # a[i, i-1]
        "to_next": np.diagonal(a, offset=1, axis1=-2, axis2=-1).sum(axis=-1),  # a[i, i+1]
        "entropy": row_entropy.sum(axis=-1),
        "entropy_norm": entropy_norm,
        "distance": (rows * np.abs(pos[first:, None] - pos[None, :])).sum(axis=(-2, -1)),
    }
    if decoder:
        sums["to_first"] = first_token_share(a) * (t - 1)  # its mean over rows 1..T-1, as a sum
    return sums
