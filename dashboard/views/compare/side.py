"""One sentence of the compare page: its result and its words (word pieces merged), with the lookups
from a word reference ("it", "the#2") to its tokens that the focus word, the ranking and patching use."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from core.measures.analysis import TokenView, find_word_ref, token_view, word_ref
from core.models.result import AttentionResult


@dataclass
class Side:
    """One sentence's result and its words (word pieces merged, for focus references)."""

    result: AttentionResult
    words: TokenView

    @staticmethod
    def of(result: AttentionResult) -> Side:
        return Side(result, token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True))

    @cached_property
    def refs(self) -> list[str]:
        """Each word's reference ("it", "the#2"), special tokens left out."""
        special = self.result.special_mask
        return [
            word_ref(self.words.labels, self.words.spans, s) for s, _ in self.words.spans if not special[s]
        ]

    def token_of(self, ref: str) -> int | None:
        token = find_word_ref(ref, self.words.labels, self.words.spans)
        return None if token is None or self.result.special_mask[token] else token

    def span_of(self, ref: str | None) -> tuple[int, int] | None:
        """The word's tokens (start, stop): all its pieces, so the focus is the whole word."""
        token = self.token_of(ref) if ref else None
        return None if token is None else next((s, e) for s, e in self.words.spans if s == token)
