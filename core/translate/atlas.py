"""The translator's head atlas (issue 38 §3): what each of its heads does, in its three kinds, measured
on a fixed corpus of the grammar's sentence pairs. The encoder-decoder counterpart of
core/measures/atlas.py (Clark et al. 2019, "What Does BERT Look At?"), whose thresholds it reuses, plus
one role of its own: the cross-attention head that aligns each French word with the English word it
renders.

The corpus: the held-out pairs training is evaluated on (sample_pairs(CORPUS_PAIRS, EVAL_SEED,
held_out=True): each subject carries an (adjective, noun) pair never trained on), read in one
teacher-forced pass on the gold French: the decoder reads <s> and the gold words so far, as in
training, so every head is measured on the same, correct sentences whatever the model would write.

Letters: L layers, H heads, S source positions (the English words, then </s>), T decoder positions
(<s>, then the French words: position t writes French word t, and the last one writes </s>).

Each statistic is a per-head mean over rows (row = the position that attends), every row of every
pair counted once:
- encoder self-attention, rows: the S source positions. to_end: the share on the source's </s>;
  to_self, to_prev, to_next: on the position itself, the one before, the one after (rows that have
  that neighbour); spread: the row's entropy / log2 S (0 = one word, 1 = an even split).
- decoder self-attention (causal), rows 1 .. T-1 (row 0, <s>, sees only itself). to_start: the share
  on <s>, the decoder's first token; to_self, to_prev; spread: entropy / log2 (t + 1), what row t sees.
- cross-attention, rows: the T decoder positions, keys: the S source positions. alignment:
  core.translate.measures.alignment_accuracy, the share of French words (with a gold link) whose
  largest weight is on an English word the grammar links them to; reordered: the same over the French
  words whose link crosses another pair's ("noir" in "le chat noir" for "the black cat", the verb and
  "pas" in "ne voit pas"), so a head that reads the English in its own order scores low there;
  to_end, spread: as the encoder's. by_position: the alignment, and the reordered one, of the rule
  "French word t reads English word t", a yardstick for both.

Roles (kind_roles): a cross-attention head is an ALIGNER when its alignment is at least
ALIGNER_SCORE; any other head is named after the largest of its kind's shares (SHARE_ROLES) when it
is at least ROLE_SHARE, else BROAD when its spread is at least BROAD_ENTROPY, else MIXED. Pure NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.measures.atlas import BROAD, BROAD_ENTROPY, FIRST_TOKEN, MIXED, ROLE_SHARE
from core.translate.data import make_batch
from core.translate.grammar import Pair, sample_pairs
from core.translate.measures import alignment_accuracy
from core.translate.model import TranslatorConfig, forward
from core.translate.trainer import EVAL_SEED

__all__ = ["ALIGNER", "ALIGNER_SCORE", "BROAD", "BROAD_ENTROPY", "CORPUS_PAIRS", "END_SINK", "EVAL_SEED"]
__all__ += ["FIRST_TOKEN", "KINDS", "KIND_ROLES", "KIND_STATS", "MIXED", "ROLE_SHARE", "SHARE_ROLES"]
__all__ += [
    "KindAtlas",
    "TranslatorAtlas",
    "by_position",
    "corpus_pairs",
    "crossing_links",
    "kind_roles",
    "measure",
]

KINDS = ("encoder", "decoder", "cross")  # the order the page shows them in: as the sentence flows
CORPUS_PAIRS = 200  # training's held-out evaluation: the same pairs, so the alignments agree with it
# "Aligner": the largest weight on a word the French word renders, for at least 70% of French words.
# Chance is far below: a head that looked at a random English word would score about 1 / S (0.1 for
# ten words); the position rule "French word t reads English word t" scores what the corpus's word
# order allows (the page states the share of reordered words).
ALIGNER_SCORE = 0.7
ALIGNER, END_SINK = "aligner", "</s> sink"
SHARE_ROLES = {  # per kind: (role, the share it is read from); on a tie the earlier one wins
    "encoder": (
        (END_SINK, "to_end"),
        ("self", "to_self"),
        ("previous token", "to_prev"),
        ("next token", "to_next"),
    ),
    "decoder": ((FIRST_TOKEN, "to_start"), ("self", "to_self"), ("previous token", "to_prev")),
    "cross": ((END_SINK, "to_end"),),
}
KIND_STATS = {  # per kind, the statistics measured, in the page's order
    "encoder": ("to_end", "to_self", "to_prev", "to_next", "spread"),
    "decoder": ("to_start", "to_self", "to_prev", "spread"),
    "cross": ("alignment", "reordered", "to_end", "spread"),
}
KIND_ROLES = {  # per kind, every role kind_roles can give, in the legend's order
    kind: ((ALIGNER,) if kind == "cross" else ()) + tuple(r for r, _ in SHARE_ROLES[kind]) + (BROAD, MIXED)
    for kind in KINDS
}


@dataclass(frozen=True, eq=False)
class KindAtlas:
    """One kind of attention's heads: each statistic of KIND_STATS[kind] as an (L, H) mean."""

    kind: str  # "encoder", "decoder" or "cross"
    stats: dict[str, np.ndarray]  # name -> (L, H) float64
    n_rows: int  # rows averaged over (the spread's and the shares'; alignment counts French words)

    def __post_init__(self) -> None:
        if tuple(self.stats) != KIND_STATS[self.kind]:
            raise ValueError(f"a {self.kind} atlas has {KIND_STATS[self.kind]}; got {tuple(self.stats)}")

    @property
    def shape(self) -> tuple[int, int]:
        return np.shape(self.stats["spread"])


