"""The indirect-object task (IOI), generated here in the model's own tokenizer: the prompts the circuit
search (core/measures/circuit.py) runs, and the typed sentence of one's own (parse_prompt).

    "When Mary and John went to the store, John gave a drink to"  ->  " Mary"

Two names: the indirect object IO (" Mary", once) and the subject S (" John", twice: S1 and S2). The
model should continue with IO. The metric is the logit difference logit(IO) - logit(S) at the last
position (END), averaged over the prompts.

- Names: a list of common first names, kept where " Name" (with its leading space) is ONE token of the
  model's tokenizer, so swapping names never moves a position.
- Templates: Wang et al.'s style, each with the two names in both orders: ABBA (IO first: "When Mary
  and John ..., John") and BABA (S first: "When John and Mary ..., John").
- Corruptions, each as long in tokens as its clean prompt:
  - ABC: the three name slots (the first two names and S2) take three other names, all different
    (Wang et al.'s p_ABC): the sentence says nothing about who is the indirect object;
  - swapped subject: S2 becomes the IO ("... Mary gave a drink to"): the duplicated name changes.
- Seeded: numpy's default_rng(seed) draws the names, places and objects; the templates are shuffled by
  it and used in turn, the orders alternate, so N prompts cover min(N, 8) templates and both orders.

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593 (the task, its templates, p_ABC); Goldowsky-Dill et
al. 2023, "Localizing Model Behavior with Path Patching", arXiv 2304.05969.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.measures.paths import PathItem

__all__ = ["NAMES", "TEMPLATES", "IOIPrompt", "ioi_prompts", "parse_prompt", "single_token_names"]

# {N1} and {N2}: the first two names; {S2}: the subject again. ABBA: N1 = IO, N2 = S; BABA: N1 = S.
TEMPLATES = (
    "When {N1} and {N2} went to the {place}, {S2} gave a {object} to",
    "Then, {N1} and {N2} had a long argument. Afterwards, {S2} said to",
    "After {N1} and {N2} went to the {place}, {S2} gave a {object} to",
    "While {N1} and {N2} were working at the {place}, {S2} gave a {object} to",
    "Then, {N1} and {N2} went to the {place}. {S2} gave a {object} to",
    "When {N1} and {N2} got a {object} at the {place}, {S2} decided to give it to",
    "Friends {N1} and {N2} found a {object} at the {place}. {S2} gave it to",
    "Afterwards, {N1} and {N2} went to the {place}. {S2} handed a {object} to",
)
PLACES = ("store", "garden", "restaurant", "school", "hospital", "office", "station", "park")
OBJECTS = ("drink", "ring", "book", "basketball", "computer", "necklace", "snack", "letter")
# candidates; single_token_names keeps those that are one token with their leading space
NAMES = tuple(
    """Mary John Alice Bob Tom James Michael David Sarah Emma Anna Lisa Kate Paul Mark Peter Jack
    Daniel Robert William Richard Thomas Charles Joseph Steven Kevin Brian George Edward Jason Ryan
    Eric Adam Andrew Sam Ben Max Alex Laura Rachel Emily Jessica Jennifer Linda Susan Karen Nancy
    Helen Amy Rose Grace Lucy Jane Julia Sophie Claire Anne Henry Frank Jim Joe Tim Dan Matt Nick
    Luke Jacob Lee Ray Carl Fred Martin Simon Kelly Victoria Elizabeth Maria Sara Diana Eva Ella
    Olivia Sophia Isaac Oscar Philip Victor Arthur Hugo Leo Ian Roger Scott Jeff Carol Julie""".split()
)
N_NAMES = 40  # the task's names: the first 40 single-token ones
ORDERS = ("ABBA", "BABA")


@dataclass(frozen=True)
class IOIPrompt:
    """One prompt of the task and its corruptions, with the positions the measures read."""

    text: str
    corrupt: str  # ABC: three other names
    swapped: str  # swapped subject: S2 is the IO
    io: str  # " Mary": the name as the model reads it, leading space
    s: str  # " John"
    order: str  # "ABBA" (IO first) or "BABA" (S first)
    template: int  # its index in TEMPLATES (-1: typed by a user)
    item: PathItem  # clean ids, ABC ids, answer = IO's id, rival = S's id
    swapped_ids: tuple[int, ...]
    positions: dict[str, int]  # "io", "s1", "s2", "end" (0-indexed tokens); S1 + 1 is "s1_next"


def _tokenizer(tokenizer_or_engine):
    return getattr(tokenizer_or_engine, "tokenizer", tokenizer_or_engine)


def _ids(tokenizer, text: str) -> list[int]:
    """A name's own ids: no special tokens (a tokenizer that starts every text with <s> would add it)."""
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


