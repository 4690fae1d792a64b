"""Sampling's warpers, step by step in NumPy: temperature, then top-k, then top-p, then renormalise.
The order and the arithmetic are transformers' own (transformers.generation.logits_process:
TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, chained in that order by
`generate(do_sample=True)`): a cut token's score becomes -inf, so the softmax after the cut gives it
probability 0 and renormalises the tokens kept.

Off values, as transformers' generate reads them: top_k 0 (no top-k) and top_p 1.0 (no top-p).
Ties: top-k keeps every token whose score equals the k-th largest (transformers cuts only scores
*below* it), so it may keep more than k. Top-p sorts the scores ascending and cuts while the
cumulative mass is ≤ 1 - p, always keeping the likeliest token. Where tokens with exactly equal
scores straddle that boundary, transformers' pick among them follows torch.sort, whose order for
ties is unspecified; here the lower token id is kept, as in every ranking of the engine. How many are
kept, and their probabilities, are the same either way.

Letters in shape comments: V the vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.lesson.attention import softmax

__all__ = ["Warped", "sampling_problem", "warp", "with_temperature", "with_top_k", "with_top_p"]

TOP_K_OFF, TOP_P_OFF = 0, 1.0


def sampling_problem(
    temperature: float | None, top_k: int = TOP_K_OFF, top_p: float = TOP_P_OFF
) -> str | None:
    """What is wrong with these settings, in a sentence, or None. Temperature None is greedy."""
    if temperature is not None and not temperature > 0:
        return f"the temperature must be above 0 (or left out for greedy), got {temperature:g}"
    if isinstance(top_k, bool) or int(top_k) != top_k or top_k < 0:
        return f"top-k must be a whole number, 0 (off) or more, got {top_k}"
    if not 0 < top_p <= 1:  # also false for NaN
        return f"top-p must be above 0 and at most 1 (1: off), got {top_p:g}"
    return None


def with_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """TemperatureLogitsWarper: scores / temperature (below 1 sharpens, above 1 flattens)."""
    return np.asarray(logits, dtype=np.float64) / temperature


def with_top_k(scores: np.ndarray, top_k: int) -> np.ndarray:
    """TopKLogitsWarper: -inf for every score below the k-th largest (ties with it are kept);
    k past the vocabulary keeps everything."""
    k = min(int(top_k), scores.shape[-1])
    kth = np.partition(scores, -k)[-k]  # the k-th largest value (torch.topk(scores, k)[0][-1])
    return np.where(scores < kth, -np.inf, scores)


def with_top_p(scores: np.ndarray, top_p: float) -> np.ndarray:
    """TopPLogitsWarper: sort ascending, accumulate the probabilities, and cut every token whose
    cumulative mass (its own and all less likely tokens') is ≤ 1 - p; the likeliest is always kept.
    What is left is the smallest set of likeliest tokens whose mass reaches p."""
    ascending = np.argsort(-scores, kind="stable")[::-1]  # among equal scores, the higher id first
    cumulative = np.cumsum(softmax(scores[ascending]))
    cut = cumulative <= 1 - top_p
    cut[-1] = False  # min_tokens_to_keep = 1
    out = scores.copy()
    out[ascending[cut]] = -np.inf
    return out


@dataclass(frozen=True)
class Warped:
    """One step's next-token distribution before and after the cut."""

    before: np.ndarray  # (V,) softmax(logits / temperature): before top-k and top-p
    after: np.ndarray  # (V,) the distribution drawn from: renormalised over the kept, 0 elsewhere
    order: np.ndarray  # (V,) token ids by `before`, most likely first (equal: lower id first)
    n_kept: int  # the kept tokens are order[:n_kept]
    greedy: bool = False  # temperature off: the likeliest token is taken, no draw

    @property
    def kept_mass(self) -> float:
        """The share of `before`'s mass the kept tokens hold."""
        return float(self.before[self.order[: self.n_kept]].sum())

    def draw(self, rng: np.random.Generator) -> int:
        """The token taken: the likeliest when greedy (rng untouched), else one draw from `after`."""
        if self.greedy:
            return int(self.order[0])
        return int(rng.choice(len(self.after), p=self.after))


def warp(
    logits: np.ndarray, temperature: float | None, top_k: int = TOP_K_OFF, top_p: float = TOP_P_OFF
) -> Warped:
    """The chain on one step's logits (V,): temperature, top-k, top-p, softmax. Temperature None is
    greedy: the distribution drawn from is all on the likeliest token, and top-k and top-p change
    nothing."""
    if (problem := sampling_problem(temperature, top_k, top_p)) is not None:
        raise ValueError(problem)
    scores = with_temperature(logits, 1.0 if temperature is None else temperature)
    before = softmax(scores)
    order = np.argsort(-scores, kind="stable")
    if temperature is None:
        after = np.zeros_like(before)
        after[order[0]] = 1.0
        return Warped(before, after, order, 1, greedy=True)
    if top_k != TOP_K_OFF:
        scores = with_top_k(scores, top_k)
    if top_p < TOP_P_OFF:  # transformers' generate adds the top-p warper only below 1
        scores = with_top_p(scores, top_p)
    n_kept = int(np.isfinite(scores).sum())
    return Warped(before, softmax(scores), order, n_kept)
