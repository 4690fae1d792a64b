"""The focus view's "find the head": heads ranked by how specifically the focus token looks at the
target (core.measures.analysis.rank_heads_specific), heads that look at the target from everywhere flagged,
and, on the trophy sentences, whether the top heads' choice follows the meaning, and whether the word
nearest to "it" does (the pronoun test, dashboard/pronoun.py). On a causal decoder, where "it" comes
before the word the sentences differ in, neither is asked: one line says why and what can answer.

Every claim on screen is computed from the numbers shown; nothing here says what an example hopes.
"""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from core.measures.analysis import HeadLink, TokenView, word_spans
from core.measures.claims import Blind, blind_spot
from core.measures.referent import closeness
from core.models.reading import Reading
from core.models.result import AttentionResult
from dashboard.content import claims as claims_text
from dashboard.content import explore as text
from dashboard.content import focus as focus_text
from dashboard.content.explore import EXAMPLES
from dashboard.on_screen import ModelOnScreen, blind_line, say_blind, word_at
from dashboard.pronoun import pair_statement
from dashboard.views.explore.links import token_of
from dashboard.views.explore.results import link_ranking, shown_token_view
from dashboard.views.explore.widgets import open_head
from dashboard.widgets import md

TOP = 5  # heads listed and offered as buttons
TROPHY = ("trophy-large", "trophy-small")
TROPHY_HEADS = 3  # per noun and sentence, the heads the comparison takes


def headline(links: list[HeadLink], a: str, b: str, after: bool = False) -> str:
    """The one sentence under the pickers, about the most specific head; where `after` (a causal
    model, the target after the focus) the mask's zeros, said as such instead of a ranking."""
    best = links[0]
    if after:
        return focus_text.FIND_THE_HEAD_AFTER.format(a=md(a), b=md(b))
    template = text.FIND_THE_HEAD if best.specific > 0 else text.FIND_THE_HEAD_NONE
    return template.format(
        a=md(a),
        b=md(b),
        layer=best.layer + 1,
        head=best.head + 1,
        weight=best.weight,
        others=best.others,
        specific=best.specific,
    )


def top_heads_ui(links: list[HeadLink]) -> None:
    """The top heads as buttons that open the head view."""
    st.caption(text.TOP_HEADS_CAPTION)
    for rank, link in enumerate(links[:TOP], start=1):
        st.button(
            f"{rank}. layer {link.layer + 1}, head {link.head + 1}: {link.specific:+.2f}",
            key=f"explore_top_{rank}",
            on_click=open_head,
            args=(link.layer, link.head),
            width="stretch",
        )


def ranking_table_ui(links: list[HeadLink], a: str, b: str, screen: ModelOnScreen) -> None:
    """The top heads with weight, the others' mean and the specific score; the strongest raw head
    too when it is not among them, and a line on it."""
    raw_rank, raw = max(enumerate(links, start=1), key=lambda pair: pair[1].weight)
    rows = list(enumerate(links[:TOP], start=1))
    if raw_rank > TOP:
        rows.append((raw_rank, raw))
    lines = [text.RANK_TABLE_HEADER.format(a=md(a), b=md(b))]
    for rank, link in rows:
        notes = [text.EVERYWHERE_NOTE.format(b=md(b))] if link.everywhere else []
        if link is raw:
            notes.append(text.STRONGEST_RAW)
        lines.append(
            text.RANK_TABLE_ROW.format(
                rank=rank,
                layer=link.layer + 1,
                head=link.head + 1,
                weight=link.weight,
                others=link.others,
                specific=link.specific,
                note=" · ".join(notes),
            )
        )
    st.markdown("\n".join(lines))
    about_raw = text.RAW_TOP_EVERYWHERE if raw.everywhere else text.RAW_TOP_SPECIFIC
    st.caption(
        about_raw.format(
            a=md(a),
            b=md(b),
            layer=raw.layer + 1,
            head=raw.head + 1,
            weight=raw.weight,
            looking=raw.looking,
            rank=raw_rank,
            total=len(links),
        )
        + " "
        + text.RANK_RULE.format(
            a=md(a),
            b=md(b),
            not_specials=_not_specials(screen.reading),
            seeing=focus_text.SEEING if screen.decoder else "",
        )
    )


def _not_specials(reading: Reading) -> str:
    """ "not [CLS]/[SEP], " where the tokenizer adds tokens (they are not among "the other words")."""
    return focus_text.NOT_SPECIALS.format(specials=md(reading.specials_text)) if reading.specials else ""


# ---- the trophy pair -----------------------------------------------------------------------------------


def _pair_weights(result: AttentionResult, merge: bool, hide: bool) -> dict[str, list[HeadLink]] | None:
    """For one trophy sentence: the ranking of "it" → "trophy" and "it" → "suitcase" (None when the
    model's tokens do not hold the three words, e.g. a cased model splitting them)."""
    view = shown_token_view(result, merge, hide)
    items = {}
    for word in ("it", "trophy", "suitcase"):
        token = token_of(result, word)
        items[word] = view.item_of_token(token) if token is not None else None
    if any(item is None for item in items.values()):
        return None
    return {noun: link_ranking(result, view, items["it"], items[noun]) for noun in ("trophy", "suitcase")}


