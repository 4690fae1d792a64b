"""The explore page's ablation view: does a head matter for what the model outputs?

A grid of every head's effect on the sentence embedding when that head alone is switched off
(zero-ablation, core/measures/ablation.py), the ten heads that matter most (each opens the head view), and a
set of heads switched off together: how far the embedding moves, and whether the focus word's final
vector moves (core/measures/referent.py), as grouped bars and one sentence naming the nearest content word.

State: the set is session key "explore_ablate", a sorted tuple of (layer, head) pairs, 0-indexed (in
the link as `ablate=2.3,5.11`, see links.py); how it was chosen is "explore_ablate_preset". The grid
is kept per input for every session (long_work.shelf), the set's last hidden states per input and set
in st.cache_resource. A grid that would take long here asks first and counts (dashboard/long_work.py).
In hosted mode a new grid counts as one new text against the per-minute bound.
Letters: L layers, H heads, T tokens, D hidden size, W words.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from core.measures.ablation import ablated_last_hidden, head_effects, model_output, output_effect
from core.measures.analysis import TokenView, word_spans
from core.measures.claims import may_claim
from core.measures.referent import Closeness, closeness
from core.measures.sweep import batched
from core.models.architectures import is_decoder
from core.models.errors import ModelError
from core.models.registry import BUNDLED_KEY
from core.models.result import AttentionResult
from dashboard import long_work
from dashboard.charts.ablation import before_after_bars, effect_grid
from dashboard.charts.decoder import shown_token
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content import ablation as text
from dashboard.engines import compute_attention, load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.on_screen import attention_kind
from dashboard.presenter import presenting
from dashboard.pronoun import content_rule
from dashboard.views.explore import links
from dashboard.views.explore.results import link_ranking, shown_source
from dashboard.views.explore.widgets import (
    bound_key,
    open_head,
    present_part_ui,
    reset_widgets,
    token_picker_ui,
)
from dashboard.widgets import chart, chart_filename, csv_download, md

SET_KEY, PRESET_KEY, LAYER_KEY = "explore_ablate", "explore_ablate_preset", "explore_ablate_layer"
PRESET_WIDGET = "explore_w_ablate_preset"
PART_KEY = "explore_ablate_part"  # presenter mode's choice of what fills the screen
TOP = 10  # heads in the ranked list
GRIDS = 4  # grids kept per server
SET_SIZE = 5  # heads in the two "top 5" presets

Heads = tuple[tuple[int, int], ...]


# ---- cached arrays ---------------------------------------------------------------------------------


def effect_grid_of(model_key: str, engine: str, sentence: str, max_tokens: int, progress=None) -> np.ndarray:
    """(L, H) each head's effect on the shown input's embedding, read-only: kept for every session
    (the last GRIDS), computed the first time with progress(done, total) over the heads."""
    kept = long_work.shelf("ablation", GRIDS)
    source = (model_key, engine, sentence, max_tokens)
    if (grid := kept.get(source)) is None:
        result = compute_attention(*source)
        grid = head_effects(load_engine(model_key, engine), result, progress=progress)
        grid.setflags(write=False)
        kept.put(source, grid)
    return grid


def grid_work(result: AttentionResult, source: tuple) -> long_work.Work:
    """The grid's work: a run per head over the input (a decoder's output: one next-token distribution)."""
    engine = load_engine(*source[:2])
    runs = result.n_layers * result.n_heads
    work = long_work.Work.on("ablation", source[0], result, engine, runs, outputs=int(is_decoder(engine)))
    if hasattr(engine, "layers_from"):  # NumPy: a run starts at its head's layer (half of them on
        # average); a decoder's runs of a layer go as one batch
        work = replace(work, layers=(result.n_layers + 1) // 2, batched=batched(engine))
    return work


@st.cache_resource(max_entries=8, show_spinner=False)
def ablated_last(model_key: str, engine: str, sentence: str, max_tokens: int, heads: Heads) -> np.ndarray:
    """(T, D) the shown input's last hidden states with `heads` switched off, read-only (a copy)."""
    result = compute_attention(model_key, engine, sentence, max_tokens)
    last = np.array(ablated_last_hidden(load_engine(model_key, engine), result, heads), dtype=np.float32)
    last.setflags(write=False)
    return last


@st.cache_resource(max_entries=8, show_spinner=False)
def set_outputs(model_key: str, engine: str, sentence: str, max_tokens: int, heads: Heads) -> tuple:
    """(effect, output before, output after) of switching `heads` off together: how far the model's
    output moves (core.measures.ablation.output_effect) and the two outputs themselves."""
    engine_obj = load_engine(model_key, engine)
    result = compute_attention(model_key, engine, sentence, max_tokens)
    before = model_output(engine_obj, result.hidden_states[-1])
    after = model_output(engine_obj, ablated_last(model_key, engine, sentence, max_tokens, heads))
    return output_effect(engine_obj, after, before), before, after


