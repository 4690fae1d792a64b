"""The letter model's tokenizer: one token per letter a..z, the start token <s> put in front of every
text, everything that is not a letter dropped. Saved as tokenizer.json (the `tokenizers` format the
NumPy engine reads) with a tokenizer_config.json, so transformers' AutoTokenizer reads it too."""

from __future__ import annotations

import json
from pathlib import Path

from core.train.data import LETTERS, START, START_TEXT

__all__ = ["letter_tokenizer", "save_tokenizer"]


def letter_tokenizer():
    """A `tokenizers.Tokenizer`: lower-cases, drops what is not a-z, splits into letters, adds <s>."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = {letter: i for i, letter in enumerate(LETTERS)} | {START_TEXT: START}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=START_TEXT))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Lowercase(), normalizers.Replace(Regex(f"[^{LETTERS[0]}-{LETTERS[-1]}]"), "")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{START_TEXT} $A", special_tokens=[(START_TEXT, START)]
    )
    tokenizer.decoder = decoders.Fuse()  # letters join without spaces
    tokenizer.add_special_tokens([START_TEXT])
    return tokenizer


def save_tokenizer(out: Path, context: int) -> None:
    """tokenizer.json and tokenizer_config.json in `out`."""
    letter_tokenizer().save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": START_TEXT,
        "eos_token": START_TEXT,
        "unk_token": START_TEXT,
        "model_max_length": context,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
