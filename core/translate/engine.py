"""The translator as the pages and the command line use it: loaded from its folder (a BART
checkpoint, core/translate/trainer.py's `save`), it translates a typed English sentence greedily and
returns every attention of that translation, in its three kinds.

    cross[l, h, t, s]    decoder layer l, head h: from the step that writes target token t to
                         source token s (the rows of the cross-attention view)
    encoder[l, h, i, j]  the source's self-attention;  decoder[l, h, t, u] the target's (causal)

The target's tokens are the words written and </s>; the source's, the words typed and </s>. A word
the grammar does not know is refused with one line naming it, as is empty text or text past the
model's positions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.lesson.attention import softmax
from core.models.result import AttentionResult
from core.translate.checkpoint import from_state_dict
from core.translate.data import BOS, UNK
from core.translate.measures import greedy
from core.translate.model import TranslatorConfig, encode, forward, param_shapes

__all__ = [
    "TRANSLATOR_DIR",
    "TRANSLATOR_KEY",
    "Translation",
    "TranslatorEngine",
    "TranslatorInputError",
    "is_translator",
    "translator_dir",
]

TRANSLATOR_KEY = "translator"  # the shipped translator, as links and the command line name it
TRANSLATOR_DIR = Path(__file__).resolve().parents[2] / "models" / "translator"


class TranslatorInputError(ValueError):
    """Text the translator cannot read; the message is one line for the user."""


@dataclass(frozen=True)
class Translation:
    source_tokens: list[str]  # the words typed (lower-cased), then </s>
    target_tokens: list[str]  # the words written, then </s> (when it was written)
    cross: np.ndarray  # (L, H, T, S)
    encoder: np.ndarray  # (L_enc, H, S, S)
    decoder: np.ndarray  # (L, H, T, T)
    next_probs: np.ndarray  # (T, V) at each step, the probability of every word it could write there


class TranslatorEngine:
    """TranslatorEngine(folder).translate(text) -> Translation."""

    def __init__(self, folder: str | Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        bart = json.loads((folder / "config.json").read_text())
        self.config = TranslatorConfig(
            vocab_size=bart["vocab_size"],
            d_model=bart["d_model"],
            heads=bart["decoder_attention_heads"],
            ffn=bart["decoder_ffn_dim"],
            encoder_layers=bart["encoder_layers"],
            decoder_layers=bart["decoder_layers"],
            max_positions=bart["max_position_embeddings"],
        )
        state = load_file(str(folder / "model.safetensors"))
        self.params = from_state_dict(state, list(param_shapes(self.config)))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.words = {i: w for w, i in self.tokenizer.get_vocab().items()}

    def source_ids(self, text: str) -> np.ndarray:
        """(S,) the ids of `text` and </s>, or TranslatorInputError saying what is wrong."""
        encoding = self.tokenizer.encode(text)
        if len(encoding.ids) <= 1:
            raise TranslatorInputError("type an English sentence, such as “the black cat sees the dog”")
        spans = zip(encoding.offsets, encoding.ids, strict=True)
        unknown = [text[start:stop] for (start, stop), i in spans if i == UNK]  # as typed
        if unknown:
            words = ", ".join(f"“{w}”" for w in dict.fromkeys(unknown))
            raise TranslatorInputError(
                f"the translator does not know {words}: it learned a small grammar's words"
            )
        if len(encoding.ids) > self.config.max_positions:
            raise TranslatorInputError(
                f"{len(encoding.ids) - 1} words: the translator reads at most {self.config.max_positions - 1}"
            )
        return np.asarray(encoding.ids)

    def translate(self, text: str) -> Translation:
        """Greedy translation of `text`, and the attention of one pass over it and its translation."""
        src = self.source_ids(text)[None, :]
        written = greedy(self.params, self.config, src)[0]
        ended = len(written) + 1 < self.config.max_positions  # it wrote </s> before running out
        tgt = np.asarray([[BOS, *written]])
        logits, cache = forward(self.params, self.config, src, tgt)
        rows = len(written) + ended  # the steps that wrote a token
        return Translation(
            source_tokens=[self.words[int(i)] for i in src[0]],
            target_tokens=[self.words[int(i)] for i in written] + (["</s>"] if ended else []),
            cross=_stacked(cache["decoder"], "cross")[:, :, :rows],
            encoder=_stacked(cache["encoder"], "self"),
            decoder=_stacked(cache["decoder"], "self")[:, :, :rows, :rows],
            next_probs=softmax(logits[0, :rows].astype(np.float64)).astype(np.float32),
        )

    def encoder_result(self, text: str, model: str) -> AttentionResult:
        """The encoder's self-attention on `text` as every other model's AttentionResult (`attend`):
        hidden states are each encoder layer's input, then its output."""
        src = self.source_ids(text)[None, :]
        memory, cache = encode(self.params, self.config, src)
        tokens = [self.words[int(i)] for i in src[0]]
        return AttentionResult(
            tokens=tokens,
            attentions=_stacked(cache, "self").astype(np.float32),
            hidden_states=np.stack([*(layer["self"]["x_q"][0] for layer in cache["layers"]), memory[0]]),
            special_mask=np.array([t == "</s>" for t in tokens]),
            word_ids=[None if t == "</s>" else i for i, t in enumerate(tokens)],
            model=model,
            engine="numpy",
            input_ids=src[0],
        )


def _stacked(side: dict, kind: str) -> np.ndarray:
    """One kind of attention of a one-sentence pass, every layer: (L, H, T_q, T_k)."""
    return np.stack([layer[kind]["probs"][0] for layer in side["layers"]])


def translator_dir(model: str) -> Path:
    """The folder of `model`: "translator" (the one that ships) or a folder path."""
    folder = TRANSLATOR_DIR if model == TRANSLATOR_KEY else Path(model).expanduser()
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        raise TranslatorInputError(f"{folder} holds no translator (model.safetensors and tokenizer.json)")
    return folder


def is_translator(model: str) -> bool:
    """Whether `model` names a translator: the shipped one, or a folder holding a BART checkpoint."""
    if model == TRANSLATOR_KEY:
        return True
    config = Path(model).expanduser() / "config.json"
    try:
        return config.is_file() and json.loads(config.read_text()).get("model_type") == "bart"
    except (OSError, ValueError):
        return False