def _text_ids(tokenizer, text: str) -> list[int]:
    """A prompt's ids as the engine reads them (core/models/decoder.py encode: special tokens included)."""
    return list(tokenizer.encode(text).ids)


def single_token_names(
    tokenizer_or_engine, candidates: Sequence[str] = NAMES, limit: int = N_NAMES
) -> list[str]:
    """The first `limit` candidates that are one token with their leading space (" Mary"), as " Name"."""
    tokenizer = _tokenizer(tokenizer_or_engine)
    kept = [f" {name}" for name in candidates if len(_ids(tokenizer, f" {name}")) == 1]
    return kept[:limit]


def _fill(template: str, n1: str, n2: str, s2: str, place: str, thing: str) -> str:
    # the names carry their leading space; the template has one before each slot
    return template.format(N1=n1.strip(), N2=n2.strip(), S2=s2.strip(), place=place, object=thing)


def _make(tokenizer, t: int, order: str, names: Sequence[str], place: str, thing: str) -> IOIPrompt | None:
    """The prompt of template t with names (IO, S, X, Y, Z), or None when a filled template does not
    tokenize with each name as its own token at the same positions in all three versions."""
    io, s, x, y, z = names
    first, second = (io, s) if order == "ABBA" else (s, io)
    template = TEMPLATES[t]
    texts = [
        _fill(template, first, second, s, place, thing),
        _fill(template, x, y, z, place, thing),
        _fill(template, first, second, io, place, thing),
    ]
    ids = [_text_ids(tokenizer, text) for text in texts]
    name_id = {name: _ids(tokenizer, name)[0] for name in names}
    slots = [i for i, token in enumerate(ids[0]) if token in (name_id[io], name_id[s])]
    if len(slots) != 3 or any(len(other) != len(ids[0]) for other in ids[1:]):
        return None
    expect = [[name_id[first], name_id[second], name_id[s]], [name_id[n] for n in (x, y, z)]]
    expect.append([name_id[first], name_id[second], name_id[io]])
    if any([version[i] for i in slots] != want for version, want in zip(ids, expect, strict=True)):
        return None
    io_at, s1_at = (slots[0], slots[1]) if order == "ABBA" else (slots[1], slots[0])
    positions = {"io": io_at, "s1": s1_at, "s1_next": s1_at + 1, "s2": slots[2], "end": len(ids[0]) - 1}
    item = PathItem(tuple(ids[0]), tuple(ids[1]), name_id[io], name_id[s])
    return IOIPrompt(texts[0], texts[1], texts[2], io, s, order, t, item, tuple(ids[2]), positions)


def ioi_prompts(
    tokenizer_or_engine, n: int = 8, seed: int = 0, names: Sequence[str] | None = None
) -> list[IOIPrompt]:
    """n prompts, seeded: template i of a shuffled order (every template once before any twice), ABBA
    and BABA in turn, five different names drawn for each (IO, S and the ABC names X, Y, Z)."""
    if n < 1:
        raise ValueError(f"the task needs at least one prompt, got {n}")
    tokenizer = _tokenizer(tokenizer_or_engine)
    names = list(single_token_names(tokenizer) if names is None else names)
    if len(names) < 5:
        raise ValueError(
            f"this tokenizer has {len(names)} of the task's names as single tokens; the task needs 5 "
            "(IO, S and three for the ABC corruption)"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(TEMPLATES))
    prompts = []
    for i in range(n):
        for _attempt in range(50):  # a name or word the tokenizer merges with its neighbour: draw again
            chosen = [names[k] for k in rng.choice(len(names), 5, replace=False)]
            place, thing = PLACES[rng.integers(len(PLACES))], OBJECTS[rng.integers(len(OBJECTS))]
            made = _make(tokenizer, int(order[i % len(order)]), ORDERS[i % 2], chosen, place, thing)
            if made is not None:
                prompts.append(made)
                break
        else:
            raise ValueError(f"template {order[i % len(order)]} never tokenizes with its names apart")
    return prompts


# ---- a sentence of one's own ---------------------------------------------------------------------


def _starts_sentence(texts: Sequence[str], i: int) -> bool:
    """Whether token i begins a sentence (its capital says nothing about being a name)."""
    return i == 0 or texts[i - 1].rstrip().endswith((".", "!", "?", ":", '"')) or not texts[i - 1].strip()