@dataclass(frozen=True, eq=False)
class TranslatorAtlas:
    kinds: dict[str, KindAtlas]  # in KINDS' order
    n_pairs: int  # sentence pairs measured
    seed: int  # the pairs' seed (sample_pairs), -1 when not known
    n_aligned: int  # French words with a gold link (what alignment is averaged over)
    n_reordered: int  # those whose link crosses another's (what reordered is averaged over)
    by_position: tuple[
        float, float
    ]  # (alignment, reordered) of the rule "French word t reads English word t"

    def roles(self, kind: str) -> np.ndarray:
        return kind_roles(self.kinds[kind])


def corpus_pairs(n: int = CORPUS_PAIRS, seed: int = EVAL_SEED) -> list[Pair]:
    """The atlas's corpus: n held-out pairs from `seed` (training's evaluation pairs by default)."""
    return sample_pairs(n, seed, held_out=True)


def crossing_links(pair: Pair) -> tuple[tuple[int, int], ...]:
    """The pair's links (t, s) of the French words whose link crosses another's: a link (t', s') with
    t' on one side of t and s' on the other side of s. Every link of such a word is kept."""
    links = pair.alignment
    crossing = {t for t, s in links for u, r in links if (t - u) * (s - r) < 0}
    return tuple((t, s) for t, s in links if t in crossing)


def _entropy(rows: np.ndarray) -> np.ndarray:
    """(..., K) rows of weights -> (...) their entropy in bits (0 log 0 = 0)."""
    safe = np.where(rows > 0, rows, 1.0)
    return -(np.where(rows > 0, rows * np.log2(safe), 0.0)).sum(axis=-1)


def _self_sums(a: np.ndarray, causal: bool) -> tuple[dict[str, np.ndarray], int, int]:
    """One pair's self-attention (L, H, N, N) -> (each statistic summed over its rows, rows, rows with
    a neighbour). causal: the decoder's (row 0 left out, the spread against what each row sees)."""
    n = a.shape[-1]
    first = 1 if causal else 0
    rows = a[..., first:, :]  # (L, H, R, N)
    sees = np.arange(first, n) + 1.0 if causal else np.full(n, float(n))
    sums = {
        "to_self": np.diagonal(a, axis1=-2, axis2=-1)[..., first:].sum(axis=-1),
        "to_prev": np.diagonal(a, offset=-1, axis1=-2, axis2=-1).sum(axis=-1),  # a[i, i-1]
        "spread": (_entropy(rows) / np.log2(sees)).sum(axis=-1),
    }
    if causal:
        sums["to_start"] = rows[..., 0].sum(axis=-1)
    else:
        sums["to_end"] = rows[..., -1].sum(axis=-1)
        sums["to_next"] = np.diagonal(a, offset=1, axis1=-2, axis2=-1).sum(axis=-1)  # a[i, i+1]
    return sums, n - first, n - 1


def _cross_sums(a: np.ndarray) -> tuple[dict[str, np.ndarray], int]:
    """One pair's cross-attention (L, H, T, S) -> (to_end and spread summed over the T rows, T)."""
    spread = (_entropy(a) / np.log2(a.shape[-1])).sum(axis=-1)
    return {"to_end": a[..., -1].sum(axis=-1), "spread": spread}, a.shape[-2]


