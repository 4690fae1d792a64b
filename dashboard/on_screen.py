"""The model on screen, described once per page run: which model and engine, the kind of attention
it has (core/measures/claims.py: encoder, causal decoder, cross-attention) and how its tokenizer
reads text (core/models/reading.py). A view reads what it may claim and which words to use from this
description instead of working the model out again from its key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from core.measures.analysis import piece_text, word_spans
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


def added_token_list(result: AttentionResult) -> list[str]:
    """The tokens the tokenizer added to this text, each once, in order: [CLS], [SEP]; <s>; none."""
    pairs = zip(result.tokens, result.special_mask, strict=True)
    return list(dict.fromkeys(token for token, special in pairs if special))


def added_tokens(result: AttentionResult) -> str:
    """The added tokens for a sentence: "[CLS] and [SEP]", "<s>", or "" (none)."""
    return " and ".join(added_token_list(result))


def counting_specials(result: AttentionResult) -> str:
    """ " (counting [CLS] and [SEP])" for a text cut at the model's length, in markdown; "" where the
    tokenizer adds no token."""
    added = added_tokens(result)
    return f" (counting {md(added)})" if added else ""


def attention_kind(result: AttentionResult) -> Kind:
    """The kind of a (self-attention) result: causal when it carries next-token logits."""
    return "decoder" if result.decoder else "encoder"


def word_at(result: AttentionResult, token: int) -> str:
    """The word holding `token`, as a reader writes it (all its pieces); "(the end)" past the text."""
    for start, stop in word_spans(result.word_ids, result.special_mask):
        if start <= token < stop:
            return "".join(piece_text(t) for t in result.tokens[start:stop]).strip()
    return "(the end)"


def blind_line(
    blind: Blind, word: str, answers: list[str], changed: tuple[str, str], number: Callable[[int], int]
) -> str:
    """The one line a page says instead of a verdict read where a causal model cannot see the change.
    `word`: the word read there; `answers`: what can answer instead, in words; `changed`: the word
    that differs, in each input (word_at); `number`: a token's number as the page shows it, from 1."""
    return text.BLIND.format(
        word=md(word),
        position=number(blind.position),
        changed=number(blind.changed),
        was=md(changed[0]),
        now=md(changed[1]),
        answers="; ".join(answers),
    )


def say_blind(line: str) -> None:
    """The blind line (blind_line), shown where the verdict would have been."""
    st.info(line, icon=":material/visibility_off:")
