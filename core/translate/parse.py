"""Reading a typed English sentence back into the grammar (core/translate/grammar.py), so the pages can
give any sentence the grammar can write its French translation and gold alignment, not only the
sentences it happened to sample:

    sentence     := phrase verb phrase [preposition phrase]
    verb         := sees | see | …   or   does not see | do not see | …   (agreeing with the subject)
    phrase       := the [adjective] noun | a [adjective] singular noun | [adjective] plural noun

The last phrase takes "the" only, as the grammar writes it; so does the object of a negated verb
(French says "pas de" there, which the grammar does not write). Anything else is not the grammar's.
"""

from __future__ import annotations

import re

from core.translate.grammar import ADJECTIVES, NOUNS, PREPOSITIONS, VERBS, Clause, Pair, build

__all__ = ["pair_of"]

_ADJECTIVES = {a.en: a for a in ADJECTIVES}
_NOUNS = {n.en: (n, False) for n in NOUNS} | {n.en_plural: (n, True) for n in NOUNS}
_VERBS = {v.en: (v, False) for v in VERBS} | {v.en_plural: (v, True) for v in VERBS}


def _phrase(words: list[str], i: int, *, the_only: bool = False) -> tuple[tuple, int] | None:
    """(noun, plural, article, adjective) read from words[i:], and where it ends; None if none."""
    article = words[i] if i < len(words) and words[i] in ("the", "a") else ""
    i += bool(article)
    adjective = _ADJECTIVES.get(words[i]) if i < len(words) else None
    i += adjective is not None
    if i >= len(words) or words[i] not in _NOUNS:
        return None
    noun, plural = _NOUNS[words[i]]
    if (article == "a" and plural) or (not article and not plural) or (the_only and article != "the"):
        return None
    return (noun, plural, article, adjective), i + 1


def _verb(words: list[str], i: int, plural: bool) -> tuple[tuple, int] | None:
    """((verb, negated), where it ends), agreeing with the subject's number; None if none."""
    if words[i : i + 2] in (["does", "not"], ["do", "not"]):
        if (words[i] == "do") != plural or i + 2 >= len(words) or words[i + 2] not in _VERBS:
            return None
        verb, base = _VERBS[words[i + 2]]
        return ((verb, True), i + 3) if base else None
    if i < len(words) and words[i] in _VERBS and _VERBS[words[i]][1] == plural:
        return (_VERBS[words[i]][0], False), i + 1
    return None


def pair_of(text: str) -> Pair | None:
    """The grammar's pair for an English sentence (lower-cased, punctuation dropped, split at spaces,
    as the translator's tokenizer reads it), or None when the grammar cannot write it."""
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    if not (found := _phrase(words, 0)):
        return None
    subject, i = found
    if not (found := _verb(words, i, subject[1])):
        return None
    (verb, negated), i = found
    if not (found := _phrase(words, i, the_only=negated)):
        return None
    obj, i = found
    preposition = place = None
    if i < len(words) and words[i] in PREPOSITIONS:
        preposition = words[i]
        if not (found := _phrase(words, i + 1, the_only=True)):
            return None
        place, i = found
    return build(Clause(subject, verb, negated, obj, preposition, place)) if i == len(words) else None
