"""An efficient attention variant in every head of the whole model: how far the sentence embedding
moves (1 − cos, core/measures/ablation.py's embedding), how much each layer's attention changes, and the
sweeps that answer "how small can the window be before the embedding moves by more than 0.05?".
The NumPy engine runs the variant through `forward(..., variant=...)`, the same explicit argument
as head ablation.

Letters: L layers, H heads, T tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from core.cost.variants import Variant
from core.measures.ablation import embedding_effect, sentence_embedding
from core.measures.qk_space import head_queries_keys
from core.models.result import AttentionResult

__all__ = [
    "THRESHOLD",
    "HeadComparison",
    "Sweep",
    "compare_head",
    "embedding_change",
    "first_of_the_rest",
    "head_qkv",
    "layer_changes",
    "run_variant",
    "smallest_window",
    "sweep",
    "sweep_radii",
    "variant_effect",
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


def variant_effect(engine, result: AttentionResult, variant: Variant) -> tuple[float, np.ndarray]:
    """(how far the sentence embedding moves, 1 − cos; each layer's attention change, (L,))."""
    hidden, attentions = run_variant(engine, result, variant)
    change = embedding_effect(sentence_embedding(hidden[-1]), sentence_embedding(result.hidden_states[-1]))
    return change, layer_changes(result.attentions, attentions)


def embedding_change(engine, result: AttentionResult, variant: Variant) -> float:
    return variant_effect(engine, result, variant)[0]


Sweep = list[tuple[int, float]]  # (parameter value, embedding change)


def sweep(engine, result: AttentionResult, variant: Variant, field: str, values: Iterable[int]) -> Sweep:
    """The embedding change with `variant`'s `field` set to each of `values`."""
    return [(v, embedding_change(engine, result, replace(variant, **{field: v}))) for v in values]


def sweep_radii(t: int, every_up_to: int = 16, step: float = 1.25) -> list[int]:
    """Window radii to try on T tokens: each of 1 .. every_up_to, then a grid growing by `step`
    up to T − 1 (where the window is the whole row), which is always tried."""
    last = max(t - 1, 1)
    radii = list(range(1, min(every_up_to, last) + 1))
    while radii[-1] < last:
        radii.append(min(last, max(radii[-1] + 1, round(radii[-1] * step))))
    return radii


def smallest_window(
    engine, result: AttentionResult, threshold: float = THRESHOLD, radii: Iterable[int] | None = None
) -> tuple[int | None, Sweep]:
    """The smallest radius R whose window moves the embedding by at most `threshold`, with every
    larger radius tried doing so too (default: every R = 1 .. T − 1, where the window is the whole
    row); None when no radius short of the whole row does. Returns (R, the sweep)."""
    radii = range(1, result.n_tokens) if radii is None else radii
    found = sweep(engine, result, Variant("window"), "w", radii)
    return first_of_the_rest(found, threshold), found


def first_of_the_rest(found: Sweep, threshold: float = THRESHOLD) -> int | None:
    """The smallest value from which on every change in the sweep is at most `threshold`."""
    answer = None
    for value, change in reversed(found):
        if change > threshold:
            break
        answer = value
    return answer


# ---- one head, every variant ---------------------------------------------------------------------


def head_qkv(x: np.ndarray, weights, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T, D) hidden states entering a layer -> head `head`'s query, key and value, (T, d_k) each.
    `weights` as BertNumpy.layer_weights gives them."""
    query, key = head_queries_keys(x, weights, head)
    cols = slice(head * weights.d_k, (head + 1) * weights.d_k)
    value = np.asarray(x, dtype=np.float32) @ weights.w_v[:, cols] + weights.b_v[cols]
    return query, key, value


@dataclass(frozen=True)
class HeadComparison:
    """One variant against full attention on one head's real Q, K, V."""

    weights: np.ndarray  # (T, T) the variant's effective matrix
    output: np.ndarray  # (T, d_k)
    tv: float  # mean row total variation against full attention's weights
    relative_error: float  # ‖o − o_full‖ / ‖o_full‖ (Frobenius)


def compare_head(variant: Variant, query, key, value, reference: tuple[np.ndarray, np.ndarray] | None = None):
    """`variant` on one head against full attention (`reference`: full's (output, weights), when
    already computed)."""
    full_output, full_weights = reference if reference is not None else Variant("full")(query, key, value)
    output, weights = variant(query, key, value)
    tv = 0.5 * np.abs(np.asarray(weights, np.float64) - full_weights).sum(axis=1).mean()
    error = np.linalg.norm(output - full_output) / np.linalg.norm(full_output)
    return HeadComparison(np.asarray(weights), np.asarray(output), float(tv), float(error))
