"""Build tiny random BERT checkpoints on disk, as transformers' BertModelTester does, so tests need
no download: config.json + model.safetensors + vocab.txt + tokenizer.json in a directory."""

from __future__ import annotations

from pathlib import Path

WORDS = (
    "the a an it was too large small trophy suitcase fit in because would n't bank approved loan "
    "river cat sat on mat i love nlp . , ' ! ? and of to is"
).split()
PIECES = ["##s", "##ed", "##ing", "##ly", "##er"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def write_vocab(directory: Path) -> list[str]:
    vocab = SPECIALS + WORDS + PIECES + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab += [f"##{chr(c)}" for c in range(ord("a"), ord("z") + 1)]
    # de-duplicate while keeping order ("a" and "i" are both words and letters)
    vocab = list(dict.fromkeys(vocab))
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return vocab


def make_tiny_bert(
    directory: Path,
    *,
    hidden_size: int = 24,
    num_heads: int = 3,
    num_layers: int = 2,
    intermediate_size: int = 37,
    max_position_embeddings: int = 512,
    hidden_act: str = "gelu",
    seed: int = 0,
    masked_lm: bool = False,
) -> Path:
    """Save a randomly initialised BertModel (safetensors) and its WordPiece tokenizer to `directory`.

    masked_lm=True saves a BertForMaskedLM instead: its encoder's tensors are named "bert.…", and
    the masked-LM head's ("cls.…") are there too, as in bert-base-uncased's checkpoint."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertModel, BertTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = write_vocab(directory)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        hidden_act=hidden_act,
        type_vocab_size=2,
    )
    torch.manual_seed(seed)
    model = (BertForMaskedLM if masked_lm else BertModel)(config).eval()
    # Random init leaves LayerNorm at gamma=1, beta=0 and biases at 0: perturb them so parity tests
    # exercise every parameter, not only the matrices.
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                param.add_(0.1 * torch.randn_like(param))
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer = BertTokenizerFast(vocab=str(directory / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(directory)
    return directory
