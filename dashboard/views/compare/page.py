"""The compare page put together: state from the link, the model, the two sentences, their results,
then one head on both (and their difference where the tokens line up), and the heads ranked by how
much the focus word's attention changed. Each step that can fail says why and stops there; a bad
sentence never hides the other one."""

from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from core.measures.compare import (
    Alignment,
    align_tokens,
    first_difference,
    rank_changes,
    row_by_row,
    swap_labels,
)
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.charts.compare import difference_map, head_map
from dashboard.charts.heatmap import PAGE as PAGE_SIZING
from dashboard.charts.heatmap import PRESENTER
from dashboard.content import compare as text
from dashboard.content.compare import PRESETS
from dashboard.continuation import pair_ui
from dashboard.engines import load_engine, session_result
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, current_limits
from dashboard.model_pick import model_pick_ui
from dashboard.on_screen import counting_specials, say_blind
from dashboard.presenter import presenting
from dashboard.state import clean_widget_text, signature
from dashboard.trained_models import letters_became, reads_letters
from dashboard.views.compare import focus_reading, links
from dashboard.views.compare.patching import patching_ui
from dashboard.views.compare.side import Side
from dashboard.views.compare.widgets import (
    focus_ui,
    layer_head_ui,
    open_head,
    present_view_ui,
    ranking_ui,
    sentences_ui,
)
from dashboard.widgets import chart, chart_filename, error_md, md

LOG = logging.getLogger(__name__)
# presenter mode's maps at 1920x1080, under a deck's bar, the controls panel and the switch: a pair of
# 17-token maps at 640 ran 73 px (side by side) and 106 px (the difference) past the bottom edge
ROOM_HEIGHT = 520


def render() -> None:
    if not presenting():  # on a projector the charts come first
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    limits = current_limits()  # read on every run: the setting can change without a restart
    try:
        _render(limits)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("compare page failed")
        st.error(f"Something went wrong while drawing this view ({type(err).__name__}). Try other sentences.")
    finally:
        links.page_links(limits).save()


def _note(message: str) -> None:
    """A note about the link or the input: shown, and kept for one more run, so the run that opens
    a preset's most changed head (st.rerun) says it too."""
    st.info(message)
    st.session_state.setdefault("compare_said", []).append(message)


def _start(limits: Limits) -> None:
    ss = st.session_state
    replay, ss["compare_said"] = ss.pop("compare_replay", []), []
    for note in [*replay, *links.init_state(limits)]:
        _note(note)
    links.page_links(limits).restore()
    for key, what in (("compare_text", "first sentence"), ("compare_text2", "second sentence")):
        if note := clean_widget_text(key, links.max_chars(limits), what):
            st.warning(note)


def _compute(model_key: str, engine: str, sentence: str, n: int, limits: Limits) -> AttentionResult | None:
    """Sentence n's result, or None with the reason shown."""
    if not sentence.strip():
        st.info(f"Type sentence {n} above, or pick a pair.")
        return None
    try:
        result = session_result(f"compare{n}", model_key, engine, sentence, limits)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
        return None
    except (ModelError, ValueError) as err:  # ValueError: text an engine cannot read (TextError)
        st.error(f"Sentence {n}: could not run the model on this text: {error_md(err)}")
        return None
    except Exception as err:
        LOG.exception("computing attention failed")
        st.error(f"Sentence {n}: Could not run the model on this text ({type(err).__name__}).")
        return None
    if result.truncated:
        limit = result.meta.get("max_tokens", result.n_tokens)
        reader = "this public demo" if limits.hosted else "the model"
        st.warning(
            f"Sentence {n} is {result.meta.get('n_tokens_input', 'more than ' + str(limit))} tokens "
            f"long; {reader} reads at most {limit}{counting_specials(result)}, so only its "
            f"first {result.n_tokens} tokens are compared."
        )
    if result.special_mask.all():
        st.info(
            f"The model finds no words in sentence {n}: its tokenizer drops control characters and "
            "invisible marks."
        )
        return None
    return result


def _controls():
    """In presenter mode the sentences and pickers fold into one closed panel above the charts."""
    if presenting():
        return st.expander("Controls: sentences, layer, head and focus word", icon=":material/tune:")
    return st.container()


def _render(limits: Limits) -> None:
    _start(limits)
    # "open the most changed head" is for this run only: a run that stops before the ranking (no
    # model, a refused or unreadable sentence) must not leave it to override a later choice
    open_best = bool(st.session_state.pop("compare_pending_best", False))
    picked = model_pick_ui(links.PAGE, limits)
    controls = _controls()
    with controls:
        texts = sentences_ui(limits)
    if picked is None:
        links.write_url(limits)
        return
    spec, engine = picked
    results = [_compute(spec.key, engine, t, n, limits) for n, t in enumerate(texts, start=1)]
    shown = [r for r in results if r is not None]
    if not shown:
        links.write_url(limits, model=spec.key)
        return
    for note in links.check_link_positions(shown[0].n_layers, shown[0].n_heads):
        _note(note)
    letters = reads_letters(spec.key) and letters_became(load_engine(spec.key, engine).tokenizer, texts[0])
    if letters:  # an English pair into a letter model: what the model read instead
        st.info(letters)
    with controls:
        cols = st.columns(3)
        layer, head = layer_head_ui(shown[0].n_layers, shown[0].n_heads, cols[:2])
    if len(shown) == 1:  # one sentence is missing or unreadable: still show the other
        n = 1 if results[0] is not None else 2
        _one(shown[0], n, layer, head)
    else:
        sides = Side.of(results[0]), Side.of(results[1])
        _both(*sides, layer, head, (spec.key, engine), cols[2], open_best)
    links.write_url(limits, model=spec.key)


