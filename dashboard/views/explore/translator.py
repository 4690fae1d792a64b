"""The explore page on the translator trained here (models/translator, core/translate/): a typed
English sentence translated greedily, one head's attention in one of the translator's three kinds
(cross-attention, the encoder's and the decoder's self-attention), and, where the grammar can write
the sentence, its gold alignment outlined and every cross-attention head's alignment on it.

State (in the link, see links.py): text, layer, head and kind. Letters: L layers, H heads, T French
tokens, S English tokens.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from core.translate.engine import TRANSLATOR_KEY, Translation, TranslatorInputError, translator_dir
from core.translate.measures import alignment_accuracy
from core.translate.parse import pair_of
from core.translate.record import load_record as load_translation_record
from dashboard.charts.ablation import effect_grid
from dashboard.charts.heatmap import PAGE, PRESENTER, matrix_heatmap
from dashboard.charts.marks import gold_outlines
from dashboard.content import translator as text
from dashboard.content.explore import VIEWS as EXPLORE_VIEWS
from dashboard.engines import translator_engine, translator_version
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.presenter import presenting
from dashboard.views.explore.translator_views import lines_view, model_view, steps_view
from dashboard.widgets import chart, chart_filename, md

KIND_KEY, LAST_KEY, VIEW_KEY = "explore_tr_kind", "explore_tr_last", "explore_view"
ROOM_ROWS_PX = 500  # the cross-attention's cells at 1920 x 1080: the slanted labels above, the legend below


def translation_of(model: str, sentence: str) -> Translation:
    """`model`'s translation of `sentence` (cached per version of its weights: a retrained folder
    translates again)."""
    return _translation(model, translator_version(translator_dir(model)), sentence)


@st.cache_data(max_entries=64, show_spinner=False)
def _translation(model: str, _version, sentence: str) -> Translation:
    return translator_engine(model).translate(sentence)


def recorded_alignment(model: str) -> tuple[np.ndarray, int] | None:
    """(L, H) each head's alignment on the held-out pairs at the end of `model`'s training, and their
    number; None when its folder holds no readable record."""
    folder = translator_dir(model)
    return _recorded_alignment(str(folder), translator_version(folder))


@st.cache_data(max_entries=8, show_spinner=False)
def _recorded_alignment(folder: str, _version) -> tuple[np.ndarray, int] | None:
    record = load_translation_record(Path(folder))
    if record is None:
        return None
    return np.asarray(record.alignment[-1]), int(record.settings["eval_pairs"])


def _pick(name: str) -> None:
    st.session_state["explore_text"] = text.EXAMPLES[name]
    st.session_state["explore_tr_pick"] = None  # an example is a one-off action


def _view_ui() -> str:
    """The view: head, lines, model or step by step; another model's view (a link's, or the last
    model's) turns into the head view with one line saying so."""
    ss = st.session_state
    if ss.get(VIEW_KEY) not in text.VIEWS:
        if ss.get(VIEW_KEY) in EXPLORE_VIEWS:
            st.info(text.VIEW_NOT_HERE.format(view=EXPLORE_VIEWS[ss[VIEW_KEY]]))
        ss[VIEW_KEY] = "head"
    return st.segmented_control(
        "View", list(text.VIEWS), format_func=text.VIEWS.get, key=VIEW_KEY, required=True
    )


def controls_ui(n_layers: int, n_heads: int, model: str) -> tuple[str, str, str, int, int]:
    """Examples, the sentence box, the view, the kind, layer and head: (sentence, view, kind, layer,
    head). Step by step is always cross-attention, one layer's every head."""
    ss = st.session_state
    st.pills(
        "Examples", list(text.EXAMPLES), key="explore_tr_pick", on_change=lambda: _pick(ss["explore_tr_pick"])
    )
    st.text_input(text.SENTENCE_LABEL, key="explore_text", max_chars=300)
    left, right = st.columns([9, 10])  # both controls whole at 1280 px
    with left:
        view = _view_ui() or "head"
    if ss.get(KIND_KEY) not in text.KINDS:
        ss[KIND_KEY] = "cross"
    if view != "generate":
        right.segmented_control(
            "Attention", list(text.KINDS), format_func=text.KIND_BUTTONS.get, key=KIND_KEY, required=True
        )
    kind = "cross" if view == "generate" else ss[KIND_KEY] or "cross"
    recorded = recorded_alignment(model)
    if ss.get("explore_tr_opened") != model:  # first time: the head that aligned best in training
        linked = ss.get("explore_tr_opened") is None and (
            "layer" in st.query_params or "head" in st.query_params
        )
        ss["explore_tr_opened"] = model
        if recorded is not None and not linked:  # ... unless the link names one
            best = np.unravel_index(int(np.argmax(recorded[0])), (n_layers, n_heads))
            ss["explore_layer"], ss["explore_head"] = int(best[0]), int(best[1])
    ss["explore_layer"] = min(max(int(ss.get("explore_layer") or 0), 0), n_layers - 1)
    ss["explore_head"] = min(max(int(ss.get("explore_head") or 0), 0), n_heads - 1)
    cols = st.columns(2)
    layer = cols[0].select_slider(
        f"Layer (1–{n_layers})", range(n_layers), format_func=lambda i: str(i + 1), key="explore_layer"
    )
    if view != "generate":  # the step's chart shows every head of the layer
        cols[1].select_slider(
            f"Head (1–{n_heads})", range(n_heads), format_func=lambda i: str(i + 1), key="explore_head"
        )
    return str(ss.get("explore_text") or ""), view, kind, int(layer), int(ss["explore_head"])


