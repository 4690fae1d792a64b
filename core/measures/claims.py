"""What a statement may claim, by the kind of attention it is about.

Three kinds differ in what a position can see, and so in what a measure read there can show:
- "encoder": every token sees every token (BERT);
- "decoder": causal, a token sees itself and the tokens before it (GPT-2, SmolLM2, the letter model,
  the translator's decoder self-attention);
- "cross": a target token sees every source token (the translator's cross-attention).

`CLAIMS` writes down once which of the product's computed statements hold for which kind; the code
that makes a statement asks `may_claim` (or, for a statement about two inputs read at one position,
`blind_spot`) before it says anything, and docs/house.md prints the same table
(tests/test_claims_doc.py keeps them equal).

The causal case in one line: in a decoder every number computed at position i depends only on tokens
0..i, so two inputs that agree up to i give the same numbers there, whatever follows. A measure read
there cannot tell the two inputs apart; it is no evidence about the difference either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["encoder", "decoder", "cross"]
KINDS: tuple[Kind, ...] = ("encoder", "decoder", "cross")


@dataclass(frozen=True)
class Claim:
    says: str  # the statement in a few words, as docs/house.md lists it
    kinds: frozenset[str]  # the kinds it holds for
    condition: str = ""  # where it holds only under a condition, that condition (checked in code)


ANY = frozenset(KINDS)
CLAIMS: dict[str, Claim] = {
    "pattern": Claim("where a head puts its weight (maps, lines, rankings of a head's weights)", ANY),
    "next_token_share": Claim(
        "a head's share of weight on the next token", frozenset({"encoder"})
    ),  # a causal row is 0 there by the mask; a cross row has no "next" in the other sequence
    "start_token_share": Claim(
        "a head's share of weight on the added tokens ([CLS]/[SEP], <s>)",
        ANY,
        "the tokenizer adds such tokens (Reading.specials)",
    ),
    "pair_difference": Claim(
        "a measure at one position compared across two inputs (compare's ranking and distance, the "
        "trophy pair's heads, the pronoun test across a pair)",
        frozenset({"encoder", "decoder", "cross"}),
        "decoder: only at positions at or after the first token that differs (blind_spot)",
    ),
    "referent": Claim(
        "what a word's vector says it refers to, when a word elsewhere decides it",
        frozenset({"encoder", "decoder"}),
        "decoder: only when the deciding word comes before the word read (blind_spot)",
    ),
    "continuation": Claim(
        "which next token the model prefers after the text", frozenset({"decoder", "cross"})
    ),  # the translator's decoder predicts the next target word
    "sentence_embedding": Claim(
        "the mean-pooled sentence vector and how far a change moves it", frozenset({"encoder"})
    ),
    "next_token_effect": Claim(
        "how far a change moves the next-token distribution", frozenset({"decoder", "cross"})
    ),
    "patching": Claim(
        "the share of a difference a component carries (activation patching)",
        frozenset({"encoder", "decoder"}),
        "the two inputs have the same number of tokens",
    ),
}


def may_claim(claim: str, kind: str) -> bool:
    """Whether statement `claim` (a key of CLAIMS) holds for this kind of attention at all; its
    condition, where it has one, is checked where the numbers are."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of attention {kind!r}: one of {', '.join(KINDS)}")
    return kind in CLAIMS[claim].kinds


def first_token_difference(tokens1: Sequence[str], tokens2: Sequence[str]) -> int:
    """The first position where the two token lists differ (exactly, as the model reads them); the
    shorter length when one is the start of the other."""
    for i, (a, b) in enumerate(zip(tokens1, tokens2, strict=False)):
        if a != b:
            return i
    return min(len(tokens1), len(tokens2))


@dataclass(frozen=True)
class Blind:
    """A position a causal model reads before two inputs differ: nothing computed there differs."""

    position: int  # the token read (0-based; for a word, its last token)
    changed: int  # the first token that differs (0-based)
    changed_from: str  # that token in the first input ("" past its end)
    changed_to: str  # and in the second


def blind_spot(kind: str, tokens1: Sequence[str], tokens2: Sequence[str], read_at: int) -> Blind | None:
    """Where a causal decoder reads token `read_at` (the last token of the word a measure reads)
    before the first token that differs between two inputs: the Blind that says so. None where the
    reading sees the difference: an encoder and cross-attention see the whole input, and a decoder
    reading at or after the difference sees it."""
    may_claim("pair_difference", kind)  # checks the kind's name
    if kind != "decoder" or list(tokens1) == list(tokens2):  # identical inputs: no difference to see
        return None
    changed = first_token_difference(tokens1, tokens2)
    if read_at >= changed:
        return None

    def token(tokens: Sequence[str]) -> str:
        return tokens[changed] if changed < len(tokens) else ""

    return Blind(read_at, changed, token(tokens1), token(tokens2))