def next_token_change(before: np.ndarray, after: np.ndarray, decode) -> str:
    """One clause: the likeliest next token before and after, with their probabilities; a token as
    the charts label it (shown_token: a space "␣", a line break "⏎"), never blank quotes."""
    was, now = int(np.argmax(before)), int(np.argmax(after))
    token = {i: md(shown_token(decode(i))) for i in (was, now)}
    if was == now:
        return text.NEXT_SAME.format(before=token[was], p_before=before[was], p_after=after[was])
    return text.NEXT_CHANGED.format(
        before=token[was], p_before=before[was], after=token[now], p_after=after[now]
    )


# ---- the chosen set: checked, chosen -----------------------------------------------------------------


def _as_pairs(value: object) -> Heads:
    try:
        return tuple(sorted({(int(layer), int(head)) for layer, head in value or ()}))
    except (TypeError, ValueError):
        return ()


def check_link_heads(result: AttentionResult) -> list[str]:
    """Drop the heads in "explore_ablate" that this model lacks; the notes say which and name the
    model's range (also when the link's list held entries that were not pairs at all)."""
    ss = st.session_state
    n_layers, n_heads = result.n_layers, result.n_heads
    pairs = _as_pairs(ss.get(SET_KEY))
    kept = tuple((layer, head) for layer, head in pairs if layer < n_layers and head < n_heads)
    ss[SET_KEY] = kept
    span = text.MODEL_RANGE.format(layers=n_layers, heads=n_heads, last=f"{n_layers - 1}.{n_heads - 1}")
    if dropped := [pair for pair in pairs if pair not in kept]:
        return [text.DROPPED.format(heads=", ".join(f"`{layer}.{head}`" for layer, head in dropped)) + span]
    raw = st.query_params.get("ablate")  # read as the link wrote it only until the page rewrites it
    if raw and links.parse_heads(raw)[1]:
        return [span]  # the page already said some entries were not pairs: here is what would be
    return []


def top_heads(grid: np.ndarray, k: int) -> list[tuple[int, int]]:
    """The k heads with the largest effect, largest first (ties: lower layer, then head, first)."""
    order = np.argsort(-grid, axis=None, kind="stable")[:k]
    return [tuple(int(v) for v in np.unravel_index(flat, grid.shape)) for flat in order]


def head_name(layer: int, head: int) -> str:
    return text.HEAD_NAME.format(layer=layer + 1, head=head + 1)


def _on_preset() -> None:
    ss = st.session_state
    ss[PRESET_KEY] = ss.get(PRESET_WIDGET) or ss.get(PRESET_KEY)
    reset_widgets("ablate_hand")  # seeded again from the set the last preset chose
    reset_widgets("ablate_layer")


def _preset_ui() -> str:
    ss = st.session_state
    if ss.get(PRESET_KEY) not in text.PRESETS:  # a link's list is hand-picked; none: find the head's
        ss[PRESET_KEY] = "hand" if ss.get(SET_KEY) else "find"
    if ss.get(PRESET_WIDGET) not in text.PRESETS:
        ss[PRESET_WIDGET] = ss[PRESET_KEY]
    st.segmented_control(
        text.PRESET_LABEL,
        list(text.PRESETS),
        format_func=text.PRESETS.get,
        key=PRESET_WIDGET,
        required=True,
        help=text.PRESET_HELP,
        on_change=_on_preset,
    )
    ss[PRESET_KEY] = ss.get(PRESET_WIDGET) or ss[PRESET_KEY]
    return ss[PRESET_KEY]


def _words_ui(result: AttentionResult, view: TokenView, sig: str, tokens: tuple, target: bool):
    """The focus picker, and for find the head the target picker: (focus item, target item or None).
    A choice is kept as a word reference, so it follows the word into an edited sentence."""
    ss = st.session_state
    cols = st.columns(2)
    with cols[0]:
        a, chose_a = token_picker_ui("focus", text.FOCUS_LABEL, view, result, sig, tokens[0])
    b, chose_b = None, False
    if target:
        with cols[1]:
            b, chose_b = token_picker_ui("target", text.TARGET_LABEL, view, result, sig, tokens[1], avoid=a)
    if chose_a or chose_b:
        ss["explore_focus"] = links.ref_of(result, view.shown_spans[a][0])
        if b is not None:  # a pair, as the focus view keeps it
            ss["explore_target"] = links.ref_of(result, view.shown_spans[b][0])
    return a, b, cols[1]


