"""Which continuation a decoder prefers: the log-probability it gives each candidate after a prefix.

    log P(option | prefix) = sum over the option's tokens o_1..o_k of log P(o_j | prefix, o_1..o_j-1)

The prefix runs once; each option then runs on the prefix's KV cache, so the numbers are those of the
whole text (prefix + option) read left to right. The option is tokenized on its own, so its leading
space matters: " trophy" is one word after "the", "trophy" would be glued to it. A sum favours short
options (every token costs probability), so the verdict compares options of the same length in tokens,
or says that they differ.

This is what the model does, not what its attention shows: on the source articles' trophy sentence
a head may link "it" to "trophy" while the model gives " suitcase" the higher probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.models.bert import TextError

__all__ = ["Option", "choose", "log_softmax", "option_ids", "verdict"]


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
    prefix_ids = list(engine.encode(prefix).ids)
    if len(prefix_ids) + 1 > engine.max_tokens:
        raise TextError(f"the prefix has {len(prefix_ids)} tokens: no room for an option in the context")
    before = engine.forward(np.array(prefix_ids))
    after_prefix = log_softmax(engine.unembed(before.hidden_states[-1][-1]))  # (V,): the next token
    scored = []
    for text in options:
        ids = option_ids(engine, text)
        if not ids:
            raise TextError(f"the option {text!r} has no tokens: type a word, with its leading space")
        if len(prefix_ids) + len(ids) > engine.max_tokens:
            raise TextError(f"the prefix and the option {text[:40]!r} are longer than the model's context")
        logprob = float(after_prefix[ids[0]])
        if len(ids) > 1:  # the option's own tokens, read on the prefix's cache
            rest = engine.forward(np.array(ids[:-1]), past=before.cache)
            logprobs = log_softmax(engine.unembed(rest.hidden_states[-1]))  # (k - 1, V)
            logprob += float(logprobs[np.arange(len(ids) - 1), ids[1:]].sum())
        scored.append(
            Option(text, [engine.decode(i) for i in ids], ids, logprob, float(after_prefix[ids[0]]))
        )
    return [engine.decode(i) for i in prefix_ids], scored


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
