"""Reading attention maps: word merge, special-token removal, head ranking, head statistics,
and token similarity. Pure NumPy, on arrays of any leading shape.

Letters: L layers, H heads, T tokens, W shown items (words or tokens after merging and hiding).
Attention arrays are [..., query_pos, key_pos]: row = the token that attends ("from"),
column = the token attended to ("to"). Every row sums to 1, and every function here keeps it so.

Merging WordPiece pieces into words follows Clark et al. (2019), "What Does BERT Look At?", §2:
attention *to* a word is the sum of the attention to its pieces (mass is additive over keys), and
attention *from* a word is the mean of its pieces' rows (each row is a distribution, so the mean is
one too). Hiding [CLS]/[SEP] drops their rows and columns and renormalises each remaining row over
the tokens left, so a row still reads as "how this token divides its attention among the others".
Attention rollout (Abnar & Zuidema 2020) and attention as vector norms (Kobayashi et al. 2020) are in
core/measures/flow.py.

Word references name a token by its word, not its position, so a choice survives an edit of the
sentence: "it", "the#2" (the second "the"), "nlp~2" (the second word piece of "nlp").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "HeadLink",
    "HeadScore",
    "TokenView",
    "drop_tokens",
    "find_word_ref",
    "head_stats",
    "merge_pieces",
    "piece_text",
    "rank_heads",
    "rank_heads_specific",
    "token_similarity",
    "token_view",
    "word_ref",
    "word_spans",
]


def piece_text(token: str) -> str:
    """A token as a reader would write it: WordPiece's "##" and BPE/SentencePiece space marks removed."""
    if token.startswith("##") and len(token) > 2:
        return token[2:]
    return token.lstrip("Ġ▁") or token


def _label(token: str) -> str:
    """An unmerged token's label: a byte-level BPE's space mark ("Ġit", GPT-2 and SmolLM2) or
    SentencePiece's ("▁it") dropped as in a merged word; WordPiece's "##" kept, which says "a piece"."""
    return piece_text(token) if token[:1] in ("Ġ", "▁") else token


