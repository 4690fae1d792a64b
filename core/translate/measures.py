"""What the translator is measured by: its greedy translations (exact match on held-out sentences)
and how well each cross-attention head aligns.

    alignment accuracy of a head = the share of target words (those with a source word in the gold
    alignment) whose largest cross-attention weight, at the decoder step that writes them, is on a
    source word the gold alignment links them to

The decoder step that writes target word t is position t (its input is the word before, or <s>),
teacher-forced on the gold translation: the question is where a head looks while writing each word.
French words that render no English word ("des" before a bare plural) are left out; "ne" and "pas"
both count as right on "not", "du" on "near" or "the".
"""

from __future__ import annotations

import numpy as np

from core.translate.data import BOS, EOS, PAD, make_batch
from core.translate.grammar import Pair
from core.translate.model import TranslatorConfig, cross_attentions, decode, encode, forward

__all__ = ["alignment_accuracy", "exact_from_logits", "exact_match", "greedy", "head_alignment"]


def alignment_accuracy(cross: np.ndarray, pairs: list[Pair]) -> np.ndarray:
    """cross (L, B, H, T, S): the cross-attention of a teacher-forced batch of `pairs` -> (L, H)."""
    correct, total = np.zeros((cross.shape[0], cross.shape[2])), 0
    for b, pair in enumerate(pairs):
        gold: dict[int, set[int]] = {}
        for t, s in pair.alignment:
            gold.setdefault(t, set()).add(s)
        n_src = len(pair.source) + 1  # the words and </s>: padding is never attended
        for t, sources in gold.items():
            looked = cross[:, b, :, t, :n_src].argmax(
                -1
            )  # (L, H) the source position each head looks at most
            correct += np.isin(looked, list(sources))
            total += 1
    return correct / max(total, 1)


def head_alignment(params: dict, config: TranslatorConfig, pairs: list[Pair]) -> np.ndarray:
    """(L, H) alignment accuracy of every cross-attention head on `pairs`."""
    batch = make_batch(pairs)
    _, cache = forward(params, config, batch.src, batch.tgt)
    return alignment_accuracy(cross_attentions(cache), pairs)


def greedy(
    params: dict, config: TranslatorConfig, src: np.ndarray, most: int | None = None
) -> list[list[int]]:
    """src (B, S) padded source ids -> each sentence's greedy translation as ids (without <s> and
    </s>): the likeliest word at each step, until </s> or `most` words (default: the positions)."""
    most = min(most or config.max_positions, config.max_positions) - 1
    memory, cache = encode(params, config, src)
    tgt = np.full((len(src), 1), BOS)
    done = np.zeros(len(src), dtype=bool)
    for _ in range(most):
        logits, _ = decode(params, config, tgt, memory, cache["keys"])
        nxt = np.where(done, PAD, logits[:, -1].argmax(-1))
        done |= nxt == EOS
        tgt = np.concatenate([tgt, nxt[:, None]], axis=1)
        if done.all():
            break
    return [[int(i) for i in row[1:] if i not in (PAD, EOS)] for row in tgt]


def exact_match(params: dict, config: TranslatorConfig, pairs: list[Pair], vocab: dict[str, int]) -> float:
    """The share of `pairs` whose greedy translation is the gold one, word for word."""
    got = greedy(params, config, make_batch(pairs, vocab).src)
    return float(
        np.mean([ids == [vocab[w] for w in pair.target] for ids, pair in zip(got, pairs, strict=True)])
    )


def exact_from_logits(logits: np.ndarray, labels: np.ndarray) -> float:
    """exact_match from one teacher-forced pass: logits (B, T, V) on the gold decoder input, labels
    (B, T) (padding = PAD). Greedy decoding writes the gold translation exactly when, fed the gold
    words so far, the model's likeliest next word is the gold one at every step up to </s>: step by
    step the two prefixes are then the same. So this equals exact_match, without decoding."""
    right = (logits.argmax(-1) == labels) | (labels == PAD)
    return float(right.all(axis=1).mean())