def _layer_ui(n_layers: int, grid: np.ndarray) -> int:
    ss = st.session_state
    layer = ss.get(LAYER_KEY)
    if not isinstance(layer, int) or not 0 <= layer < n_layers:
        layer = top_heads(grid, 1)[0][0]  # the layer of the head that matters most
    layer = st.select_slider(
        text.LAYER_LABEL.format(n=n_layers),
        options=list(range(n_layers)),
        format_func=lambda i: str(i + 1),
        key=bound_key("ablate_layer", n_layers, layer),
    )
    ss[LAYER_KEY] = layer
    return layer


def _hand_ui(n_layers: int, n_heads: int) -> Heads:
    seed = [layer * n_heads + head for layer, head in st.session_state.get(SET_KEY, ())]
    chosen = st.multiselect(
        text.HAND_LABEL,
        list(range(n_layers * n_heads)),
        format_func=lambda i: head_name(*divmod(i, n_heads)),
        key=bound_key("ablate_hand", f"{n_layers}x{n_heads}", seed),
    )
    return tuple(sorted(divmod(int(i), n_heads) for i in chosen))


def controls_ui(result: AttentionResult, view: TokenView, sig: str, tokens: tuple, grid: np.ndarray):
    """The pickers: (focus item, the chosen heads), and a note when the choice gives no set."""
    preset = _preset_ui()
    a, b, side = _words_ui(result, view, sig, tokens, target=preset == "find")
    if preset == "find":
        if a == b:
            return a, (), text.SAME_WORD
        ranked = link_ranking(result, view, a, b)[:SET_SIZE]
        return a, tuple(sorted((link.layer, link.head) for link in ranked)), None
    if preset == "layer":
        with side:
            layer = _layer_ui(result.n_layers, grid)
        return a, tuple((layer, head) for head in range(result.n_heads)), None
    if preset == "grid":
        return a, tuple(sorted(top_heads(grid, SET_SIZE))), None
    return a, _hand_ui(result.n_layers, result.n_heads), None


# ---- drawing ---------------------------------------------------------------------------------------


def _grid(limits: Limits, result: AttentionResult) -> np.ndarray | None:
    """The grid for the shown input (a new one counts as one new text in hosted mode), or None with
    the reason shown; when it would take long, only after its button (long_work.may_start)."""
    source = shown_source()
    try:
        if (grid := long_work.shelf("ablation", GRIDS).get(source)) is not None:
            return grid
        work = grid_work(result, source)
        what, button = text.ASK_WHAT.format(runs=work.runs), text.BUTTON.format(runs=work.runs)
        if not long_work.may_start(work, source, what, button):
            return None
        count_new_text("ablation", source, limits.max_texts_per_minute)
        with long_work.counting(work, text.PROGRESS) as progress:
            return effect_grid_of(*source, progress=progress)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
    except (ModelError, ValueError) as err:  # an engine that cannot switch this model's heads off
        st.info(text.UNAVAILABLE.format(reason=md(str(err))))
    return None


def top_list_ui(grid: np.ndarray) -> None:
    """The heads that matter most, as link-like buttons that open the head view."""
    st.caption(text.TOP_CAPTION.format(n=min(TOP, grid.size)))
    with st.container(gap="xxsmall"):
        for rank, (layer, head) in enumerate(top_heads(grid, TOP), start=1):
            st.button(
                text.TOP_BUTTON.format(rank=rank, layer=layer + 1, head=head + 1, effect=grid[layer, head]),
                key=f"explore_ablate_top_{rank}",
                on_click=open_head,
                args=(layer, head),
                help=text.TOP_HELP.format(layer=layer + 1, head=head + 1),
                type="tertiary",
                icon=":material/open_in_new:",
            )


def grid_ui(grid: np.ndarray, heads: Heads, model_key: str, decoder: bool = False) -> None:
    """The effect grid, the chosen set outlined, with the ranked list beside it."""
    n_layers, n_heads = grid.shape
    left, right = st.columns([3, 1])
    with left:
        fig = effect_grid(
            grid,
            title=text.GRID_TITLE,
            bar_title=text.GRID_BAR_DECODER if decoder else text.GRID_BAR,
            layer_axis=text.LAYER_AXIS.format(n=n_layers),
            head_axis=text.HEAD_AXIS.format(n=n_heads),
            outlined=heads,
            sizing=PRESENTER if presenting() else PAGE,
        )
        name = chart_filename("explore", "ablation", "grid")
        chart(fig, "explore_ablation_grid", name)
        rows, cols = [str(i + 1) for i in range(n_layers)], [str(i + 1) for i in range(n_heads)]
        csv_download(grid, rows, cols, name, "explore_ablation_csv", corner="layer \\ head (from 1)")
    with right:
        top_list_ui(grid)
    embedding = text.EMBEDDING_BUNDLED if model_key == BUNDLED_KEY else text.EMBEDDING_OTHER
    st.caption(text.GRID_CAPTION_DECODER if decoder else text.GRID_CAPTION.format(embedding=embedding))