def word_spans(word_ids: Sequence[int | None], special_mask: Sequence[bool]) -> list[tuple[int, int]]:
    """Contiguous [start, stop) spans of tokens that form one word; special tokens stand alone.

    Consecutive tokens with the same word id are one word. Contiguity (not the id alone) decides,
    so ids that restart in a sentence pair's second half cannot join words across [SEP].
    """
    spans: list[tuple[int, int]] = []
    for i, (word, special) in enumerate(zip(word_ids, special_mask, strict=True)):
        continues = i > 0 and word is not None and word_ids[i - 1] == word
        if continues and not special and not special_mask[i - 1]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def merge_pieces(attn: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """(..., T, T) -> (..., W, W): columns summed over each span, rows averaged over each span.

    Each output row still sums to 1. The spans must tile 0..T in order (word_spans' output).
    """
    starts = np.array([s for s, _ in spans], dtype=np.intp)
    sizes = np.array([e - s for s, e in spans], dtype=attn.dtype)
    # reduceat sums each contiguous run in one pass, without building a (T, W) matrix.
    to_words = np.add.reduceat(attn, starts, axis=-1)  # (..., T, W): attention to a word = sum
    return np.add.reduceat(to_words, starts, axis=-2) / sizes[:, None]  # (..., W, W): from = mean


def drop_tokens(attn: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """(..., T, T) -> (..., K, K): keep the rows and columns where `keep` is True, rows renormalised."""
    idx = np.flatnonzero(keep)
    kept = attn[..., idx[:, None], idx[None, :]]
    return _renormalise(kept)


def _renormalise(rows: np.ndarray) -> np.ndarray:
    total = rows.sum(axis=-1, keepdims=True)
    # Softmax weights are strictly positive, so a zero total only arises from underflow; keep it 0.
    return np.divide(rows, total, out=np.zeros_like(rows), where=total > 0)


@dataclass(frozen=True)
class TokenView:
    """How tokens are shown: which spans become one item, which items are hidden, and their labels.

    Built from the tokens alone (cheap); `matrix` and `row` then transform any slice of the
    attention array, so a page transforms only the layer or head it draws.
    """

    labels: list[str]  # W labels of the shown items
    spans: list[tuple[int, int]]  # every item's [start, stop) token span, hidden ones included
    keep: np.ndarray  # bool, one per span: shown (True) or hidden
    merged: bool  # word pieces merged into words
    renormalised: bool  # special tokens hidden and rows renormalised over what is left

    @property
    def n_items(self) -> int:
        return len(self.labels)

    @property
    def shown_spans(self) -> list[tuple[int, int]]:
        return [span for span, shown in zip(self.spans, self.keep, strict=True) if shown]

    def item_of_token(self, token_index: int) -> int | None:
        """The shown item holding token `token_index`, or None when that token is hidden."""
        for item, (start, stop) in enumerate(self.shown_spans):
            if start <= token_index < stop:
                return item
        return None

    def matrix(self, attn: np.ndarray) -> np.ndarray:
        """(..., T, T) -> (..., W, W) as the page shows it."""
        out = merge_pieces(attn, self.spans) if self.merged else attn
        return drop_tokens(out, self.keep) if self.renormalised else out

    def row(self, attn: np.ndarray, item: int) -> np.ndarray:
        """(..., T, T) -> (..., W): the shown row of item `item`, without transforming every row."""
        start, stop = self.shown_spans[item]
        row = attn[..., start:stop, :].mean(axis=-2)  # (..., T): from a word = mean of its pieces
        if self.merged:
            starts = np.array([s for s, _ in self.spans], dtype=np.intp)
            row = np.add.reduceat(row, starts, axis=-1)  # (..., all spans): to a word = sum
        if self.renormalised:
            row = _renormalise(row[..., self.keep])
        return row


def token_view(
    tokens: Sequence[str],
    word_ids: Sequence[int | None],
    special_mask: Sequence[bool],
    *,
    merge_words: bool = False,
    hide_special: bool = False,
) -> TokenView:
    """The TokenView for a tokenised input; merge first, then hide (specials are always alone)."""
    special = np.asarray(special_mask, dtype=bool)
    spans = word_spans(word_ids, special) if merge_words else [(i, i + 1) for i in range(len(tokens))]
    keep = np.array([not special[s] for s, _ in spans], dtype=bool)
    if hide_special and not keep.any():
        hide_special = False  # nothing but special tokens (an empty input): hiding would leave nothing
    if not hide_special:
        keep = np.ones(len(spans), dtype=bool)
    labels = [
        "".join(piece_text(t) for t in tokens[s:e]) if merge_words and not special[s] else _label(tokens[s])
        for (s, e), shown in zip(spans, keep, strict=True)
        if shown
    ]
    return TokenView(labels=labels, spans=spans, keep=keep, merged=merge_words, renormalised=hide_special)


@dataclass(frozen=True)
class HeadScore:
    layer: int  # 0-indexed
    head: int  # 0-indexed
    weight: float


def rank_heads(weights: np.ndarray, top: int | None = None) -> list[HeadScore]:
    """Heads ordered by a per-head score, highest first; `weights` is (L, H), e.g. attn[:, :, a, b]."""
    flat = np.asarray(weights, dtype=np.float64).ravel()
    order = np.argsort(-flat, kind="stable")[: top if top is not None else None]
    n_heads = weights.shape[1]
    return [HeadScore(int(i // n_heads), int(i % n_heads), float(flat[i])) for i in order]


def head_stats(attn: np.ndarray, special_mask: Sequence[bool]) -> dict[str, np.ndarray]:
    """Per-head summaries of (L, H, T, T) attention, each (L, H), averaged over query rows.

    to_special: share of attention on [CLS]/[SEP]; to_previous / to_self / to_next: share on the
    token one to the left / itself / one to the right (the patterns Clark et al. found in BERT);
    entropy: mean row entropy in bits (0 = each token looks at one token; log2 T = uniform);
    max_weight: mean of each row's largest weight.
    """
    t = attn.shape[-1]
    special = np.asarray(special_mask, dtype=bool)
    stats = {
        "to_special": attn[..., special].sum(axis=-1).mean(axis=-1),
        "to_self": np.diagonal(attn, axis1=-2, axis2=-1).mean(axis=-1),
        "to_previous": np.diagonal(attn, offset=-1, axis1=-2, axis2=-1).sum(axis=-1) / t,
        "to_next": np.diagonal(attn, offset=1, axis1=-2, axis2=-1).sum(axis=-1) / t,
        "max_weight": attn.max(axis=-1).mean(axis=-1),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(attn > 0, attn * np.log2(attn), 0.0)
    stats["entropy"] = -plogp.sum(axis=-1).mean(axis=-1)
    return {name: np.asarray(value, dtype=np.float32) for name, value in stats.items()}


def token_similarity(hidden: np.ndarray) -> np.ndarray:
    """(T, D) -> (T, T) cosine similarity of the tokens' hidden states at one layer."""
    norms = np.linalg.norm(hidden, axis=-1, keepdims=True)
    unit = hidden / np.maximum(norms, np.finfo(hidden.dtype).tiny)
    return unit @ unit.T


# ---- naming a token by its word ----------------------------------------------------------------------

_REF = re.compile(r"^(?P<word>.+?)(?:#(?P<nth>[1-9][0-9]*))?(?:~(?P<piece>[1-9][0-9]*))?$", re.DOTALL)


def word_ref(words: Sequence[str], spans: Sequence[tuple[int, int]], token: int) -> str:
    """The reference of token `token`: its word's text, "#n" for the word's n-th occurrence (n ≥ 2,
    counted case-insensitively), "~k" when the token is the word's k-th piece (k ≥ 2).

    `words` holds one label per span (word_spans' spans; special tokens are words of their own).
    A word whose own text could be read as carrying a suffix always gets "#n", so it reads back.
    """
    item = next(i for i, (start, stop) in enumerate(spans) if start <= token < stop)
    text = words[item]
    nth = sum(1 for w in words[:item] if w.casefold() == text.casefold()) + 1
    piece = token - spans[item][0] + 1
    parsed = _REF.match(text)
    ambiguous = parsed is None or parsed["word"] != text
    ref = text + (f"#{nth}" if nth > 1 or ambiguous else "")
    return ref + (f"~{piece}" if piece > 1 else "")


def find_word_ref(ref: str, words: Sequence[str], spans: Sequence[tuple[int, int]]) -> int | None:
    """The token index `ref` (word_ref's output) names in these words, or None when it is not there."""
    match = _REF.match(ref)
    if match is None:
        return None
    wanted, nth, piece = match["word"].casefold(), int(match["nth"] or 1), int(match["piece"] or 1)
    seen = 0
    for word, (start, stop) in zip(words, spans, strict=True):
        if word.casefold() == wanted:
            seen += 1
            if seen == nth:
                return start + piece - 1 if piece <= stop - start else None
    return None


# ---- which heads link one token to another, and how specifically ----------------------------------------

# A row "looks at" the target when it gives the target at least this share of the focus's weight and
# at least LOOKS_AT_MIN; a head "looks at the target from everywhere" when at least EVERYWHERE_SHARE
# of the other rows do. The explore page states the rule in these words.
LOOKS_AT_SHARE = 0.5
LOOKS_AT_MIN = 0.1
EVERYWHERE_SHARE = 0.5


@dataclass(frozen=True)
class HeadLink:
    """How one head links a focus token to a target token."""

    layer: int  # 0-indexed
    head: int  # 0-indexed
    weight: float  # attention from the focus to the target
    others: float  # mean attention to the target from the other rows (0 when there are none)
    specific: float  # weight - others: how much more the focus looks at the target than the rest
    looking: float  # share of the other rows that look at the target (see LOOKS_AT_SHARE)
    everywhere: bool  # at least EVERYWHERE_SHARE of the other rows look at the target


def rank_heads_specific(
    attn: np.ndarray, focus: int, target: int, exclude: Sequence[bool] | None = None, causal: bool = False
) -> list[HeadLink]:
    """Every head of (L, H, W, W) attention, ranked by how specifically row `focus` looks at column
    `target`: its weight minus the mean weight the other rows give the target, highest first.

    The other rows are all rows but the focus, the target itself and those `exclude` marks (e.g.
    [CLS]/[SEP]); in a causal model (`causal`) only the rows after the target, the ones that can see
    it (a row before it gives it 0 by the mask, which says nothing about the head). Rows and columns
    are items in token order (tokens, or words merged from them), so "before" means the same for
    both. With none left, `others` is 0 and no head is flagged.
    """
    w = attn.shape[-1]
    keep = np.ones(w, dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    keep[[focus, target]] = False
    if causal:
        keep[:target] = False
    column = np.asarray(attn[..., :, target], dtype=np.float64)  # (L, H, W): every row to the target
    weight = column[..., focus]  # (L, H)
    rest = column[..., keep]  # (L, H, R)
    n_rest = rest.shape[-1]
    others = rest.mean(axis=-1) if n_rest else np.zeros_like(weight)
    threshold = np.maximum(LOOKS_AT_SHARE * weight, LOOKS_AT_MIN)[..., None]  # (L, H, 1)
    looking = (rest >= threshold).mean(axis=-1) if n_rest else np.zeros_like(weight)
    specific = weight - others
    n_heads = attn.shape[1]
    order = np.argsort(-specific.ravel(), kind="stable")
    links = []
    for flat in order:
        layer, head = divmod(int(flat), n_heads)
        links.append(
            HeadLink(
                layer,
                head,
                float(weight[layer, head]),
                float(others[layer, head]),
                float(specific[layer, head]),
                float(looking[layer, head]),
                bool(n_rest and looking[layer, head] >= EVERYWHERE_SHARE),
            )
        )
    return links
