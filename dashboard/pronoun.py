"""The pronoun test, shared by explore's focus view and the compare page: which content word is the focus
word's own vector closest to, after each layer (core/measures/referent.py), as a small line chart and one
plain sentence computed from it. Where the page knows what a reader takes the word to mean (the trophy
sentences), the sentence says whether the model's representation agrees.
"""

from __future__ import annotations

import streamlit as st

from core.measures.referent import Closeness, closeness
from core.models.result import AttentionResult
from dashboard.charts.explore import escape_label
from dashboard.charts.pronoun import closeness_lines
from dashboard.content import pronoun as text
from dashboard.presenter import presenting
from dashboard.widgets import chart, chart_filename, md

LINES = 4  # content words drawn: the nearest ones after the last layer


def statement(close: Closeness, referent: str | None = None) -> str:
    """The result in plain words: the nearest content word after the last layer (and the next), and,
    when `referent` (what a reader takes the focus word to mean) is among the words, whether it is
    the one the model's vector is nearest to."""
    focus = md(close.words[close.focus])
    ranked = close.ranked()
    if not ranked:
        return text.NONE.format(focus=focus)
    cos = close.cosine[-1]
    first = ranked[0]
    said = text.NEAREST.format(focus=focus, first=md(close.words[first]), first_cos=cos[first])
    if len(ranked) > 1:
        said += text.NEXT.format(second=md(close.words[ranked[1]]), second_cos=cos[ranked[1]])
    said += "."
    named = [w for w in ranked if referent and close.words[w].casefold() == referent.casefold()]
    if named:
        template = text.AGREES if named[0] == first else text.DISAGREES
        said += template.format(focus=focus, referent=md(close.words[named[0]]), referent_cos=cos[named[0]])
    return said


def pair_statement(first: Closeness, second: Closeness, referents: tuple[str, str]) -> str | None:
    """For a minimal pair whose focus word means `referents` to a reader: does the nearest content
    word change with the meaning? None when a sentence has no content word to compare."""
    nearest = [close.nearest() for close in (first, second)]
    if None in nearest:
        return None
    words = [close.words[w] for close, w in zip((first, second), nearest, strict=True)]
    fields = {
        "focus": md(first.words[first.focus]),
        "ref1": md(referents[0]),
        "ref2": md(referents[1]),
        "word1": md(words[0]),
        "word2": md(words[1]),
        "word": md(words[0]),
    }
    folded = [w.casefold() for w in words]
    if folded[0] == folded[1]:
        return text.PAIR_SAME.format(**fields)
    if folded == [r.casefold() for r in referents]:
        return text.PAIR_FOLLOWS.format(**fields)
    return text.PAIR_OTHER.format(**fields)


def closeness_chart_ui(close: Closeness, key: str) -> None:
    """The focus word's cosine to its nearest content words (at most LINES), layer by layer."""
    shown = close.ranked()[:LINES]
    if not shown:
        return
    word = close.words[close.focus]
    fig = closeness_lines(
        [close.words[w] for w in shown],
        close.cosine[:, shown].T,
        title=escape_label(text.CHART_TITLE.format(word=word)),
        x_title=text.X_TITLE,
        y_title=escape_label(text.Y_TITLE.format(word=word)),
        first_label=text.EMBEDDINGS,
        font=18 if presenting() else 14,
    )
    chart(fig, key, chart_filename(key), alt=statement(close))


def caption_ui(result: AttentionResult) -> None:
    """How to read the test, in the words of the model shown (a decoder, an encoder; its added tokens)."""
    model = text.LANGUAGE_MODEL if result.decoder else text.SENTENCE_MODEL
    causal = text.CAUSAL_NOTE if result.decoder else ""
    st.caption(text.CAPTION.format(model=model) + causal + " " + content_rule(result))


def content_rule(result: AttentionResult) -> str:
    """Which words the test compares with, naming this model's added tokens where it has some."""
    added = " and ".join(
        dict.fromkeys(t for t, s in zip(result.tokens, result.special_mask, strict=True) if s)
    )
    return text.CONTENT_RULE.format(specials=text.SPECIALS.format(specials=md(added)) if added else "")


def pronoun_test_ui(
    result: AttentionResult, focus_token: int, key: str, referent: str | None = None, pair: str | None = None
) -> None:
    """For one sentence: the result in words, then the chart, for the word holding `focus_token`;
    `key` names the chart; `pair`: what the minimal pair shows (pair_statement), said right after."""
    close = closeness(result, focus_token)
    if not presenting():
        st.markdown("#### " + text.TITLE.format(word=md(close.words[close.focus])))
    st.markdown(statement(close, referent))
    if pair:
        st.markdown(pair)
    closeness_chart_ui(close, key)
    caption_ui(result)
