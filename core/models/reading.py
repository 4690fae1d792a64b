"""How a model's tokenizer cuts text, read from the tokenizer itself, so that a page speaks of what
the model on screen has: BERT's word pieces with [CLS] and [SEP] around every text, GPT-2's and
SmolLM2's byte-level pieces with the leading space folded into the token and nothing added, or the
letter GPT-2 trained here, one token a letter after a start token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Reading", "reading_of"]

_LETTER_VOCAB = 300  # a vocabulary this small can be checked entry by entry; a real one has 30,000+
_PROBE = "a b"  # any text: what the tokenizer adds around it is what it adds around every text


@dataclass(frozen=True)
class Reading:
    pieces: Literal["word pieces", "byte pieces", "letters"]
    specials: tuple[str, ...]  # the tokens the tokenizer adds to every text, in order: ("[CLS]", "[SEP]")

    @property
    def letters(self) -> bool:
        """One token a character: no word is ever cut into pieces."""
        return self.pieces == "letters"

    @property
    def specials_text(self) -> str:
        """The added tokens as a page names them: "[CLS]/[SEP]", "<s>", or "" when there are none."""
        return "/".join(self.specials)


def reading_of(tokenizer) -> Reading:
    """The Reading of a `tokenizers.Tokenizer`, or of a transformers fast tokenizer (its backend)."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    probe = backend.encode(_PROBE)
    added = (token for token, special in zip(probe.tokens, probe.special_tokens_mask, strict=True) if special)
    specials = tuple(dict.fromkeys(added))
    if type(backend.model).__name__ == "WordPiece":
        return Reading("word pieces", specials)
    if backend.get_vocab_size() <= _LETTER_VOCAB:
        entries = set(backend.get_vocab()) - set(specials)
        if all(len(entry) == 1 for entry in entries):
            return Reading("letters", specials)
    return Reading("byte pieces", specials)