def _one(result: AttentionResult, n: int, layer: int, head: int) -> None:
    fig = head_map(
        result.attentions[layer, head],
        result.tokens,
        title=f"Sentence {n} · layer {layer + 1}, head {head + 1}",
        share=1.0 if presenting() else 0.5,
        max_height=ROOM_HEIGHT if presenting() else 900,
        sizing=PRESENTER if presenting() else PAGE_SIZING,
    )
    with st.columns(2)[n - 1] if not presenting() else st.container():
        chart(
            fig,
            f"compare_head{n}",
            chart_filename("compare", f"sentence{n}", f"layer{layer + 1}", f"head{head + 1}"),
        )


def _focus(one: Side, two: Side, notes: list[str]) -> str | None:
    """The focus word's reference: the link's or the user's when both sentences have it, else the
    preset's, else the shared word just before the first word that differs."""
    ss = st.session_state
    shared = [ref for ref in one.refs if two.token_of(ref) is not None]
    if not shared:
        st.info(text.NO_SHARED)
        return None
    asked = ss.get("compare_focus")
    if asked and asked not in shared:
        notes.append(
            f"“{md(asked)}” is not a word both sentences share, so the focus is back to the default."
        )
    preset = PRESETS.get(ss.get("compare_preset"))
    if preset is not None and preset.focus in shared:
        default, rule = preset.focus, text.FOCUS_RULE_PRESET
    else:
        default, rule = _default_focus(one, two, shared)
    focus = focus_ui(shared, default)
    st.caption(rule if focus == default else text.FOCUS_RULE_CHOSEN)  # says what is shown
    return focus


def _default_focus(one: Side, two: Side, shared: list[str]) -> tuple[str, str]:
    """The focus when none is chosen, and the line that says the rule: the shared word just before
    the first word that differs; in a causal decoder, which reads that word before the change, the
    first shared word at or after it instead (core.measures.claims.blind_spot)."""
    refs1 = one.refs
    k = first_difference(refs1, two.refs)
    # a word at the same place in both can be compared key by key; one that moved cannot
    in_place = [ref for ref in shared if one.token_of(ref) == two.token_of(ref)] or shared
    if one.result.decoder:
        seeing = [ref for ref in in_place if refs1.index(ref) >= k]
        if seeing:
            return seeing[0], text.FOCUS_RULE_DEFAULT_DECODER
    before = refs1[k - 1] if 0 < k <= len(refs1) else None
    return (before if before in in_place else in_place[0]), text.FOCUS_RULE_DEFAULT


def _say_alignment(one: AttentionResult, two: AttentionResult, alignment: Alignment) -> None:
    if alignment.moved:
        st.info(text.MOVED.format(n=one.n_tokens))
    elif not alignment.aligned:
        st.info(text.NOT_ALIGNED.format(n1=one.n_tokens, n2=two.n_tokens))
    elif alignment.swapped:
        labels = swap_labels(one.tokens, two.tokens, alignment.swapped)
        swaps = ", ".join(f"“{md(label)}”" for _, _, label in labels)
        st.markdown(text.ALIGNED.format(n=one.n_tokens, swaps=swaps))
    else:
        st.markdown(text.IDENTICAL)


def _rank_caption(
    focus: str, alignment: Alignment, rowwise: bool, spans: tuple, result: AttentionResult
) -> str:
    """The ranking's rule, with the reason it is the one used (the alignment decided once)."""
    if rowwise:
        rule = text.RANK_RULE_ALIGNED
    else:
        why = text.BINS_WHY_FOCUS if alignment.aligned else text.BINS_WHY_TOKENS
        rule = f"{why} {text.RANK_RULE_BINS}"
    if any(stop - start > 1 for start, stop in spans):
        rule += " " + text.FOCUS_PIECES
    roles = _roles(result)
    return rule.format(focus=md(focus), n=len(roles), roles=", ".join(roles))


def _roles(result: AttentionResult) -> list[str]:
    """The role bins (core.measures.compare.role_bins) this model's rows fall in, in words: the
    added tokens only where its tokenizer adds some, the token after only where a row can see it."""
    special = result.special_mask
    roles = [text.ROLE_FIRST.format(token=md(result.tokens[0]))] if special[0] else []
    later = dict.fromkeys(t for t, s in zip(result.tokens[1:], special[1:], strict=True) if s)
    if later:
        roles.append(text.ROLE_OTHER_SPECIALS.format(tokens=", ".join(md(t) for t in later)))
    return [
        *roles,
        text.ROLE_ITSELF,
        text.ROLE_PREVIOUS,
        *([] if result.decoder else [text.ROLE_NEXT]),
        text.ROLE_REST,
    ]


