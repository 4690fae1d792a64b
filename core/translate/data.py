"""The translator's vocabulary, tokenizer and batches.

One word a token, one vocabulary for both languages (BART shares its embedding table between the
encoder, the decoder and the output): <s> <pad> </s> <unk>, then the grammar's English words, then
its French words not already there ("table" is both). The source is its words and </s>; the decoder
reads <s> and the French words so far, and is asked for the next French word, then </s>:

    source          the  cat  sees  the  dog  </s>
    decoder input   <s>  le   chat  voit le   chien
    labels          le   chat voit  le   chien </s>

so the decoder position that emits target word t is position t, and source position s is source
word s: a gold link (t, s) names a query row and a key column of the cross-attention directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.translate.grammar import Pair, source_words, target_words

__all__ = ["SPECIALS", "Batch", "make_batch", "save_tokenizer", "translator_tokenizer", "vocabulary"]

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # ids 0-3, BART's order
BOS, PAD, EOS, UNK = range(4)


def vocabulary() -> dict[str, int]:
    words = list(dict.fromkeys([*SPECIALS, *source_words(), *target_words()]))
    return {word: i for i, word in enumerate(words)}


def translator_tokenizer():
    """A `tokenizers.Tokenizer`: lower-case, punctuation dropped, split at spaces, one id a word (<unk>
    for others), </s> after the text."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(vocabulary(), unk_token="<unk>"))
    punctuation = normalizers.Replace(Regex(r"[^\w\s]"), " ")  # "dog." reads as "dog"; letters keep accents
    tokenizer.normalizer = normalizers.Sequence([normalizers.Lowercase(), punctuation, normalizers.Strip()])
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS)])
    tokenizer.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tokenizer.add_special_tokens(list(SPECIALS))
    return tokenizer


def save_tokenizer(out: Path, max_positions: int) -> None:
    """tokenizer.json and tokenizer_config.json in `out` (transformers' AutoTokenizer reads them)."""
    translator_tokenizer().save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "pad_token": "<pad>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": max_positions,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


@dataclass(frozen=True)
class Batch:
    src: np.ndarray  # (B, S) source ids, </s> after the words, then <pad>
    tgt: np.ndarray  # (B, T) decoder input: <s>, then the French words, then <pad>
    labels: np.ndarray  # (B, T) the next French word at each position, then </s>, then <pad>

    @property
    def weights(self) -> np.ndarray:
        """(B, T) 1 where a label is asked for, 0 on padding."""
        return (self.labels != PAD).astype(np.float32)


def make_batch(pairs: list[Pair], vocab: dict[str, int] | None = None) -> Batch:
    """Pairs as padded id arrays; every word of a grammar pair is in the vocabulary."""
    vocab = vocab or vocabulary()
    s = max(len(p.source) for p in pairs) + 1
    t = max(len(p.target) for p in pairs) + 1
    src = np.full((len(pairs), s), PAD)
    tgt, labels = np.full((len(pairs), t), PAD), np.full((len(pairs), t), PAD)
    for i, pair in enumerate(pairs):
        source, target = [vocab[w] for w in pair.source], [vocab[w] for w in pair.target]
        src[i, : len(source) + 1] = [*source, EOS]
        tgt[i, : len(target) + 1] = [BOS, *target]
        labels[i, : len(target) + 1] = [*target, EOS]
    return Batch(src, tgt, labels)
