"""Two readings of a decoder that need no training: the logit lens and attention sinks.

Logit lens (nostalgebraist 2020, "interpreting GPT: the logit lens"): every layer's hidden state
read through the model's own final norm and unembedding, as if the model stopped there: the
top guess for the next token at each position and layer, with its probability. The last layer's
reading is the model's real prediction. Attention sinks (Xiao et al. 2023, "Efficient Streaming
Language Models with Attention Sinks"): the share of each head's attention that goes to the first
token, which many heads use as a place to put weight they do not need elsewhere.

Letters: L layers, H heads, T tokens, D width, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.lesson.attention import softmax

__all__ = ["LogitLens", "first_token_share", "likeliest", "logit_lens", "settled_rows"]

LENS_ROWS = 64  # readings unembedded at once: 64 x 49,152 logits of SmolLM2 are 12.6 MB


@dataclass(frozen=True)
class LogitLens:
    top_ids: np.ndarray  # (L + 1, T): each reading's likeliest next token (row 0: the embeddings)
    top_probs: np.ndarray  # (L + 1, T): its probability


def logit_lens(engine, hidden_states: np.ndarray) -> LogitLens:
    """hidden_states (L + 1, T, D) as a NumPy decoder returns them (the last already after its final
    norm: GPT-2's LayerNorm, a Llama's RMSNorm) -> each layer's top next-token guess per position
    and its probability. Every reading is unembedded in one matrix product per LENS_ROWS of them
    (SmolLM2's 31 x 16 readings: 8 products, not 31 small ones), and only what the grid shows is
    kept: the top token's probability is 1 / sum(exp(logits - top logit)), the softmax at its
    maximum (the exponentials in float32, at most 1, summed in float64), so no (T, V) softmax is
    stored (GPT-2's 50,257 tokens at 512 positions are 0.2 GB)."""
    n_rows, n_positions, width = hidden_states.shape
    readings = np.concatenate([engine.final_normed(hidden_states[:-1]), hidden_states[-1:]])
    readings = readings.reshape(n_rows * n_positions, width)
    top_ids, top_probs = [], []
    for start in range(0, len(readings), LENS_ROWS):
        logits = engine.unembed(readings[start : start + LENS_ROWS])  # (rows, V), float32
        top = logits.argmax(-1)
        logits -= logits[np.arange(len(top)), top][:, None]  # in place: the exponent, at most 0
        top_ids.append(top)
        top_probs.append(1.0 / np.exp(logits, out=logits).sum(-1, dtype=np.float64))
    shape = (n_rows, n_positions)
    return LogitLens(np.concatenate(top_ids).reshape(shape), np.concatenate(top_probs).reshape(shape))


def settled_rows(top_ids: np.ndarray) -> np.ndarray:
    """(L + 1, T) lens guesses -> (T,): at each position, the first reading from which the top guess
    is the model's final one and stays so up to the output (0: the embeddings already; L: only the
    last layer)."""
    agrees = top_ids == top_ids[-1]  # (L + 1, T); the last row always agrees
    broken = ~agrees[::-1]  # from the output down: where agreement first breaks
    run = np.where(broken.any(axis=0), broken.argmax(axis=0), len(top_ids))  # agreeing rows at the top
    return len(top_ids) - run


def first_token_share(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) -> (L, H): each head's mean weight on token 0, over the queries 1 .. T-1 (the
    first token can attend only to itself, so it is left out). NaN with a single token."""
    if attentions.shape[-2] < 2:
        return np.full(attentions.shape[:2], np.nan)
    return attentions[:, :, 1:, 0].mean(axis=-1)


def likeliest(logits: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """(V,) next-token scores -> the k likeliest token ids under their softmax, most likely first
    (ties: the lower id), and their probabilities."""
    probs = softmax(np.asarray(logits, dtype=np.float64))
    best = np.argsort(-probs, kind="stable")[:k]
    return best, probs[best]