def _both(one: Side, two: Side, layer: int, head: int, model: tuple, focus_place, open_best: bool) -> None:
    notes: list[str] = []
    with focus_place:
        focus = _focus(one, two, notes)
    for note in notes:
        _note(note)
    f1, f2 = one.span_of(focus), two.span_of(focus)
    r1, r2 = one.result, two.result
    alignment = align_tokens(r1.tokens, r2.tokens)  # decided once: the message, the map, the ranking
    _say_alignment(r1, r2, alignment)
    blind = focus_reading.blind(one, two, (f1, f2))
    if blind is not None:
        say_blind(focus_reading.blind_line_for(one, two, blind, f1))
    rowwise = row_by_row(alignment, f1, f2)
    ranked = None
    if f1 is not None and f2 is not None and blind is None:  # read where the model sees the change
        ranked = rank_changes(
            r1.attentions, r2.attentions, f1, f2, r1.special_mask, r2.special_mask,
            one.words.spans, two.words.spans, rowwise,
        )  # fmt: skip
    if open_best and ranked:
        open_head(ranked[0].layer, ranked[0].head)  # a preset was chosen: show its most changed head
        st.session_state["compare_replay"] = st.session_state.get("compare_said", [])
        st.rerun()
    shown = _charts(one, two, (f1, f2), layer, head, alignment.aligned, rowwise)
    limits = current_limits()
    if shown == "patch":  # presenter mode: patching takes the charts' place
        patching_ui(r1.decoder, focus, model[0], limits)
    # a projector's screen holds the maps (or the grid): what is measured below them opens on demand
    with st.expander(text.PRESENT_MORE, icon=":material/analytics:") if presenting() else st.container():
        if ranked is not None:
            st.subheader(text.RANK_TITLE)
            st.caption(_rank_caption(focus, alignment, rowwise, (f1, f2), r1))
            sig = signature(*model, r1.tokens, r2.tokens, focus)
            ranking_ui(ranked, one.words.labels, two.words.labels, sig)
            focus_reading.pronoun_test(one, two, focus, (f1, f2))
            focus_reading.how_far_it_moves(one, two, (f1, f2))
        if r1.decoder:  # the model's own answer: which continuation it prefers after each sentence
            texts = (st.session_state["compare_text"], st.session_state["compare_text2"])
            pair_ui("compare", model[0], texts)
        if shown != "patch":
            patching_ui(r1.decoder, focus, model[0], limits)


def _charts(one: Side, two: Side, focus: tuple, layer: int, head: int, aligned: bool, rowwise: bool) -> str:
    """Both heads side by side; where the tokens line up, the difference too (presenter mode: one
    or the other, or patching's grid, chosen with a switch, so nothing needs scrolling); returns
    what was chosen ("side", "diff" or "patch"). `focus` holds each sentence's
    focus word span, outlined in its map; the difference map outlines it only when it is the same
    rows in both sentences."""
    present = presenting()
    sizing = PRESENTER if present else PAGE_SIZING
    height = ROOM_HEIGHT if present else 900
    where = f"layer {layer + 1}, head {head + 1}"
    r1, r2 = one.result, two.result
    views = ["side", *(["diff"] if aligned else []), *(["patch"] if r1.n_tokens == r2.n_tokens else [])]
    show = present_view_ui(views) if present and len(views) > 1 else "side"
    if show == "patch":
        return show
    if show == "side":
        cols = st.columns(2)
        for n, (col, result, row) in enumerate(zip(cols, (r1, r2), focus, strict=True), start=1):
            fig = head_map(
                result.attentions[layer, head], result.tokens, title=f"Sentence {n} · {where}",
                focus_row=row, share=0.5, max_height=height, sizing=sizing,
            )  # fmt: skip
            with col:
                name = chart_filename("compare", f"sentence{n}", f"layer{layer + 1}", f"head{head + 1}")
                chart(fig, f"compare_head{n}", name)
        st.caption(text.SCALE_NOTE + (" " + text.ROW_OUTLINE if focus[0] is not None else ""))
    if not aligned or (present and show != "diff"):
        return show
    diff = np.asarray(r2.attentions[layer, head], np.float64) - np.asarray(
        r1.attentions[layer, head], np.float64
    )
    fig = difference_map(
        diff, r1.tokens, r2.tokens, title=f"{text.DIFF_TITLE} · {where}",
        focus_row=focus[0] if rowwise else None, share=0.6, max_height=height, sizing=sizing,
    )  # fmt: skip
    cols = st.columns([3, 2])
    with cols[0]:
        chart(
            fig,
            "compare_diff",
            chart_filename("compare", "difference", f"layer{layer + 1}", f"head{head + 1}"),
        )
    with cols[1]:
        st.caption(text.DIFF_CAPTION)
    return show
