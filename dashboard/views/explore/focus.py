"""The explore page's focus view: one token in every head, "find the head" (which heads link it most
specifically to a target), on the trophy sentences whether they switch nouns with the meaning, the
pronoun test, and on a decoder the model's own answer (its preferred continuation).

What each part may claim follows the model on screen (dashboard/on_screen.py): on a causal decoder the
trophy pair's measures at "it" give way to one line (find_head.trophy_blind), and a target after the
focus gets the mask's zeros said as such, not ranked. On a projector the view shows one part at a
time (`part` in the link), so a deck's slide opens on what it is about and nothing needs scrolling.
Letters: L layers, H heads, W shown tokens.
"""

from __future__ import annotations

import streamlit as st

from core.measures.analysis import TokenView
from core.models.result import AttentionResult
from dashboard.charts.explore import focus_heatmap, head_weight_grid
from dashboard.content import explore as text
from dashboard.content.explore import EXAMPLES
from dashboard.content.focus import FOCUS_PARTS, FOCUS_PRESENT_LABEL
from dashboard.continuation import continuation_ui
from dashboard.on_screen import ModelOnScreen
from dashboard.presenter import presenting
from dashboard.pronoun import pronoun_test_ui
from dashboard.views.explore import find_head, links
from dashboard.views.explore.results import link_ranking
from dashboard.views.explore.views import view_note
from dashboard.views.explore.widgets import present_part_ui, token_picker_ui
from dashboard.widgets import chart, md

PART_KEY = "explore_focus_part"  # presenter mode: which part fills the screen (the link's `part`)


def _pair_ui(result: AttentionResult, view: TokenView, sig: str, tokens: tuple) -> tuple[int, int]:
    """The focus and target pickers; a choice (not the page's defaults) is kept as two word
    references, so it follows the words into an edited sentence and the head view marks it."""
    ss = st.session_state
    cols = st.columns(2)
    with cols[0]:
        a, chose_a = token_picker_ui("focus", "Focus token (from)", view, result, sig, tokens[0])
    with cols[1]:
        label = "Find the heads that link it to (to)"
        b, chose_b = token_picker_ui("target", label, view, result, sig, tokens[1], avoid=a)
    if chose_a or chose_b:
        ss["explore_focus"] = links.ref_of(result, view.shown_spans[a][0])
        ss["explore_target"] = links.ref_of(result, view.shown_spans[b][0])
    return a, b


def _part(trophy: bool) -> str | None:
    """Presenter mode's part (None: the page shows every part, one under the other); "pair" only
    where there is a pair."""
    if not presenting():
        return None
    parts = {name: label for name, label in FOCUS_PARTS.items() if trophy or name != "pair"}
    return present_part_ui(PART_KEY, FOCUS_PRESENT_LABEL, parts)


def focus_view(
    result: AttentionResult, view: TokenView, sig: str, tokens: tuple, screen: ModelOnScreen, controls=None
) -> None:
    """`tokens`: the resolved (focus, target) token indices or None; `screen`: the model on screen;
    `controls`: where the pickers go (presenter mode: a closed panel)."""
    with controls or st.container():
        a, b = _pair_ui(result, view, sig, tokens)
    trophy = _shown_example() in find_head.TROPHY
    part = _part(trophy)
    a_label = view.labels[a]
    if part in (None, "heads"):
        _heads(result, view, (a, b), screen)
    referent = _referent(a_label) if screen.may("referent") else None
    blind = find_head.trophy_blind(screen) if trophy else None
    if part in (None, "pair") and trophy:
        if blind is not None:  # a causal model at "it": nothing there differs between the two sentences
            find_head.say_trophy_blind(blind, screen, view)
        else:
            find_head.trophy_ui(screen, view.merged, view.renormalised)
    if part in (None, "reading"):
        referent = None if blind is not None else referent
        pair = find_head.trophy_pronoun_pair(screen) if referent else None
        pronoun_test_ui(result, view.shown_spans[a][0], "explore_pronoun", referent, pair=pair)
        if screen.may("continuation"):  # the model's own answer, beside what its heads and vectors show
            continuation_ui("explore", screen.key, st.session_state.get("explore_text", ""))
    if part in (None, "rows"):
        st.caption(text.FOCUS_ROWS_CAPTION.format(a=md(a_label)))
        chart(focus_heatmap(view.row(result.attentions, a), view.labels, a_label), "explore_focus_chart")
    if note := view_note(view):
        st.caption(note)


def _heads(result: AttentionResult, view: TokenView, pair: tuple[int, int], screen: ModelOnScreen) -> None:
    """ "Find the head": the sentence, every head's weight from the focus to the target, the most
    specific heads as buttons and (not on a projector) the table of their scores."""
    a, b = pair
    ranked = link_ranking(result, view, a, b)
    a_label, b_label = view.labels[a], view.labels[b]
    after = screen.decoder and view.shown_spans[b][0] > view.shown_spans[a][0]  # masked out: all zeros
    st.markdown(find_head.headline(ranked, a_label, b_label, after))
    if after:  # a ranking of the mask's zeros would be a verdict about nothing
        return
    weights = view.row(result.attentions, a)[..., b]  # (L, H)
    left, right = st.columns([3, 1])
    with left:
        st.caption(text.FOCUS_GRID_CAPTION.format(a=md(a_label), b=md(b_label)))
        best = ranked[0]
        chart(
            head_weight_grid(weights, a_label, b_label, selected=(best.layer, best.head)),
            "explore_focus_grid",
        )
    with right:
        find_head.top_heads_ui(ranked)
    if not presenting():  # the table's scores are for the reader; the room has the grid and buttons
        find_head.ranking_table_ui(ranked, a_label, b_label, screen)


def _shown_example() -> str | None:
    """The gallery example whose sentence is in the box, or None (a sentence of the user's)."""
    shown = st.session_state.get("explore_text")
    return next((name for name, example in EXAMPLES.items() if example.text == shown), None)


def _referent(focus_label: str) -> str | None:
    """What a reader takes the focus word to mean, when the sentence and focus word are an example's
    that says so (the trophy sentences' "it")."""
    example = EXAMPLES.get(_shown_example() or "")
    if example and example.referent and example.focus == focus_label.casefold():
        return example.referent
    return None
