"""The pronoun test: which word is a focus word's representation closest to, layer by layer?

A head that puts weight from "it" on "trophy" shows a pattern, not what the model made of "it". What
the model made of it is the vector it holds for "it" after each layer. This module measures the
cosine between the focus word's vector and every other word's, at the embeddings (layer 0) and after
each layer, and names the closest *content* word: the candidates a pronoun could stand for. Function
words, punctuation and [CLS]/[SEP] are left out because at the top layers of small sentence models
they sit close to every token (in the trophy sentence "the" is at 0.85 from "it"), which says
nothing about reference. The page states this rule next to the result. A word in pieces is the
mean of its pieces' vectors, as on the compare page.

References: Ethayarajh (2019), "How Contextual are Contextualized Word Representations?" (cosine
between a word's layer-wise representations); Levesque et al. (2012), the Winograd schema
("The trophy doesn't fit in the brown suitcase because it is too big").

Letters: L layers, T tokens, W words (spans), D hidden size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.measures.analysis import piece_text, word_spans
from core.measures.similarity import item_vectors

__all__ = ["FUNCTION_WORDS", "Closeness", "closeness", "is_content_word"]

# English function words (articles, pronouns, prepositions, conjunctions, auxiliaries) and the
# pieces WordPiece cuts contractions into ("wouldn ' t"): never the referent of a pronoun.
FUNCTION_WORDS = frozenset(
    """a an the this that these those it its it's he him his she her hers they them their theirs we us
    our ours you your yours i me my mine who whom whose which what there here
    of in on at by for with from to into onto over under about after before between through during
    and or but nor so yet because although though if when while as than then
    is am are was were be been being do does did have has had will would shall should can could may
    might must not no t s d ll re ve m wouldn couldn shouldn didn doesn isn wasn weren aren hasn
    haven hadn won don too very""".split()
)


def is_content_word(text: str) -> bool:
    """True for a word with a letter or digit that is not a function word (case-insensitive)."""
    return any(ch.isalnum() for ch in text) and text.casefold() not in FUNCTION_WORDS


@dataclass(frozen=True)
class Closeness:
    """The focus word's cosine to every word, at every layer."""

    words: list[str]  # W labels, one per span (special tokens as themselves)
    focus: int  # the focus word's index among the words
    candidates: list[int]  # the content words other than the focus word (and other copies of it)
    cosine: np.ndarray  # (L + 1, W) float64: cos(focus word, word w) after layer l (0 = embeddings)

    def nearest(self, layer: int = -1) -> int | None:
        """The candidate closest to the focus word at `layer` (default the last), or None if none."""
        if not self.candidates:
            return None
        return max(self.candidates, key=lambda w: self.cosine[layer, w])

    def ranked(self, layer: int = -1) -> list[int]:
        """The candidates, closest first, at `layer`."""
        return sorted(self.candidates, key=lambda w: -self.cosine[layer, w])


def closeness(result, focus_token: int, hidden: np.ndarray | None = None) -> Closeness:
    """The pronoun test on an AttentionResult, for the word that holds token `focus_token`.
    hidden: other hidden states of the same tokens to measure instead of result's, (K, T, D) (for
    example the last layer with heads ablated, as (1, T, D)); the cosine then has K rows."""
    spans = word_spans(result.word_ids, result.special_mask)
    words = ["".join(piece_text(t) for t in result.tokens[start:stop]) for start, stop in spans]
    focus = next(i for i, (start, stop) in enumerate(spans) if start <= focus_token < stop)
    vectors = item_vectors(result.hidden_states if hidden is None else hidden, spans)  # (L + 1, W, D)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), np.finfo(float).tiny)
    cosine = np.einsum("lwd,ld->lw", unit, unit[:, focus])
    same = words[focus].casefold()
    candidates = [
        i
        for i, (start, _stop) in enumerate(spans)
        if not result.special_mask[start] and is_content_word(words[i]) and words[i].casefold() != same
    ]
    return Closeness(words=words, focus=focus, candidates=candidates, cosine=cosine)