def _cell(links: dict[str, list[HeadLink]], layer: int, head: int) -> tuple[str, str]:
    """ "**0.31** / 0.12" for one head in one sentence, and the noun "it" gives more weight."""
    weight = {
        noun: next(x.weight for x in ranked if (x.layer, x.head) == (layer, head))
        for noun, ranked in links.items()
    }
    more = max(weight, key=weight.get)
    shown = [f"**{weight[n]:.2f}**" if n == more else f"{weight[n]:.2f}" for n in ("trophy", "suitcase")]
    return " / ".join(shown), more


def trophy_blind(screen: ModelOnScreen) -> Blind | None:
    """Where the model is a causal decoder, "it" comes before "large"/"small", the first token the
    trophy sentences differ in: every number computed at "it" is the same in both (the Blind that
    says so). None where the model sees the change there (an encoder), or reads no "it"."""
    results = [screen.result(EXAMPLES[name].text) for name in TROPHY]
    it = token_of(results[0], "it")
    if it is None or token_of(results[1], "it") != it:
        return None
    last = next(
        stop for start, stop in word_spans(results[0].word_ids, results[0].special_mask) if start == it
    )
    return blind_spot(screen.kind, results[0].tokens, results[1].tokens, last - 1)


def say_trophy_blind(blind: Blind, screen: ModelOnScreen, view: TokenView) -> None:
    """The one line shown instead of the trophy pair's verdicts on a causal decoder, pointing to what
    can answer: the continuation below and patching on compare. Tokens are numbered as the pickers
    number the shown items (`view`: merged words, hidden added tokens)."""
    compare = f"compare?preset=trophy&model={quote(screen.key, safe='')}"
    answers = [
        claims_text.ANSWER_CONTINUATION.format(where=claims_text.BELOW),
        claims_text.ANSWER_PATCHING.format(where=claims_text.ON_COMPARE.format(url=compare)),
    ]
    results = [screen.result(EXAMPLES[name].text) for name in TROPHY]
    changed = (word_at(results[0], blind.changed), word_at(results[1], blind.changed))

    def number(token: int) -> int:
        item = view.item_of_token(token)
        return (token if item is None else item) + 1

    say_blind(blind_line(blind, "it", answers, changed, number))


def trophy_ui(screen: ModelOnScreen, merge: bool, hide: bool) -> None:
    """On the trophy sentences: do the heads that link "it" to a noun switch nouns with the meaning?
    (Asked only where the model sees the change at "it": see trophy_blind.)"""
    rankings = {}
    for name in TROPHY:
        rankings[name] = _pair_weights(screen.result(EXAMPLES[name].text), merge, hide)
        if rankings[name] is None:
            return
    heads: list[tuple[int, int]] = []
    for name in TROPHY:
        for noun in ("trophy", "suitcase"):
            for link in rankings[name][noun][:TROPHY_HEADS]:
                if (link.layer, link.head) not in heads:
                    heads.append((link.layer, link.head))
    st.markdown(text.TROPHY_TITLE)
    st.markdown(text.TROPHY_INTRO.format(large=EXAMPLES[TROPHY[0]].text, small=EXAMPLES[TROPHY[1]].text))
    lines, follow = [text.TROPHY_HEADER], 0
    for layer, head in heads:
        large, first = _cell(rankings[TROPHY[0]], layer, head)
        small, second = _cell(rankings[TROPHY[1]], layer, head)
        ok = (first, second) == ("trophy", "suitcase")
        follow += ok
        verdict = text.TROPHY_YES if ok else text.TROPHY_NO.format(first=first, second=second)
        lines.append(
            text.TROPHY_ROW.format(layer=layer + 1, head=head + 1, large=large, small=small, verdict=verdict)
        )
    st.markdown("\n".join(lines))
    n = len(heads)
    if follow == 0:
        summary = text.TROPHY_NONE.format(n=n)
    elif follow == n:
        summary = text.TROPHY_ALL.format(n=n)
    else:
        summary = text.TROPHY_SOME.format(k=follow, n=n, rest=n - follow)
    st.markdown(summary)


def trophy_pronoun_pair(screen: ModelOnScreen) -> str | None:
    """Across the two trophy sentences: does the content word nearest to "it" change with the meaning?
    (None when the model's tokens do not hold "it" as a word.)"""
    closes = []
    for name in TROPHY:
        result = screen.result(EXAMPLES[name].text)
        token = token_of(result, "it")
        if token is None:
            return None
        closes.append(closeness(result, token))
    return pair_statement(*closes, tuple(EXAMPLES[name].referent for name in TROPHY))
