"""An efficient attention variant in every head of the whole model: how far the sentence embedding
moves (1 − cos, core/ablation.py's embedding), how much each layer's attention changes, and the
sweeps that answer "how small can the window be before the embedding moves by more than 0.05?".
The NumPy engine runs the variant through `forward(..., variant=...)`, the same explicit argument
as head ablation.

Letters: L layers, H heads, T tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from core.ablation import embedding_effect, sentence_embedding
from core.result import AttentionResult
from core.variants import Variant

__all__ = [
    "THRESHOLD",
    "Sweep",
    "embedding_change",
    "layer_changes",
    "run_variant",
    "smallest_window",
    "sweep",
]

THRESHOLD = 0.05  # the embedding change the window sweep asks about


def run_variant(engine, result: AttentionResult, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """The model on `result`'s tokens with `variant` in every head: (hidden states (L + 1, T, D),
    attentions (L, H, T, T)); [CLS] and [SEP] are the variant's global tokens."""
    bound = variant.with_globals(result.special_mask)
    hidden, attentions, _ = engine.forward(result.input_ids, result.token_type_ids, variant=bound)
    return hidden, attentions


def layer_changes(reference: np.ndarray, changed: np.ndarray) -> np.ndarray:
    """(L,) each layer's mean row total variation, ½ Σ_j |a_ij − b_ij|, over its heads and rows."""
    return 0.5 * np.abs(np.asarray(changed, np.float64) - reference).sum(axis=-1).mean(axis=(1, 2))


def embedding_change(engine, result: AttentionResult, variant: Variant) -> float:
    hidden, _ = run_variant(engine, result, variant)
    return embedding_effect(sentence_embedding(hidden[-1]), sentence_embedding(result.hidden_states[-1]))


Sweep = list[tuple[int, float]]  # (parameter value, embedding change)


def sweep(engine, result: AttentionResult, variant: Variant, field: str, values: Iterable[int]) -> Sweep:
    """The embedding change with `variant`'s `field` set to each of `values`."""
    return [(v, embedding_change(engine, result, replace(variant, **{field: v}))) for v in values]


def smallest_window(
    engine, result: AttentionResult, threshold: float = THRESHOLD
) -> tuple[int | None, Sweep]:
    """The smallest radius R whose window moves the embedding by at most `threshold`, with every
    larger radius doing so too (the sweep runs R = 1 .. T − 1, where the window is the whole row);
    None when no radius short of the whole row does. Returns (R, the sweep)."""
    found = sweep(engine, result, Variant("window"), "w", range(1, result.n_tokens))
    answer = None
    for radius, change in reversed(found):
        if change > threshold:
            break
        answer = radius
    return answer, found