def _translate(model: str, sentence: str, limits: Limits) -> Translation:
    """The translation of `sentence`, or of the last sentence that worked, with one line why."""
    ss = st.session_state
    try:
        count_new_text("translate", sentence, limits.max_texts_per_minute)
        done = translation_of(model, sentence)
        ss[LAST_KEY] = sentence
        return done
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
    except TranslatorInputError as err:
        st.warning(text.UNREADABLE.format(reason=md(err)))
    ss[LAST_KEY] = ss.get(LAST_KEY) or text.DEFAULT_TEXT  # none yet: the page's own example
    return translation_of(model, ss[LAST_KEY])


def translator_view(limits: Limits, controls, model: str = TRANSLATOR_KEY) -> None:
    """`model`: the translator that ships, or a folder the train page saved one in."""
    engine = translator_engine(model)
    with controls:
        sentence, view, kind, layer, head = controls_ui(
            engine.config.decoder_layers, engine.config.heads, model
        )
    done = _translate(model, sentence, limits)
    shown = st.session_state.get(LAST_KEY, sentence)
    gold = pair_of(shown)
    target = " ".join(t for t in done.target_tokens if t != "</s>")
    st.markdown(text.TRANSLATION.format(target=md(target)))
    if gold is None:
        st.caption(text.NOT_GRAMMAR)
    elif list(gold.target) == done.target_tokens[:-1]:
        st.caption(text.GOLD_SAME)
    else:
        st.caption(text.GOLD_OTHER.format(gold=md(" ".join(gold.target))))
    gold = gold if gold is not None and list(gold.target) == done.target_tokens[:-1] else None
    big = presenting()
    if view == "lines":
        lines_view(done, kind, layer, head)
    elif view == "model":
        model_view(done, kind, layer, head)
    elif view == "generate":
        steps_view(done, engine.words, layer)
    elif kind == "cross":
        _cross(done, gold, (layer, head), big, recorded_alignment(model))
    else:
        _self(done, kind, layer, head, big)


def _cross(done: Translation, gold, shown: tuple[int, int], big: bool, recorded) -> None:
    layer, head = shown
    links = gold.alignment if gold is not None else ()
    left, right = st.columns([3, 2]) if gold is not None else (st.container(), None)
    with left:
        st.markdown(f"**{text.CROSS_TITLE.format(layer=layer + 1, head=head + 1)}**")
        fig = matrix_heatmap(
            done.cross[layer, head],
            done.target_tokens,
            done.source_tokens,
            row_title=text.ROW_TARGET,
            col_title=text.COL_SOURCE,
            probabilities=True,
            decimals=2,
            shapes=gold_outlines(links),
            share=0.6 if gold is not None else 1.0,
            sizing=PRESENTER if big else PAGE,
            height=ROOM_ROWS_PX if big else None,  # a projector: the whole matrix on one screen
        )
        chart(
            fig, "explore_tr_cross", chart_filename("explore", "cross-attention", f"L{layer + 1}H{head + 1}")
        )
    with right if big and right is not None else left:  # a projector: beside the matrix, not under it
        st.caption(text.CROSS_CAPTION)
    if gold is None:
        return
    accuracy = alignment_accuracy(done.cross[:, None], [gold])  # (L, H) on this sentence
    with right:
        grid = effect_grid(
            accuracy,
            title=text.ALIGN_TITLE,
            bar_title=text.ALIGN_BAR,
            layer_axis=f"layer (1–{accuracy.shape[0]})",
            head_axis=f"head (1–{accuracy.shape[1]})",
            outlined=[(layer, head)],
            share=0.4,
            sizing=PRESENTER if big else PAGE,
        )
        grid.update_traces(zmax=1.0)
        chart(grid, "explore_tr_align", chart_filename("explore", "alignment"))
        _alignment_line(accuracy, gold, layer, head, recorded)


def _alignment_line(accuracy: np.ndarray, gold, layer: int, head: int, recorded) -> None:
    total = len({t for t, _ in gold.alignment})
    best = np.unravel_index(int(np.argmax(accuracy)), accuracy.shape)
    line = text.ALIGN_LINE.format(
        layer=layer + 1,
        head=head + 1,
        right=round(float(accuracy[layer, head]) * total),
        total=total,
        best_layer=best[0] + 1,
        best_head=best[1] + 1,
        best=float(accuracy[best]),
    )
    if recorded is not None:  # what its training measured, on many sentences
        rec = np.unravel_index(int(np.argmax(recorded[0])), recorded[0].shape)
        line += " " + text.ALIGN_TRAINED.format(
            n=recorded[1], rec_layer=rec[0] + 1, rec_head=rec[1] + 1, rec=float(recorded[0][rec])
        )
    st.markdown(line)
    st.caption(text.ALIGN_CAPTION)


def _self(done: Translation, kind: str, layer: int, head: int, big: bool) -> None:
    """The encoder's or the decoder's self-attention of one head (the decoder's: causal)."""
    weights = (done.encoder if kind == "encoder" else done.decoder)[layer, head]
    tokens = (
        done.source_tokens if kind == "encoder" else ["<s>", *done.target_tokens[:-1]][: weights.shape[0]]
    )
    masked = None if kind == "encoder" else np.triu(np.ones_like(weights, dtype=bool), k=1)
    st.markdown(f"**{text.SELF_TITLE.format(layer=layer + 1, head=head + 1, kind=text.KINDS[kind])}**")
    fig = matrix_heatmap(
        weights,
        tokens,
        tokens,
        row_title="from",
        col_title="to",
        probabilities=True,
        decimals=2,
        masked=masked,
        sizing=PRESENTER if big else PAGE,
    )
    chart(fig, f"explore_tr_{kind}", chart_filename("explore", kind, f"L{layer + 1}H{head + 1}"))
