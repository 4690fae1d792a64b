"""Comparing one model's attention on two sentences: do the token lists align, which positions were
swapped, and which heads changed most where one word looks. Pure NumPy.

Letters: L layers, H heads, T tokens (T1, T2 when the two sentences differ in length), W words.
Attention arrays are [L, H, query_pos, key_pos]: row = the token that attends ("from"), column =
the token attended to ("to"). Every row is a probability distribution over the keys.

When two sentences line up (align_tokens): they have the same number of tokens and no shared token
moved, only words swapped in place ("dogs chase cats" / "cats chase dogs" line up; "he said no" /
"no he said" does not: "he said" moved). Measured: keeping every token at its place matches as many
tokens as the longest common subsequence of the two token lists (the best any shift could match).
Then position j of one sentence is position j of the other, and a difference map means something.

The focus word's row is the mean of its pieces' rows (a word split into pieces, like "suit ##case",
is read as one word, as the explore page's merged view does: core.measures.analysis). How a change is
measured (the compare page states both rules):
- row by row (the tokens line up and the focus word sits at the same positions in both): the total
  variation distance between the focus row in sentence 1 and in sentence 2, ½ Σ_j |a2_ij − a1_ij|,
  from 0 (the row did not move) to 1 (no weight in common);
- by role (otherwise): key positions mean different tokens, so each row is first summed into the
  same six role bins in both sentences ([CLS], [SEP], the focus word itself, the token before it,
  the token after it, everything else) and the total variation is taken over those bins. This is
  the role view of Clark et al. (2019), "What Does BERT Look At?", §3, applied to one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.measures.analysis import piece_text

__all__ = [
    "ROLE_BINS",
    "Alignment",
    "HeadChange",
    "align_tokens",
    "first_difference",
    "focus_rows",
    "rank_changes",
    "role_bins",
    "row_by_row",
    "swap_labels",
    "total_variation",
    "word_rows",
]

ROLE_BINS = ("[CLS]", "[SEP]", "itself", "previous", "next", "other")


@dataclass(frozen=True)
class Alignment:
    """Whether two token lists line up position by position, and where they differ."""

    aligned: bool  # position j of one is position j of the other (see the module docstring)
    swapped: tuple[int, ...]  # aligned positions whose tokens differ (empty when not aligned)
    moved: bool = False  # same length, but shared tokens moved (so not aligned)


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The longest common subsequence's length (dynamic programming, one row at a time)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def align_tokens(tokens1: Sequence[str], tokens2: Sequence[str]) -> Alignment:
    """Aligned when both lists have the same length and keeping every token in place matches as many
    tokens as their longest common subsequence (no shared token moved); then the positions whose
    tokens differ."""
    if len(tokens1) != len(tokens2):
        return Alignment(False, ())
    differ = [i for i, (a, b) in enumerate(zip(tokens1, tokens2, strict=True)) if a != b]
    if not differ:
        return Alignment(True, ())
    # a common start and end belong to every longest common subsequence: compare only the middle
    start, stop = differ[0], differ[-1] + 1
    in_place = stop - start - len(differ)
    if _lcs_length(tokens1[start:stop], tokens2[start:stop]) > in_place:
        return Alignment(False, (), moved=True)
    return Alignment(True, tuple(differ))


def _join(tokens: Sequence[str]) -> str:
    """Tokens as text: a "##" piece glued to the token before it, other tokens spaced."""
    out = ""
    for token in tokens:
        glued = token.startswith("##") and len(token) > 2 and out
        out += piece_text(token) if glued else (" " if out else "") + piece_text(token)
    return out


def swap_labels(
    tokens1: Sequence[str], tokens2: Sequence[str], swapped: Sequence[int]
) -> list[tuple[int, int, str]]:
    """Runs of consecutive swapped positions as (start, stop, "large → small")."""
    runs: list[list[int]] = []
    for pos in swapped:
        if runs and runs[-1][-1] == pos - 1:
            runs[-1].append(pos)
        else:
            runs.append([pos])
    return [
        (run[0], run[-1] + 1, f"{_join([tokens1[i] for i in run])} → {_join([tokens2[i] for i in run])}")
        for run in runs
    ]


def first_difference(words1: Sequence[str], words2: Sequence[str]) -> int:
    """The index of the first word where the two word lists differ (case-insensitively); the shorter
    list's length when one is the start of the other."""
    for i, (a, b) in enumerate(zip(words1, words2, strict=False)):
        if a.casefold() != b.casefold():
            return i
    return min(len(words1), len(words2))


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """½ Σ |q − p| over the last axis: 0 for equal distributions, 1 for disjoint ones."""
    return 0.5 * np.abs(np.asarray(q, np.float64) - np.asarray(p, np.float64)).sum(axis=-1)


