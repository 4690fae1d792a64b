"""What the model made of the compare page's focus word in each sentence: how far its vector moves
between them and the pronoun test side by side; on a causal decoder whose focus word comes before the
first token that differs, neither is read (core/measures/claims.py): one line says why and what can
answer instead."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.measures.analysis import piece_text
from core.measures.claims import Blind, blind_spot
from core.measures.referent import closeness
from core.measures.similarity import word_across_layers
from core.models.result import AttentionResult
from dashboard import pronoun
from dashboard.charts.explore import escape_label
from dashboard.charts.pronoun import closeness_lines
from dashboard.content import claims as claims_text
from dashboard.content import compare as text
from dashboard.content.compare import PRESETS
from dashboard.content.pronoun import EMBEDDINGS, X_TITLE
from dashboard.on_screen import attention_kind, blind_line, word_at
from dashboard.presenter import presenting
from dashboard.views.compare.side import Side
from dashboard.widgets import chart, chart_filename, md


def blind(one: Side, two: Side, spans: tuple) -> Blind | None:
    """On a causal decoder, a focus word (its tokens `spans` in each sentence) before the first token
    that differs: no measure read at it can differ (core.measures.claims), so the page draws no
    verdict from it. None where the focus word sees the difference."""
    if spans[0] is None or spans[1] is None:
        return None
    r1, r2 = one.result, two.result
    return blind_spot(attention_kind(r1), r1.tokens, r2.tokens, max(spans[0][1], spans[1][1]) - 1)


def blind_line_for(one: Side, two: Side, found: Blind, span: tuple[int, int]) -> str:
    """The line said instead: tokens numbered from 1 as the maps show them, the changed word whole,
    and what answers on this page (the continuation and patching, below)."""
    answers = [
        a.format(where=claims_text.BELOW)
        for a in (claims_text.ANSWER_CONTINUATION, claims_text.ANSWER_PATCHING)
    ]
    changed = (word_at(one.result, found.changed), word_at(two.result, found.changed))
    return blind_line(found, focus_word(one.result, span), answers, changed, lambda token: token + 1)


def focus_word(result: AttentionResult, span: tuple[int, int]) -> str:
    """The focus word as a reader writes it, from its tokens."""
    return "".join(piece_text(t) for t in result.tokens[span[0] : span[1]])


# the change in cosine, first layer to last, below which the page says the readings stayed alike
STILL = 0.05


def how_far_it_moves(one: Side, two: Side, spans: tuple) -> None:
    """The focus word's vector in sentence 1 against sentence 2: cosine at every layer, and a line."""
    r1, r2 = one.result, two.result
    cosine = word_across_layers(r1.hidden_states, spans[0], r2.hidden_states, spans[1])  # (L + 1,)
    word = focus_word(r1, spans[0])
    st.subheader(text.MOVES_TITLE.format(word=md(word)))
    change = cosine[-1] - cosine[0]
    verdict = (
        text.MOVES_APART if change < -STILL else text.MOVES_TOGETHER if change > STILL else text.MOVES_STILL
    )
    low = int(np.argmin(cosine))
    why = text.MOVES_SAME_PLACE if spans[0] == spans[1] else text.MOVES_OTHER_PLACE
    said = text.MOVES_SAID.format(
        word=md(word),
        first=cosine[0],
        last=cosine[-1],
        low=cosine[low],
        low_layer=low,
        why=why,
        verdict=verdict,
    )
    st.markdown(said)
    fig = closeness_lines(
        [text.MOVES_LINE.format(word=word)],
        cosine[None, :],
        title=escape_label(text.MOVES_CHART.format(word=word)),
        x_title=X_TITLE,
        y_title=text.MOVES_Y,
        first_label=EMBEDDINGS,
        font=18 if presenting() else 14,
    )
    chart(fig, "compare_moves", chart_filename("compare", "moves"))
    st.caption(text.MOVES_CAPTION)


def pronoun_test(one: Side, two: Side, focus: str, spans: tuple) -> None:
    """Side by side: which content word each sentence's focus word ends up nearest to, then, for a
    preset that says what the word means to a reader, whether that follows the meaning."""
    preset = PRESETS.get(st.session_state.get("compare_preset"))
    texts = [st.session_state.get(key) for key in ("compare_text", "compare_text2")]
    known = preset is not None and preset.referents and [preset.text, preset.text2] == texts
    referents = preset.referents if known and focus == preset.focus else (None, None)
    closes = [closeness(side.result, span[0]) for side, span in zip((one, two), spans, strict=True)]
    st.subheader(text.PRONOUN_TITLE.format(word=md(closes[0].words[closes[0].focus])))
    for col, close, referent in zip(st.columns(2), closes, referents, strict=True):
        col.markdown(pronoun.statement(close, referent))
    if referents[0] and (pair := pronoun.pair_statement(*closes, referents)):
        st.markdown(pair)
    for n, (col, close) in enumerate(zip(st.columns(2), closes, strict=True), start=1):
        with col:
            pronoun.closeness_chart_ui(close, f"compare_pronoun_{n}")
    pronoun.caption_ui(one.result)