def _mean_self(per_pair: list[np.ndarray], causal: bool) -> KindAtlas:
    """Per-pair (L, H, N, N) arrays -> the kind's means (to_prev and to_next over rows with one)."""
    totals: dict[str, np.ndarray] = {}
    rows = adjacent = 0
    for a in per_pair:
        sums, r, adj = _self_sums(a, causal)
        totals = {k: totals.get(k, 0.0) + v for k, v in sums.items()}
        rows, adjacent = rows + r, adjacent + adj
    kind = "decoder" if causal else "encoder"
    by = {"to_prev": adjacent, "to_next": adjacent}
    return KindAtlas(kind, {k: totals[k] / by.get(k, rows) for k in KIND_STATS[kind]}, rows)


def _stack(layers: list[dict], name: str) -> np.ndarray:
    """One kind of attention of a batched pass, every layer: (L, B, H, T_q, T_k)."""
    return np.stack([layer[name]["probs"] for layer in layers]).astype(np.float64)


def measure(
    params: dict, config: TranslatorConfig, pairs: list[Pair], vocab: dict[str, int], *, seed: int = -1
) -> TranslatorAtlas:
    """The atlas of the translator (`params`, `config`, its tokenizer's `vocab`) on `pairs` (seed: the
    one they were drawn with, recorded; -1 when unknown), from one teacher-forced pass over them all."""
    batch = make_batch(pairs, vocab)
    _, cache = forward(params, config, batch.src, batch.tgt)
    encoder = _stack(cache["encoder"]["layers"], "self")  # (L_enc, B, H, S, S), padded
    decoder = _stack(cache["decoder"]["layers"], "self")  # (L, B, H, T, T)
    cross = _stack(cache["decoder"]["layers"], "cross")  # (L, B, H, T, S)
    sizes = [(len(p.source) + 1, len(p.target) + 1) for p in pairs]  # each pair's own S and T
    enc = _mean_self([encoder[:, b, :, :s, :s] for b, (s, _) in enumerate(sizes)], causal=False)
    dec = _mean_self([decoder[:, b, :, :t, :t] for b, (_, t) in enumerate(sizes)], causal=True)
    totals, rows = {}, 0
    for b, (s, t) in enumerate(sizes):
        sums, r = _cross_sums(cross[:, b, :, :t, :s])
        totals, rows = {k: totals.get(k, 0.0) + v for k, v in sums.items()}, rows + r
    reordered = [replace(p, alignment=crossing_links(p)) for p in pairs]
    stats = {
        "alignment": alignment_accuracy(cross, pairs),
        "reordered": alignment_accuracy(cross, reordered),
        **{k: v / rows for k, v in totals.items()},
    }
    return TranslatorAtlas(
        kinds={"encoder": enc, "decoder": dec, "cross": KindAtlas("cross", stats, rows)},
        n_pairs=len(pairs),
        seed=seed,
        n_aligned=sum(len({t for t, _ in p.alignment}) for p in pairs),
        n_reordered=sum(len({t for t, _ in crossing_links(p)}) for p in pairs),
        by_position=(float(by_position(pairs)[0, 0]), float(by_position(reordered)[0, 0])),
    )


def by_position(pairs: list[Pair]) -> np.ndarray:
    """(1, 1) the alignment of a head that reads English word t while writing French word t (the
    last word, </s>, once t passes it): the yardstick of a head that ignores the words."""
    s, t = max(len(p.source) for p in pairs) + 1, max(len(p.target) for p in pairs) + 1
    one_hot = np.zeros((1, len(pairs), 1, t, s))  # (L, B, H, T, S) with L = H = 1
    for b, pair in enumerate(pairs):
        rows = np.arange(len(pair.target) + 1)
        one_hot[0, b, 0, rows, np.minimum(rows, len(pair.source))] = 1.0
    return alignment_accuracy(one_hot, pairs)


def kind_roles(atlas: KindAtlas) -> np.ndarray:
    """(L, H) role names (the module docstring's rule): ALIGNER for a cross-attention head whose
    alignment is at least ALIGNER_SCORE; otherwise the largest share of SHARE_ROLES[kind] when it is
    at least ROLE_SHARE (the earlier role on a tie), else BROAD when spread >= BROAD_ENTROPY, else MIXED."""
    share_roles = SHARE_ROLES[atlas.kind]
    shares = np.stack([atlas.stats[stat] for _, stat in share_roles])  # (roles, L, H)
    named = np.array([role for role, _ in share_roles], dtype=object)[shares.argmax(axis=0)]
    spread = np.where(atlas.stats["spread"] >= BROAD_ENTROPY, BROAD, MIXED)
    roles = np.where(shares.max(axis=0) >= ROLE_SHARE, named, spread).astype(object)
    if atlas.kind == "cross":
        roles[atlas.stats["alignment"] >= ALIGNER_SCORE] = ALIGNER
    return roles
