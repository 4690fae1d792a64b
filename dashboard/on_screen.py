"""The model on screen, described once per page run: which model and engine, the kind of attention
it has (core/measures/claims.py: encoder, causal decoder, cross-attention) and how its tokenizer
reads text (core/models/reading.py). A view reads what it may claim and which words to use from this
description instead of working the model out again from its key.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.measures.analysis import piece_text
from core.measures.claims import Blind, Kind, may_claim
from core.models.reading import Reading
from core.models.result import AttentionResult
from dashboard.content import claims as text
from dashboard.engines import compute_attention
from dashboard.widgets import md


@dataclass(frozen=True)
class ModelOnScreen:
    key: str  # the registry's key (the link's `model`)
    engine: str  # "numpy" | "torch"
    max_tokens: int  # the longest input the page reads
    kind: Kind  # what a position sees
    reading: Reading  # the tokenizer's pieces and added tokens

    @property
    def decoder(self) -> bool:
        return self.kind == "decoder"

    def may(self, claim: str) -> bool:
        """Whether statement `claim` (core.measures.claims.CLAIMS) holds for this model's kind."""
        return may_claim(claim, self.kind)

    def result(self, sentence: str) -> AttentionResult:
        """This model's result for another sentence (the shared cache of dashboard.engines)."""
        return compute_attention(self.key, self.engine, sentence, self.max_tokens)

    @property
    def specials(self) -> str:
        """The tokens its tokenizer adds, in words for a sentence: "[CLS] and [SEP]", "<s>", or ""."""
        return " and ".join(self.reading.specials)


def specials_phrase(reading: Reading, escape: bool = True) -> str:
    """The added tokens for a sentence: "\\[CLS\\] and \\[SEP\\]" in markdown, "<s>", or "" (none)."""
    words = " and ".join(reading.specials)
    return md(words) if escape else words


def added_tokens(result: AttentionResult) -> str:
    """The tokens the tokenizer added to this text, for a sentence: "[CLS] and [SEP]", "<s>", or ""."""
    pairs = zip(result.tokens, result.special_mask, strict=True)
    return " and ".join(dict.fromkeys(token for token, special in pairs if special))


def counting_specials(result: AttentionResult) -> str:
    """ " (counting [CLS] and [SEP])" for a text cut at the model's length, in markdown; "" where the
    tokenizer adds no token."""
    added = added_tokens(result)
    return f" (counting {md(added)})" if added else ""


def kind_of(result: AttentionResult) -> Kind:
    """The kind of a (self-attention) result: causal when it carries next-token logits."""
    return "decoder" if result.decoder else "encoder"


def blind_line(blind: Blind, word: str, answers: list[str]) -> str:
    """The one line a page says instead of a verdict read where a causal model cannot see the change
    (`word`: the word read there, as shown; `answers`: what can answer instead, in words)."""
    return text.BLIND.format(
        word=md(word),
        position=blind.position + 1,
        changed=blind.changed + 1,
        was=md(piece_text(blind.changed_from).strip() or "(the end)"),
        now=md(piece_text(blind.changed_to).strip() or "(the end)"),
        answers="; ".join(answers),
    )


def say_blind(blind: Blind, word: str, answers: list[str]) -> None:
    st.info(blind_line(blind, word, answers), icon=":material/visibility_off:")
