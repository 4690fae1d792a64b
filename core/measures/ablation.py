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
NumPy engine's sweep restarts from the hidden state entering layer l (BertNumpy.layers_from). On a
NumPy decoder the grid is patching's sweep with zeros for the patched values (core/measures/sweep.py):
a layer's ablated runs go through the later blocks as one batch, and are unembedded together.

Letters: L layers, H heads, T tokens, D hidden size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from core.lesson.attention import softmax
from core.measures.sweep import Clean, batched, patched_runs
from core.models.architectures import is_decoder
from core.models.interventions import Patch, check_heads

__all__ = ["ablated_last_hidden", "embedding_effect", "head_effects", "model_output", "output_effect"]
__all__ += ["next_token_probs", "sentence_embedding", "total_variation"]

Progress = Callable[[int, int], None]  # (runs done, runs in all)
UNEMBED_ROWS = 64  # a decoder's last rows unembedded at once: (64, V) probabilities, 25 MB on SmolLM2


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
        return next_token_probs(engine, last_hidden[-1])
    return sentence_embedding(last_hidden)


def next_token_probs(engine, final: np.ndarray) -> np.ndarray:
    """A decoder's last hidden state after its final norm, (D,) or B runs' (B, D) -> the next-token
    probabilities (V,) or (B, V), float64. B rows at once read the unembedding once (113 MB on SmolLM2)."""
    return softmax(np.asarray(engine.unembed(final), dtype=np.float64))


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


def head_effects(engine, result, progress: Progress | None = None) -> np.ndarray:
    """(L, H) float64: each head's effect on the model's output (model_output) when it alone is
    ablated. progress(done, total) is called as the runs finish."""
    if batched(engine):
        return _decoder_head_effects(engine, result, progress)
    reference = model_output(engine, result.hidden_states[-1])
    effects = np.zeros((result.n_layers, result.n_heads))
    for done, (layer, head) in enumerate(np.ndindex(effects.shape), start=1):
        last = ablated_last_hidden(engine, result, [(layer, head)])
        effects[layer, head] = output_effect(engine, model_output(engine, last), reference)
        if progress is not None:
            progress(done, effects.size)
    return effects


def _decoder_head_effects(engine, result, progress: Progress | None) -> np.ndarray:
    """head_effects on a NumPy decoder: each head patched with zeros at every position, so no position
    is shared with the clean run (the runs start at 0); a layer's runs batched (sweep.patched_runs).
    The runs' last rows are unembedded together at the end, UNEMBED_ROWS at a time: the unembedding is
    read once per batch, not once per run (on SmolLM2, 113 MB 270 times)."""
    clean = Clean(result.input_ids, None, result.hidden_states)
    zeros = np.zeros((result.n_tokens, engine.head_size), np.float32)  # a head's weighted sum, ablated
    last = np.empty((result.n_layers, result.n_heads, result.hidden_states.shape[-1]), np.float32)
    for layer in range(result.n_layers):
        patches = [Patch(heads={(layer, head): zeros}) for head in range(result.n_heads)]
        for head, hidden in enumerate(patched_runs(engine, clean, layer, patches)):
            last[layer, head] = hidden[-1, -1]  # the last position, after the final norm
            if progress is not None:
                progress(layer * result.n_heads + head + 1, last.shape[0] * last.shape[1])
    reference = model_output(engine, result.hidden_states[-1])
    rows = last.reshape(-1, last.shape[-1])
    effects = [
        total_variation(probs, reference)
        for at in range(0, len(rows), UNEMBED_ROWS)
        for probs in next_token_probs(engine, rows[at : at + UNEMBED_ROWS])
    ]
    return np.reshape(effects, last.shape[:2])
