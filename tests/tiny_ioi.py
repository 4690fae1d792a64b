"""Tiny random decoders (tests/tiny_llama.py, tests/tiny_gpt2.py) whose tokenizer knows the IOI task's
names as single tokens (core/measures/ioi.py), so the circuit search runs end to end on them: the
tokenizer is trained again on the task's sentences and saved over the checkpoint's (its vocabulary no
larger than the model's embedding table)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tiny_gpt2 import CORPUS, make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

NAMES = 12  # the first 12 of the task's candidates: enough for IO, S and three ABC names, many times


def _corpus() -> list[str]:
    from core.measures.ioi import NAMES as CANDIDATES
    from core.measures.ioi import OBJECTS, PLACES, TEMPLATES

    names = CANDIDATES[:NAMES]
    sentences = []
    for i, template in enumerate(TEMPLATES * 6):
        n1, n2, s2 = names[i % NAMES], names[(i + 5) % NAMES], names[(i + 7) % NAMES]
        text = template.format(N1=n1, N2=n2, S2=s2, place=PLACES[i % 8], object=OBJECTS[i % 8])
        sentences.append(text)
    return sentences + [" ".join(f" {n}" for n in names)] * 30


def ioi_tokenizer(directory: Path, vocab_size: int = 400):
    """A byte-level BPE trained on the task's sentences, saved as directory/tokenizer.json and read back
    as the engines read it (a `tokenizers.Tokenizer`)."""
    from tokenizers import Tokenizer
    from tokenizers.implementations import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        CORPUS + _corpus() * 10, vocab_size=vocab_size, min_frequency=1, show_progress=False
    )
    bpe.save(str(Path(directory) / "tokenizer.json"))
    return Tokenizer.from_file(str(Path(directory) / "tokenizer.json"))


def retrain_tokenizer(directory: Path) -> Path:
    """Save over directory/tokenizer.json one trained on the task's sentences, no larger than the model's
    vocabulary."""
    ioi_tokenizer(directory, json.loads((Path(directory) / "config.json").read_text())["vocab_size"])
    return Path(directory)


def make_ioi_llama(directory: Path, **shape) -> Path:
    """A tiny random Llama (GQA) whose tokenizer has the task's first names as single tokens."""
    return retrain_tokenizer(make_tiny_llama(directory, **shape))


def make_ioi_gpt2(directory: Path, **shape) -> Path:
    """A tiny random GPT-2 whose tokenizer has the task's first names as single tokens."""
    return retrain_tokenizer(make_tiny_gpt2(directory, **shape))
