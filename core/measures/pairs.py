"""Sentence pairs: which tokens belong to sentence A and which to sentence B, and how much of each
head's attention crosses between them ("heads that read across the pair").

Two ways a model reads a pair:
- joined with segments (BERT): `[CLS] A [SEP] B [SEP]`, token type 0 for A, 1 for B
  (`segments_from_types`);
- concatenated (a decoder, which has no segment ids): A's tokens, then B's (`segments_from_start`).
  A causal mask lets B's tokens read A but A's tokens never read B, so there only B → A crosses.

Special tokens ([CLS], [SEP], a decoder's start token) belong to neither sentence: their rows are
not counted, and the attention a word gives them stays in the row's total but never counts as
crossing. So a head's A → B share is "of all the attention A's words give, the part that lands on
B's words". Pure NumPy.
Letters: L layers, H heads, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CrossShares",
    "HeadCross",
    "cross_shares",
    "rank_cross",
    "segments_from_start",
    "segments_from_types",
]

SPECIAL = -1  # a token of neither sentence
A, B = 0, 1


def segments_from_types(token_type_ids, special_mask) -> np.ndarray:
    """int (T,): 0 for sentence A's tokens, 1 for B's, -1 for special tokens, from the tokenizer's
    token type ids (BERT's segment ids)."""
    types = np.asarray(token_type_ids, dtype=np.int64)
    special = np.asarray(special_mask, dtype=bool)
    if types.shape != special.shape:
        raise ValueError(f"token types {types.shape} and special mask {special.shape} differ")
    return np.where(special, SPECIAL, np.where(types > 0, B, A))


def segments_from_start(special_mask, b_start: int) -> np.ndarray:
    """int (T,) as segments_from_types, for two sentences concatenated: tokens before `b_start`
    are A's, from it on B's (special tokens -1)."""
    special = np.asarray(special_mask, dtype=bool)
    if not 0 <= b_start <= len(special):
        raise ValueError(f"sentence B's first token {b_start} is outside 0..{len(special)}")
    return np.where(special, SPECIAL, np.where(np.arange(len(special)) >= b_start, B, A))


@dataclass(frozen=True)
class CrossShares:
    a_to_b: np.ndarray  # (L, H): mean over A's word rows of the weight on B's words
    b_to_a: np.ndarray  # (L, H): mean over B's word rows of the weight on A's words
    cross: np.ndarray  # (L, H): mean over every word row of A and B of the weight on the other sentence
    # (a causal decoder: B's rows only, since A's cannot see B)
    n_a: int  # A's tokens (rows counted)
    n_b: int  # B's tokens


def cross_shares(attentions: np.ndarray, segments: np.ndarray, *, causal: bool = False) -> CrossShares:
    """Each head's share of attention that crosses between the two sentences.

    attentions: (L, H, T, T) rows summing to 1 (row = the token that attends); segments: (T,) from
    segments_from_types or segments_from_start. A sentence with no tokens gives 0 for its direction.
    `cross` weighs every word row alike, so it is (n_a * a_to_b + n_b * b_to_a) / (n_a + n_b); with
    `causal` (a decoder reading A then B) A's rows cannot see B, so `cross` is b_to_a alone.
    """
    att = np.asarray(attentions)
    seg = np.asarray(segments)
    if att.ndim != 4 or att.shape[2:] != (len(seg), len(seg)):
        raise ValueError(f"attentions {att.shape} do not match {len(seg)} tokens")
    in_a, in_b = np.flatnonzero(seg == A), np.flatnonzero(seg == B)
    n_a, n_b = len(in_a), len(in_b)
    # (L, H, rows): the weight each row gives the other sentence's tokens, a layer at a time (a 512-token
    # result of 12 x 12 heads is 150 MB; a float64 copy of it would be twice that)
    a_rows = np.stack([_block_sums(layer, in_a, in_b) for layer in att])
    b_rows = np.stack([_block_sums(layer, in_b, in_a) for layer in att])
    shape = att.shape[:2]
    a_to_b = a_rows.mean(axis=-1) if n_a else np.zeros(shape)
    b_to_a = b_rows.mean(axis=-1) if n_b else np.zeros(shape)
    total = n_a + n_b
    if causal:
        cross = b_to_a
    else:
        cross = (a_rows.sum(axis=-1) + b_rows.sum(axis=-1)) / total if total else np.zeros(shape)
    return CrossShares(a_to_b=a_to_b, b_to_a=b_to_a, cross=cross, n_a=n_a, n_b=n_b)


def _block_sums(layer: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(H, len(rows)): each of `rows`' weight on `cols`, summed in float64."""
    return layer[:, rows][:, :, cols].sum(axis=-1, dtype=np.float64)


@dataclass(frozen=True)
class HeadCross:
    layer: int  # 0-indexed
    head: int
    cross: float
    a_to_b: float
    b_to_a: float


def rank_cross(shares: CrossShares) -> list[HeadCross]:
    """Every head, the largest crossing share first (ties: the earlier layer, then head)."""
    n_layers, n_heads = shares.cross.shape
    heads = [
        HeadCross(
            layer,
            head,
            float(shares.cross[layer, head]),
            float(shares.a_to_b[layer, head]),
            float(shares.b_to_a[layer, head]),
        )
        for layer in range(n_layers)
        for head in range(n_heads)
    ]
    return sorted(heads, key=lambda h: (-h.cross, h.layer, h.head))