def _names_in(texts: Sequence[str], known: set[str]) -> dict[str, list[int]]:
    """{name: its positions} for the tokens that are a known name, or a capitalised word that does not
    begin a sentence (or occurs twice)."""
    found: dict[str, list[int]] = {}
    for i, token in enumerate(texts):
        word = token.strip()
        if word.isalpha() and word[:1].isupper() and len(word) > 1:
            found.setdefault(word, []).append(i)
    return {
        word: at
        for word, at in found.items()
        if word in known or len(at) > 1 or not all(_starts_sentence(texts, i) for i in at)
    }


def _choose_names(found: dict[str, list[int]], known: set[str]) -> tuple[str, str]:
    """(IO, S): S the one name seen twice, IO the one name seen once; ValueError saying what is wrong."""
    twice = [word for word, at in found.items() if len(at) == 2]
    more = [word for word, at in found.items() if len(at) > 2]
    once = [word for word, at in found.items() if len(at) == 1]
    if len(once) > 1 and any(word in known for word in once):
        once = [word for word in once if word in known]
    if more:
        raise ValueError(f"{more[0]} occurs {len(found[more[0]])} times: the subject occurs exactly twice")
    if len(twice) != 1 or len(once) != 1:
        seen = ", ".join(f"{w} ({len(at)}x)" for w, at in found.items()) or "none"
        raise ValueError(
            "the sentence needs two names, one of them twice (the subject) and the other once (the "
            f"indirect object), each a single token, e.g. 'When Mary and John went to the store, John gave "
            f"a drink to'; names found: {seen}"
        )
    return once[0], twice[0]


def _name_id(tokenizer, word: str, spaced: bool) -> int | None:
    ids = _ids(tokenizer, f" {word}" if spaced else word)
    return ids[0] if len(ids) == 1 else None


def parse_ioi(tokenizer_or_engine, text: str) -> IOIPrompt:
    """The typed sentence as a prompt of the task: S the name that occurs twice, IO the one that occurs
    once (names: single tokens of the task's list, or capitalised words that do not begin a sentence);
    ABC: each occurrence replaced by another of the task's names. ValueError with a specific message."""
    tokenizer = _tokenizer(tokenizer_or_engine)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            "type a sentence that ends before the indirect object, e.g. '..., John gave a drink to'"
        )
    ids = _text_ids(tokenizer, text)
    texts = [tokenizer.decode([i]) for i in ids]
    known = {name.strip() for name in single_token_names(tokenizer, limit=len(NAMES))}
    at = _names_in(texts, known)
    io, s = _choose_names(at, known)
    io_at, (s1_at, s2_at) = at[io][0], at[s]
    if io_at > s2_at:
        raise ValueError(
            f"{io} comes after the second {s}: the sentence should end before the indirect object"
        )
    answer, rival = _name_id(tokenizer, io, True), _name_id(tokenizer, s, True)
    if answer is None or rival is None:
        raise ValueError(
            f"' {io if answer is None else s}' is not one token in this model: choose another name"
        )
    fresh = [n.strip() for n in single_token_names(tokenizer, limit=len(NAMES)) if n.strip() not in (io, s)]
    corrupt, swapped = list(ids), list(ids)
    for position, name in zip((io_at, s1_at, s2_at), fresh, strict=False):
        new = _name_id(tokenizer, name, texts[position].startswith(" "))
        if new is None:
            raise ValueError(f"no other name fits position {position} ({texts[position]!r}) as one token")
        corrupt[position] = new
    swapped[s2_at] = answer if texts[s2_at].startswith(" ") else ids[io_at]
    positions = {"io": io_at, "s1": s1_at, "s1_next": s1_at + 1, "s2": s2_at, "end": len(ids) - 1}
    item = PathItem(tuple(ids), tuple(corrupt), answer, rival)
    order = "ABBA" if io_at < s1_at else "BABA"
    decode = tokenizer.decode
    return IOIPrompt(
        text, decode(corrupt), decode(swapped), f" {io}", f" {s}", order, -1, item, tuple(swapped), positions
    )


def parse_prompt(tokenizer_or_engine, text: str) -> tuple[PathItem, str, str]:
    """(the PathItem of a typed sentence (clean, ABC, IO's id, S's id), IO, S), names with their
    leading space; ValueError with a friendly, specific message (parse_ioi)."""
    prompt = parse_ioi(tokenizer_or_engine, text)
    return prompt.item, prompt.io, prompt.s