def role_bins(rows: np.ndarray, focus: tuple[int, int], special_mask: Sequence[bool]) -> np.ndarray:
    """(..., T) rows of the focus word (tokens focus[0]..focus[1]-1) -> (..., 6) mass in ROLE_BINS.

    [CLS] is a special token at position 0, [SEP] any other special token; "itself" is every piece
    of the focus word, "previous" / "next" the tokens just before and after the word unless they are
    special (then their mass is in their own bin). Every key falls in exactly one bin, so the bins
    sum to the row's total.
    """
    t = rows.shape[-1]
    start, stop = focus
    special = np.asarray(special_mask, dtype=bool)
    which = np.full(t, 5, dtype=np.intp)  # "other"
    for pos, bin_ in ((start - 1, 3), (stop, 4)):
        if 0 <= pos < t and not special[pos]:
            which[pos] = bin_
    which[special] = 1
    if special[0]:
        which[0] = 0
    which[start:stop] = 2
    out = np.zeros((*rows.shape[:-1], len(ROLE_BINS)), dtype=np.float64)
    for bin_ in range(len(ROLE_BINS)):
        out[..., bin_] = np.asarray(rows, np.float64)[..., which == bin_].sum(axis=-1)
    return out


def word_rows(rows: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """(..., T) -> (..., W): a row's weight on each word (the sum over its pieces; Clark et al. §2)."""
    starts = np.array([s for s, _ in spans], dtype=np.intp)
    return np.add.reduceat(np.asarray(rows, np.float64), starts, axis=-1)


@dataclass(frozen=True)
class HeadChange:
    layer: int  # 0-indexed
    head: int  # 0-indexed
    change: float  # total variation between the two focus rows (or their role bins), 0..1
    top1: int  # the word the focus looks at most in sentence 1 (index into its words)
    weight1: float  # its weight
    top2: int
    weight2: float


def focus_rows(attn: np.ndarray, focus: tuple[int, int]) -> np.ndarray:
    """(L, H, T, T) -> (L, H, T): the focus word's row, the mean of its pieces' rows (still a
    distribution over the keys)."""
    start, stop = focus
    return np.asarray(attn[:, :, start:stop, :], np.float64).mean(axis=2)


def row_by_row(alignment: Alignment, focus1: tuple[int, int] | None, focus2: tuple[int, int] | None) -> bool:
    """The one rule for comparing the focus rows key by key: the tokens line up and the focus word
    has the same pieces at the same positions in both sentences."""
    return alignment.aligned and focus1 is not None and focus1 == focus2


def rank_changes(
    attn1: np.ndarray,
    attn2: np.ndarray,
    focus1: tuple[int, int],
    focus2: tuple[int, int],
    special1: Sequence[bool],
    special2: Sequence[bool],
    spans1: Sequence[tuple[int, int]],
    spans2: Sequence[tuple[int, int]],
    rowwise: bool,
) -> list[HeadChange]:
    """Every head, ranked by how much the focus word's row changed between the sentences, largest
    first: key by key when `rowwise` (row_by_row decides), else by role bins. `focus` is the word's
    token span (start, stop); `spans` are each sentence's word spans, for each head's top word."""
    rows1 = focus_rows(attn1, focus1)  # (L, H, T1)
    rows2 = focus_rows(attn2, focus2)  # (L, H, T2)
    if rowwise and (rows1.shape != rows2.shape or focus1 != focus2):
        raise ValueError("a row-by-row comparison needs the same tokens and the same focus positions")
    if rowwise:
        change = total_variation(rows1, rows2)  # (L, H)
    else:
        change = total_variation(role_bins(rows1, focus1, special1), role_bins(rows2, focus2, special2))
    words1, words2 = word_rows(rows1, spans1), word_rows(rows2, spans2)  # (L, H, W1), (L, H, W2)
    top1, top2 = words1.argmax(axis=-1), words2.argmax(axis=-1)  # (L, H)
    n_heads = attn1.shape[1]
    order = np.argsort(-change.ravel(), kind="stable")
    ranked = []
    for flat in order:
        layer, head = divmod(int(flat), n_heads)
        a, b = int(top1[layer, head]), int(top2[layer, head])
        ranked.append(
            HeadChange(
                layer,
                head,
                float(change[layer, head]),
                a,
                float(words1[layer, head, a]),
                b,
                float(words2[layer, head, b]),
            )
        )
    return ranked
