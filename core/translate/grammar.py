"""A small English → French grammar that writes sentence pairs together with their word alignment,
known from how each pair was built, for the translator the product trains (issue 38):

    the black cat sees a red car         →  le chat noir voit une voiture rouge
    the dogs do not follow the girl      →  les chiens ne suivent pas la fille
    a horse eats apples near the house   →  un cheval mange des pommes près de la maison

The word order differs (French adjectives follow the noun), articles and adjectives agree with the
noun's gender and number, and words do not map one to one: "not" becomes "ne … pas" (one to two),
"does" becomes nothing, "near the" + a masculine noun becomes "près du" ("du" is "de" + "le": two
to one), and a bare English plural object gets the French article "des", which translates no
English word (a target word with no source, left out when alignment is scored).

An alignment is a tuple of (target index, source index) links, both counted in words. Held-out
sentences contain an (adjective, noun) pair the training sentences never show (HELD_OUT): the test
asks for a combination, not a memorised sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["HELD_OUT", "Pair", "sample_pair", "sample_pairs", "source_words", "target_words"]


@dataclass(frozen=True)
class Noun:
    en: str
    en_plural: str
    fr: str
    fr_plural: str
    feminine: bool


@dataclass(frozen=True)
class Adjective:
    en: str
    fr: tuple[str, str, str, str]  # masculine, feminine, masculine plural, feminine plural


@dataclass(frozen=True)
class Verb:
    en: str  # third person singular: "sees"
    en_plural: str  # "see"
    fr: str
    fr_plural: str


# French words that begin with a consonant only: no elision (l', n') to keep one word a token
NOUNS = (
    Noun("cat", "cats", "chat", "chats", False),
    Noun("dog", "dogs", "chien", "chiens", False),
    Noun("horse", "horses", "cheval", "chevaux", False),
    Noun("boy", "boys", "garçon", "garçons", False),
    Noun("book", "books", "livre", "livres", False),
    Noun("car", "cars", "voiture", "voitures", True),
    Noun("house", "houses", "maison", "maisons", True),
    Noun("girl", "girls", "fille", "filles", True),
    Noun("table", "tables", "table", "tables", True),
    Noun("flower", "flowers", "fleur", "fleurs", True),
    Noun("apple", "apples", "pomme", "pommes", True),
    Noun("door", "doors", "porte", "portes", True),
)
ADJECTIVES = (
    Adjective("red", ("rouge", "rouge", "rouges", "rouges")),
    Adjective("black", ("noir", "noire", "noirs", "noires")),
    Adjective("green", ("vert", "verte", "verts", "vertes")),
    Adjective("blue", ("bleu", "bleue", "bleus", "bleues")),
    Adjective("white", ("blanc", "blanche", "blancs", "blanches")),
    Adjective("tired", ("fatigué", "fatiguée", "fatigués", "fatiguées")),
)
VERBS = (
    Verb("sees", "see", "voit", "voient"),
    Verb("eats", "eat", "mange", "mangent"),
    Verb("follows", "follow", "suit", "suivent"),
    Verb("finds", "find", "trouve", "trouvent"),
    Verb("watches", "watch", "regarde", "regardent"),
    Verb("wants", "want", "veut", "veulent"),
)
PREPOSITIONS = {"with": "avec", "in": "dans", "under": "sous", "behind": "derrière", "near": "près"}
# one adjective per noun never seen with it in training: 12 of the 72 pairs
HELD_OUT = frozenset((ADJECTIVES[i % len(ADJECTIVES)].en, noun.en) for i, noun in enumerate(NOUNS))


@dataclass(frozen=True)
class Pair:
    source: tuple[str, ...]  # English words
    target: tuple[str, ...]  # French words
    alignment: tuple[tuple[int, int], ...]  # (target word, source word) links


class _Builder:
    """Both sentences written side by side, each French word noting the English words it renders."""

    def __init__(self) -> None:
        self.source: list[str] = []
        self.target: list[str] = []
        self.links: list[tuple[int, int]] = []

    def en(self, word: str) -> int:
        self.source.append(word)
        return len(self.source) - 1

    def fr(self, word: str, *sources: int) -> None:
        self.links += [(len(self.target), s) for s in sources]
        self.target.append(word)

    def pair(self) -> Pair:
        return Pair(tuple(self.source), tuple(self.target), tuple(self.links))


def _noun_phrase(
    b: _Builder, noun: Noun, plural: bool, article: str, adjective: Adjective | None, near: bool
) -> None:
    """article: "the", "a" or "" (a bare plural); near: the phrase follows "près", so "de" joins the
    article ("du", "des") or stands before it ("de la")."""
    gender = int(noun.feminine) + 2 * plural
    near_word = len(b.source) - 1  # "near", when `near`
    the = b.en(article) if article else None
    adj = b.en(adjective.en) if adjective else None
    n = b.en(noun.en_plural if plural else noun.en)
    if near and article == "the" and gender != 1:  # de + le, de + les
        b.fr("des" if plural else "du", near_word, the)
    else:
        if near:
            b.fr("de", near_word)
        if article == "the":
            b.fr(("le", "la", "les", "les")[gender], the)
        elif article == "a":
            b.fr("une" if noun.feminine else "un", the)
        else:
            b.fr("des")  # a bare English plural: the French article renders no English word
    b.fr(noun.fr_plural if plural else noun.fr, n)
    if adjective:
        b.fr(adjective.fr[gender], adj)


def _pick_np(rng: np.random.Generator, held_out: bool | None, *, bare: bool = False, the_only: bool = False):
    """(noun, plural, article, adjective) drawn at random; `held_out` True forces an (adjective, noun)
    pair from HELD_OUT, False refuses one, None allows both."""
    while True:
        noun = NOUNS[rng.integers(len(NOUNS))]
        plural = bool(rng.random() < 0.4)
        adjective = ADJECTIVES[rng.integers(len(ADJECTIVES))] if held_out or rng.random() < 0.5 else None
        article = "the"
        if not the_only:
            article = (
                ("the", "" if bare else "the")[rng.integers(2)] if plural else ("the", "a")[rng.integers(2)]
            )
        combo = adjective is not None and (adjective.en, noun.en) in HELD_OUT
        if held_out is None or combo == held_out:
            return noun, plural, article, adjective


@dataclass(frozen=True)
class Clause:
    """What a sentence pair is built from: noun phrases as (noun, plural, article, adjective)."""

    subject: tuple
    verb: Verb
    negated: bool
    object: tuple
    preposition: str | None = None
    place: tuple | None = None  # the noun phrase after the preposition


def build(clause: Clause) -> Pair:
    """The English sentence, its French translation and their word alignment."""
    b = _Builder()
    _noun_phrase(b, *clause.subject, near=False)
    verb, plural = clause.verb, clause.subject[1]
    if clause.negated:
        b.en("do" if plural else "does")  # renders as nothing in French
        not_ = b.en("not")
        v = b.en(verb.en_plural)
        b.fr("ne", not_)
        b.fr(verb.fr_plural if plural else verb.fr, v)
        b.fr("pas", not_)
    else:
        v = b.en(verb.en_plural if plural else verb.en)
        b.fr(verb.fr_plural if plural else verb.fr, v)
    _noun_phrase(b, *clause.object, near=False)
    if clause.preposition is not None:
        b.fr(PREPOSITIONS[clause.preposition], b.en(clause.preposition))
        _noun_phrase(b, *clause.place, near=clause.preposition == "near")
    return b.pair()


def sample_pair(rng: np.random.Generator, held_out: bool = False) -> Pair:
    """One sentence pair: subject, verb (negated one time in four), object, and one time in three a
    prepositional phrase. held_out: the subject carries a held-out (adjective, noun) pair; otherwise
    no phrase of the pair does."""
    subject = _pick_np(rng, held_out)
    verb = VERBS[rng.integers(len(VERBS))]
    negated = bool(rng.random() < 0.25)
    # under negation French says "pas de", not "pas des"/"pas une": the object keeps "the" there
    obj = _pick_np(rng, False, bare=True, the_only=negated)
    preposition = place = None
    if rng.random() < 1 / 3:
        preposition = list(PREPOSITIONS)[rng.integers(len(PREPOSITIONS))]
        place = _pick_np(rng, False, the_only=True)
    return build(Clause(subject, verb, negated, obj, preposition, place))


def sample_pairs(n: int, seed: int, held_out: bool = False) -> list[Pair]:
    """n pairs from numpy's generator seeded with `seed` (the same seed, the same pairs)."""
    rng = np.random.default_rng(seed)
    return [sample_pair(rng, held_out) for _ in range(n)]


def source_words() -> list[str]:
    """Every English word the grammar writes, in a fixed order."""
    words = ["the", "a", "do", "does", "not", *PREPOSITIONS]
    words += [w for n in NOUNS for w in (n.en, n.en_plural)] + [a.en for a in ADJECTIVES]
    words += [w for v in VERBS for w in (v.en, v.en_plural)]
    return list(dict.fromkeys(words))


def target_words() -> list[str]:
    """Every French word the grammar writes, in a fixed order."""
    words = ["le", "la", "les", "un", "une", "des", "de", "du", "ne", "pas", *PREPOSITIONS.values()]
    words += [w for n in NOUNS for w in (n.fr, n.fr_plural)] + [w for a in ADJECTIVES for w in a.fr]
    words += [w for v in VERBS for w in (v.fr, v.fr_plural)]
    return list(dict.fromkeys(words))
