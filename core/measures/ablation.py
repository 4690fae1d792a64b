"""Does a head matter? Zero-ablation of heads, measured on what the model outputs.

An encoder's output here is its sentence embedding, pooled as sentence-transformers pools the bundled
all-MiniLM-L6-v2: the mean of the last layer's hidden states over every token ([CLS] and [SEP]
included), L2-normalised. For any other BERT the same mean-pooled last layer stands in for an output.
A head's effect is 1 − cos(embedding with the head ablated, embedding without): 0 when nothing moves.

A decoder's output is what it was trained to give: its next-token probabilities after the text (the
last position through the final layer norm and the unembedding). A head's effect is the total
variation distance ½ Σ |p − q| between the two distributions: the share of probability that moves
to other tokens, 0 when nothing moves and 1 when the two share nothing.

Ablating a head zeroes its weighted sum (its d_k columns of step 6's output) before W^O, as the head
masks of Michel, Levy and Neubig (2019), "Are Sixteen Heads Really Better than One?" (NeurIPS). The
engines read the set of heads as one argument of `run` (core/models/bert.py encoder_layer;
core/models/pretrained.py for the torch reference). A head of layer l changes nothing before layer l, so the
NumPy engine's sweep restarts from the hidden state entering layer l (BertNumpy.layers_from).

Letters: L layers, H heads, T tokens, D hidden size.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from core.lesson.attention import softmax
from core.models.architectures import is_decoder
from core.models.interventions import check_heads

__all__ = ["ablated_last_hidden", "embedding_effect", "head_effects", "model_output", "output_effect"]
__all__ += ["sentence_embedding", "total_variation"]


def sentence_embedding(last_hidden: np.ndarray) -> np.ndarray:
    """(T, D) last layer's hidden states -> (D,) float64: their mean over every token, L2-normalised."""
    pooled = np.asarray(last_hidden, dtype=np.float64).mean(axis=0)
    return pooled / np.linalg.norm(pooled)


def embedding_effect(changed: np.ndarray, reference: np.ndarray) -> float:
    """1 − cos between two embeddings (unit vectors from sentence_embedding), clipped at 0 so that
    rounding never shows a tiny negative effect."""
    return max(0.0, 1.0 - float(np.dot(changed, reference)))


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """½ Σ |p − q| between two probability vectors: the share of probability that moved."""
    return 0.5 * float(np.abs(np.asarray(p, dtype=np.float64) - q).sum())


def model_output(engine, last_hidden: np.ndarray) -> np.ndarray:
    """(T, D) last hidden states -> what an effect is measured on: a decoder's next-token
    probabilities after the text (V,), an encoder's sentence embedding (D,)."""
    if is_decoder(engine):
        return softmax(np.asarray(engine.unembed(last_hidden[-1]), dtype=np.float64))
    return sentence_embedding(last_hidden)


def output_effect(engine, changed: np.ndarray, reference: np.ndarray) -> float:
    """How far model_output moved: total variation for a decoder, 1 − cos for an encoder."""
    return total_variation(changed, reference) if is_decoder(engine) else embedding_effect(changed, reference)


def ablated_last_hidden(engine, result, heads: Iterable[tuple[int, int]]) -> np.ndarray:
    """(T, D) last hidden states of `result`'s input with `heads` ablated. The NumPy engines restart
    from result's hidden state entering the first changed layer; the torch references rerun."""
    heads = check_heads(heads, result.n_layers, result.n_heads)
    if not heads:
        return result.hidden_states[-1]
    first = min(layer for layer, _ in heads)
    if hasattr(engine, "layers_from"):  # NumPy: layers before `first` are reused, not recomputed
        out = engine.layers_from(first, result.hidden_states[first], ablate=heads)
        return (out.hidden_states if is_decoder(engine) else out[0])[-1]  # GPT-2 returns a Forward
    return engine.hidden_states(result.input_ids, result.token_type_ids, ablate=heads)[-1]


def head_effects(engine, result) -> np.ndarray:
    """(L, H) float64: each head's effect on the model's output (model_output) when it alone is
    ablated."""
    reference = model_output(engine, result.hidden_states[-1])
    effects = np.zeros((result.n_layers, result.n_heads))
    for layer in range(result.n_layers):
        for head in range(result.n_heads):
            last = ablated_last_hidden(engine, result, [(layer, head)])
            effects[layer, head] = output_effect(engine, model_output(engine, last), reference)
    return effects
