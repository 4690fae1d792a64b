"""BERT's masked-language-model head in NumPy: what the model predicts for each [MASK].

BERT was pre-trained to guess hidden words (Devlin et al. 2019, section 3.1, "Task #1: Masked LM").
A checkpoint saved as BertForMaskedLM keeps the head that makes the guess, under `cls.predictions.*`:

    1) transform   h' = LayerNorm(act(h W_t + b_t))         (T, D): the last layer's states, reshaped
    2) decode      logits = h' E^T + b                        (T, V): E the word-embedding table (tied)
    3) softmax     over the vocabulary, one distribution per token

transformers' BertPredictionHeadTransform and BertLMPredictionHead compute the same; the decoder is
tied to the word embeddings unless the checkpoint stores its own `cls.predictions.decoder.weight`.
Sentence-embedding checkpoints such as the bundled all-MiniLM-L6-v2 have no such head: read_head
returns None and fill_masks says which models to load instead.

Letters: T tokens, D hidden width, V vocabulary size, K predictions kept per [MASK].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.lesson.layers import ACTIVATIONS, layer_norm, linear
from core.models.errors import ModelError

__all__ = ["MASK_MODELS", "MaskFill", "MaskedLMHead", "NoMaskedLMHead", "fill_masks", "read_head"]

# Masked-LM BERTs with safetensors weights on the Hugging Face Hub, named to users of a model
# without a head. Too large for the hosted demo's memory bound, so they are offered locally only.
MASK_MODELS = ("google-bert/bert-base-uncased", "google-bert/bert-base-cased")
PREFIX = "cls.predictions."


class NoMaskedLMHead(ModelError, ValueError):
    """The model was saved without BERT's masked-LM head: it cannot predict a [MASK]."""


@dataclass(frozen=True)
class MaskedLMHead:
    """The head's parameters as x @ W (W shaped (d_in, d_out))."""

    w_t: np.ndarray  # (D, D) the transform's dense layer
    b_t: np.ndarray  # (D,)
    ln_gamma: np.ndarray  # (D,) the transform's LayerNorm
    ln_beta: np.ndarray  # (D,)
    decoder: np.ndarray  # (V, D) the word embeddings when tied: logits = h' @ decoder.T + bias
    bias: np.ndarray  # (V,)
    activation: str  # config.hidden_act, a key of core.lesson.layers.ACTIVATIONS
    eps: float  # config.layer_norm_eps
    tokens: tuple[str, ...]  # (V,) the vocabulary by id, read once at load (the tokenizer is shared)
    mask_id: int | None  # the id of [MASK]

    def probabilities(self, hidden: np.ndarray) -> np.ndarray:
        """(T, D) last-layer states -> (T, V) float64 probabilities over the vocabulary."""
        h = linear(hidden.astype(np.float32), self.w_t, self.b_t)  # 1) transform (T, D)
        h = layer_norm(ACTIVATIONS[self.activation](h), self.ln_gamma, self.ln_beta, self.eps)
        logits = (h @ self.decoder.T + self.bias).astype(np.float64)  # 2) decode (T, V)
        logits -= logits.max(axis=-1, keepdims=True)  # 3) softmax, shifted: exp never overflows
        e = np.exp(logits)
        return e / e.sum(axis=-1, keepdims=True)


def read_head(
    tensors: dict[str, np.ndarray], config, word_embeddings: np.ndarray, vocab: dict[str, int]
) -> MaskedLMHead | None:
    """The head from a checkpoint's tensors (named without "bert."), or None when it has none.
    `word_embeddings` (V, D) is the decoder when the checkpoint ties it, as BERT's do; `vocab` maps
    each token to its id (the tokenizer's)."""
    if f"{PREFIX}transform.dense.weight" not in tensors:
        return None
    d, v = config.hidden_size, config.vocab_size

    def take(name: str, *shape: int) -> np.ndarray:
        array = tensors.get(PREFIX + name)
        if array is None or array.shape != shape:
            got = "missing" if array is None else f"shaped {array.shape}"
            raise ModelError(f"the masked-LM head's {PREFIX + name} is {got}, expected {shape}")
        return np.ascontiguousarray(array, dtype=np.float32)

    decoder = take("decoder.weight", v, d) if f"{PREFIX}decoder.weight" in tensors else word_embeddings
    bias = take("decoder.bias", v) if f"{PREFIX}decoder.bias" in tensors else take("bias", v)
    return MaskedLMHead(
        w_t=np.ascontiguousarray(take("transform.dense.weight", d, d).T),  # torch's (out, in) -> x @ W
        b_t=take("transform.dense.bias", d),
        ln_gamma=take("transform.LayerNorm.weight", d),
        ln_beta=take("transform.LayerNorm.bias", d),
        decoder=decoder,
        bias=bias,
        activation=config.hidden_act,
        eps=config.layer_norm_eps,
        tokens=_tokens_by_id(vocab, v),
        mask_id=vocab.get("[MASK]"),
    )


def _tokens_by_id(vocab: dict[str, int], v: int) -> tuple[str, ...]:
    """(V,) each id's token; an id the tokenizer does not name (a padded table) shows as "[id N]"."""
    tokens = [f"[id {i}]" for i in range(v)]
    for token, i in vocab.items():
        if 0 <= i < v:
            tokens[i] = token
    return tuple(tokens)


@dataclass(frozen=True)
class MaskFill:
    """One [MASK]'s position among the tokens and its K most likely words, most likely first."""

    index: int
    predictions: list[tuple[str, float]]  # (token, probability)


def fill_masks(engine, result, top: int = 5) -> list[MaskFill]:
    """The `top` most likely tokens for every [MASK] of `result` (made by `engine`, a BertNumpy),
    from the model's own masked-LM head. NoMaskedLMHead when the model has none."""
    head = getattr(engine, "mlm_head", None)
    if head is None:
        raise NoMaskedLMHead(
            f"{engine.name} has no masked-LM head (cls.predictions.*), so it cannot predict a [MASK]; "
            f"load a masked-LM BERT such as {MASK_MODELS[0]}"
        )
    places = [i for i, t in enumerate(result.input_ids) if head.mask_id is not None and t == head.mask_id]
    if not places:
        return []
    probs = head.probabilities(result.hidden_states[-1][places])  # (M, V)
    fills = []
    for index, row in zip(places, probs, strict=True):
        best = np.argsort(-row, kind="stable")[:top]
        fills.append(MaskFill(index, [(head.tokens[i], float(row[i])) for i in best]))
    return fills
