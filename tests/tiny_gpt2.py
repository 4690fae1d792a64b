"""GPT-2 checkpoints the tests build and save themselves (no download): random weights of any
shape, and a byte-level BPE tokenizer trained here on a few sentences, saved as tokenizer.json."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "The trophy would not fit in the suitcase because it was too large.",
    "The bank approved the loan. We sat on the river bank.",
    "Attention lets every token look at the tokens before it.",
    "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z a b c d e f g h i j k l m n o p",
]


def train_tokenizer(directory: Path, vocab_size: int = 400):
    """A byte-level BPE like GPT-2's (every byte is in the alphabet, so any text encodes)."""
    from tokenizers.implementations import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(CORPUS * 20, vocab_size=vocab_size, min_frequency=1, show_progress=False)
    tokenizer.save(str(directory / "tokenizer.json"))
    return tokenizer


def make_tiny_gpt2(
    directory: Path,
    *,
    n_layer: int = 2,
    n_head: int = 4,
    n_embd: int = 32,
    n_positions: int = 64,
    seed: int = 0,
    head: bool = True,
    **config,
) -> Path:
    """A GPT-2 of the given shape with random weights (GPT-2's own initialisation), saved as
    safetensors with its tokenizer. head=False saves a bare GPT2Model (names without
    "transformer.", as the original gpt2 checkpoint has them)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Model

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(directory)
    settings = GPT2Config(
        vocab_size=tokenizer.get_vocab_size(),
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        n_positions=n_positions,
        **config,
    )
    torch.manual_seed(seed)
    model = (GPT2LMHeadModel if head else GPT2Model)(settings).eval()
    with torch.no_grad():  # larger than GPT-2's 0.02 init, so the heads' patterns are not all flat
        for name, parameter in model.named_parameters():
            if name.endswith("attn.c_attn.weight"):
                parameter.normal_(0.0, 0.3)
    model.save_pretrained(directory, safe_serialization=True)
    return directory
