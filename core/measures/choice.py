"""Which continuation a decoder prefers: the log-probability it gives each candidate after a prefix.

    log P(option | prefix) = sum over the option's tokens o_1..o_k of log P(o_j | prefix, o_1..o_j-1)

The sum reads the logits at the prefix's last position and at each of the option's tokens but its last,
so each text (prefix + option) is read left to right, as the whole text. A causal model's logits at a
position read nothing after it: the texts of one prefix run as one batch, each the prefix and the
option but its last token, padded at the end to the longest (a text that begins another is read
inside it), and prefixes of the same length in tokens share that batch (`choose_each`: explore's
trophy sentence and its partner are one forward pass, not four). The option is tokenized on its own,
so its leading space matters: " trophy" is one word after "the", "trophy" would be glued to it. A sum
favours short options (every token costs probability), so the verdict compares options of the same
length in tokens, or says that they differ.

This is what the model does, not what its attention shows: on the source articles' trophy sentence
a head may link "it" to "trophy" while the model gives " suitcase" the higher probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.models.bert import TextError

__all__ = ["Option", "choose", "choose_each", "log_softmax", "option_ids", "verdict"]


@dataclass(frozen=True)
class Option:
    text: str  # as typed, with its leading space
    tokens: list[str]  # its tokens, decoded (" trophy")
    token_ids: list[int]
    logprob: float  # log P(option | prefix), natural log, summed over its tokens
    first_logprob: float | None = None  # log P of its first token alone (options of different lengths)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, in float64 (a sum of log-probabilities keeps its digits)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def option_ids(engine, text: str) -> list[int]:
    """A continuation's own token ids: no special tokens (a tokenizer that starts every text with
    <s>, as the letter model's does, would otherwise score <s> as the option's first token)."""
    return list(engine.tokenizer.encode(text, add_special_tokens=False).ids) if text else []


def choose(engine, prefix: str, options: Sequence[str]) -> tuple[list[str], list[Option]]:
    """(the prefix's tokens, each option scored) for a decoder engine (core/models/decoder.py).
    TextError for an empty prefix, or an option with no tokens."""
    return choose_each(engine, [prefix], options)[0]


def choose_each(
    engine, prefixes: Sequence[str], options: Sequence[str]
) -> list[tuple[list[str], list[Option]]]:
    """choose for each prefix with the same options, the prefixes of one length in tokens read as one
    batch (a forward pass of B texts, (B, T, D))."""
    prefix_ids = [list(engine.encode(prefix).ids) for prefix in prefixes]
    ids_of = {text: option_ids(engine, text) for text in options}
    for ids in prefix_ids:
        if len(ids) + 1 > engine.max_tokens:
            raise TextError(f"the prefix has {len(ids)} tokens: no room for an option in the context")
    for text, ids in ids_of.items():
        if not ids:
            raise TextError(f"the option {text!r} has no tokens: type a word, with its leading space")
        if max(map(len, prefix_ids)) + len(ids) > engine.max_tokens:
            raise TextError(f"the prefix and the option {text[:40]!r} are longer than the model's context")
    scored: dict[int, list[Option]] = {}
    for n_prefix in dict.fromkeys(map(len, prefix_ids)):
        group = [i for i, ids in enumerate(prefix_ids) if len(ids) == n_prefix]
        read = {i: [prefix_ids[i] + ids_of[text][:-1] for text in options] for i in group}
        final, rows = _read_texts(engine, [t for texts in read.values() for t in texts])  # (B, T, D)
        for i, texts in read.items():
            scored[i] = [
                _scored(engine, text, ids_of[text], final[rows[tuple(t)]], n_prefix)
                for text, t in zip(options, texts, strict=True)
            ]
    return [([engine.decode(t) for t in ids], scored[i]) for i, ids in enumerate(prefix_ids)]


def _read_texts(engine, texts: list[list[int]]) -> tuple[np.ndarray, dict[tuple[int, ...], int]]:
    """The final hidden states of the fewest texts that hold every one of `texts` (a text that begins
    another is read inside it), as one batch padded at the end, and which row holds each text."""
    kept = sorted({tuple(t) for t in texts}, key=len, reverse=True)
    kept = [t for n, t in enumerate(kept) if not any(k[: len(t)] == t for k in kept[:n])]
    rows = {tuple(t): next(r for r, k in enumerate(kept) if k[: len(t)] == tuple(t)) for t in texts}
    if len(kept) == 1:
        return engine.forward(np.array(kept[0])).hidden_states[-1][None], rows
    width = len(kept[0])  # the longest; the padding (the text's last token again) is never read
    padded = [np.array(t + t[-1:] * (width - len(t))) for t in kept]
    for ids in padded:
        engine.check_ids(ids, 0)
    batch = np.stack([engine.embed(ids) for ids in padded])  # (B, T, D)
    return engine.layers_from(0, batch).hidden_states[-1], rows


def _scored(engine, text: str, ids: list[int], final: np.ndarray, n_prefix: int) -> Option:
    """One option from its text's final hidden states (T, D): the logits after the prefix and after
    each of its tokens but the last."""
    logprobs = log_softmax(engine.unembed(final[n_prefix - 1 : n_prefix - 1 + len(ids)]))  # (k, V)
    each = logprobs[np.arange(len(ids)), ids]
    return Option(text, [engine.decode(i) for i in ids], ids, float(each.sum()), float(each[0]))


def verdict(options: Sequence[Option]) -> str:
    """One sentence from the numbers: which option the model prefers, and by how much."""
    if len(options) < 2:
        return "Give two options to compare."
    best, second = sorted(options, key=lambda o: o.logprob, reverse=True)[:2]
    ratio = float(np.exp(best.logprob - second.logprob))
    lengths = {len(o.token_ids) for o in options}
    note = "" if len(lengths) == 1 else " (they differ in length in tokens: a sum favours the shorter)"
    return (
        f"The model prefers {best.text.strip()!r}: {ratio:.1f}× as probable as {second.text.strip()!r}"
        f" (log-probabilities {best.logprob:.2f} and {second.logprob:.2f}){note}."
    )