def nearest_sentence(before: Closeness, after: Closeness) -> str:
    """One plain sentence: the content word nearest to the focus word, before and after."""
    focus = md(before.words[before.focus])
    was, now = before.nearest(-1), after.nearest(0)
    if was is None or now is None:
        return text.NEAREST_NONE.format(focus=focus)
    template = text.NEAREST_SAME if was == now else text.NEAREST_MOVED
    return template.format(
        focus=focus,
        before=md(before.words[was]),
        after=md(after.words[now]),
        cos_before=before.cosine[-1, was],
        cos_after=after.cosine[0, now],
    )


def _bar_words(result: AttentionResult, near: Closeness, hide_special: bool) -> list[int]:
    """The words on the bars' axis: every word but the focus, [CLS]/[SEP] left out when hidden."""
    spans = word_spans(result.word_ids, result.special_mask)
    special = [bool(result.special_mask[start]) for start, _stop in spans]
    return [w for w in range(len(spans)) if w != near.focus and not (hide_special and special[w])]


def set_ui(result: AttentionResult, view: TokenView, focus: int, heads: Heads, grid: np.ndarray) -> None:
    """What switching the set off does: the embedding's change, the focus word's bars, one sentence."""
    if not presenting():
        st.subheader(text.SET_HEADING)
    if not heads:
        st.info(text.SET_NONE)
        return
    try:
        last = ablated_last(*shown_source(), heads)  # (T, D)
        effect, before_out, after_out = set_outputs(*shown_source(), heads)
    except (ModelError, ValueError) as err:
        st.info(text.UNAVAILABLE.format(reason=md(str(err))))
        return
    if may_claim("next_token_effect", attention_kind(result)):  # a decoder's output: its next token
        change = next_token_change(before_out, after_out, load_engine(*shown_source()[:2]).decode)
        said = text.SET_EFFECT_DECODER.format(effect=effect, single=float(grid.max()), change=change)
    else:
        said = text.SET_EFFECT.format(effect=effect, single=float(grid.max()))
    named = "; ".join(head_name(*pair) for pair in heads)
    st.markdown(text.SET_SUMMARY.format(n=len(heads), heads=named) + " " + said)
    token = view.shown_spans[focus][0]
    before, after = closeness(result, token), closeness(result, token, hidden=last[None])
    shown = _bar_words(result, before, view.renormalised)
    word = before.words[before.focus]
    big = presenting()
    after_name = text.BARS_AFTER.format(n=len(heads)) if len(heads) > 1 else text.BARS_AFTER_ONE
    fig = before_after_bars(
        [before.words[w] for w in shown],
        before.cosine[-1, shown],
        after.cosine[0, shown],
        title=text.BARS_TITLE.format(word=word),
        names=(text.BARS_BEFORE, after_name),
        y_title=text.BARS_Y.format(word=word),
        x_title=text.BARS_X,
        font=20 if big else 14,
        height=460 if big else None,
    )
    chart(fig, "explore_ablation_bars", chart_filename("explore", "ablation", "bars"))
    st.markdown(nearest_sentence(before, after))
    st.caption(text.BARS_CAPTION + " " + content_rule(result))


def ablation_view(
    result: AttentionResult, view: TokenView, sig: str, tokens: tuple, limits: Limits, controls=None
) -> None:
    """The grid of single-head effects, the ten that matter most, and a set switched off together.
    `tokens`: the resolved (focus, target) token indices or None; `controls`: where pickers go."""
    for note in check_link_heads(result):
        st.info(note)
    grid = _grid(limits, result)
    if grid is None:
        return
    with controls or st.container():
        focus, heads, note = controls_ui(result, view, sig, tokens, grid)
    st.session_state[SET_KEY] = heads
    part = (
        present_part_ui(PART_KEY, text.PRESENT_LABEL, text.PRESENT_PARTS) if presenting() else None
    )  # a projector shows one part: no scrolling
    if part in (None, "grid"):
        grid_ui(grid, heads, shown_source()[0], not may_claim("sentence_embedding", attention_kind(result)))
    if note:
        st.info(note)
    if part in (None, "set"):
        set_ui(result, view, focus, heads, grid)
    with st.expander(text.ABOUT_LABEL, expanded=not presenting()):
        st.markdown(text.ABOUT)
