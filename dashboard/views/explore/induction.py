"""The explore page's induction-heads view: on seeded random tokens repeated twice, each head's
prefix-matching score as a layer × head grid, the loss on each copy, and the second copy's loss with
the induction heads switched off (the engine's `ablate`): the heads scoring INDUCTION_MIN or more,
highest first, at most `top` of them (the train page names induction heads by the same rule), all
from core/measures/induction.py on the NumPy engine. The page's own text is not used: the test needs
tokens the model cannot guess.

State (in the link, see links.py): length (one copy), seed (shared with the generate view) and top
(the most heads switched off). Letters: L layers, H heads, V vocabulary.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from core.measures.induction import INDUCTION_MIN, Induction, induction, induction_heads
from core.models.result import AttentionResult
from core.train.data import CYCLE
from dashboard import long_work
from dashboard.charts.ablation import effect_grid
from dashboard.charts.decoder import copy_losses_bars
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content import decoder as text
from dashboard.content import long_work as long_work_text
from dashboard.engines import load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.presenter import presenting
from dashboard.state import parse_clamped_int
from dashboard.trained_models import reads_letters
from dashboard.views.explore.results import shown_source
from dashboard.widgets import chart, chart_filename, csv_download

KEPT = 8  # tests kept per server (each as it is and with heads off)
LENGTH_KEY, SEED_KEY, TOP_KEY = "explore_ind_length", "explore_gen_seed", "explore_ind_top"
MAX_LENGTH = 256  # one copy; two must also fit the model's context
DEFAULT_LENGTH, DEFAULT_TOP, MAX_TOP = 50, 5, 10
# The letter GPT-2 was trained on cycles of 3 to 12 different letters (core/train/data.py): 10 random
# letters rarely repeat one, so the test asks what it learned (the decks use 10 as well).
LETTER_LENGTH = 10
# Below this gain (nats) the two copies' losses print alike at two decimals: no copying to speak of.
MIN_GAIN = 0.05
# The score grid on a 1920 x 1080 projector, under the bar and the summary's lines: a 30-layer model's
# grid at effect_grid's one-screen height ran past the bottom edge from layer 25 on
GRID_PRESENTER_PX = 680


def induction_of(model_key: str, length: int, seed: int, ablate: tuple) -> Induction:
    """core.measures.induction.induction on the NumPy engine, kept for every session (the last KEPT)."""
    kept, key = long_work.shelf("induction", KEPT), (model_key, length, seed, ablate)
    if (found := kept.get(key)) is None:
        found = induction(load_engine(model_key, "numpy"), length, seed, ablate)
        kept.put(key, found)
    return found


def _both(model_key: str, length: int, seed: int, top: int) -> tuple[Induction, Induction] | None:
    """The test as it is and with the top induction heads off; asked for first when the two passes
    would take long here (dashboard/long_work.py), then counted; None while waiting for the button."""
    kept = long_work.shelf("induction", KEPT)
    found = kept.get((model_key, length, seed, ()))
    if found is not None and (cut := kept.get((model_key, length, seed, top_scoring(found.scores, top)))):
        return found, cut
    layers, width, vocab = long_work.model_shape(load_engine(model_key, "numpy"))
    work = long_work.Work("induction", model_key, 2, 2 * length, layers, width, vocab, 2 * length)
    what = long_work_text.INDUCTION_ASK.format(n=2 * length, top=top)
    if not long_work.may_start(work, (model_key, length, seed, top), what, long_work_text.INDUCTION_BUTTON):
        return None
    with long_work.counting(work, long_work_text.INDUCTION_PROGRESS) as progress:
        progress(0, 2)
        found = induction_of(model_key, length, seed, ())
        progress(1, 2)
        cut = induction_of(model_key, length, seed, top_scoring(found.scores, top))
        progress(2, 2)
    return found, cut


def top_scoring(scores: np.ndarray, k: int) -> tuple[tuple[int, int], ...]:
    """The heads switched off: at most k induction heads (a prefix-matching score of INDUCTION_MIN or
    more, highest first), in layer order; none when no head scores that much."""
    return tuple(sorted(induction_heads(scores, most=k)))


def parse_length(raw: str) -> tuple[int | None, str | None]:
    """A link's copy length, clamped to [2, MAX_LENGTH]; None (the model's own) when not a number."""
    try:
        int(raw)
    except ValueError:
        return None, "The link's `length` value is not a whole number; using the length that suits the model."
    return parse_clamped_int("length", raw, 0, 2, MAX_LENGTH)


def suited_length(model_key: str) -> int:
    """The copy length the view opens on for this model, until the user or the link picks one."""
    return LETTER_LENGTH if reads_letters(model_key) else DEFAULT_LENGTH


def _options_ui(n_heads_total: int, context: int, model_key: str) -> tuple[int, int, int]:
    ss = st.session_state
    most = max(2, min(MAX_LENGTH, context // 2))
    if ss.get(LENGTH_KEY) is None:  # not chosen: what suits this model
        ss[LENGTH_KEY] = min(suited_length(model_key), most)
    if int(ss[LENGTH_KEY]) > most:
        st.info(text.IND_TOO_LONG.format(asked=ss[LENGTH_KEY], context=context, kept=most))
        ss[LENGTH_KEY] = most
    ss[TOP_KEY] = min(max(int(ss.get(TOP_KEY, DEFAULT_TOP)), 1), min(MAX_TOP, n_heads_total))
    cols = st.columns(3)
    with cols[0]:
        length = st.slider(text.IND_LENGTH_LABEL, 2, most, key=LENGTH_KEY)
    with cols[1]:
        seed = st.number_input(text.IND_SEED_LABEL, 0, 2**31 - 1, step=1, key=SEED_KEY)
    with cols[2]:
        label = text.IND_TOP_LABEL.format(minimum=INDUCTION_MIN)
        top = st.slider(label, 1, min(MAX_TOP, n_heads_total), key=TOP_KEY)
    return int(length), int(seed), int(top)


def summary(found: Induction, cut: Induction, vocab: int) -> str:
    """The sentence under the charts: both copies' losses, and what switching the induction heads off
    did (all of them, or the top ones the view allows; none when no head scores INDUCTION_MIN); when
    that goes against the scores (the loss does not rise), why, from the tokens themselves."""
    if found.loss_first - found.loss_repeat < MIN_GAIN:
        return text.IND_NO_COPY.format(first=found.loss_first, repeat=found.loss_repeat)
    chance = math.log(vocab)
    losses = {"first": found.loss_first, "vocab": vocab, "chance": chance, "repeat": found.loss_repeat}
    losses["worse"] = text.IND_WORSE_THAN_CHANCE if found.loss_first > chance else ""
    if not cut.ablated:
        layer, head = np.unravel_index(int(np.argmax(found.scores)), found.scores.shape)
        return text.IND_NONE.format(
            **losses, minimum=INDUCTION_MIN, layer=layer + 1, head=head + 1, score=found.scores[layer, head]
        )
    rise = cut.loss_repeat - found.loss_repeat
    gained = found.loss_first - found.loss_repeat
    heads = ", ".join(f"{layer + 1}.{head + 1}" for layer, head in cut.ablated)
    k = len(cut.ablated)
    if rise > 0:
        change = text.IND_CHANGE.format(rise=rise, undone=rise / gained)
    else:
        repeats = found.length - len(np.unique(found.token_ids[: found.length]))
        why = text.IND_WHY_OTHER
        if repeats:
            why = text.IND_WHY_REPEATS.format(repeats=repeats, length=found.length)
        change = text.IND_AGAINST.format(rise=rise, why=why)
    n = len(induction_heads(found.scores))  # every head that scores as one; `top` may cut fewer
    which = (text.IND_CUT_TOP if k < n else text.IND_CUT_ALL).format(
        k=k, n=n, heads_word="heads" if k > 1 else "head", minimum=INDUCTION_MIN
    )
    return text.IND_SUMMARY.format(**losses, which=which, heads=heads, ablated=cut.loss_repeat, change=change)


def induction_view(result: AttentionResult, limits: Limits, controls=None) -> None:
    """Options (in the controls panel), the score grid beside the losses, one summary line."""
    model_key = shown_source()[0]
    engine = load_engine(model_key, "numpy")
    with controls or st.container():
        length, seed, top = _options_ui(result.n_layers * result.n_heads, engine.max_tokens, model_key)
    try:
        count_new_text("induction", (model_key, length, seed, top), limits.max_texts_per_minute)
        both = _both(model_key, length, seed, top)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
        return
    if both is None:
        return
    found, cut = both
    vocab = int(engine.config.vocab_size)
    st.markdown(summary(found, cut, vocab))
    if reads_letters(model_key) and length > CYCLE[1]:
        st.caption(text.IND_LETTERS_LONG.format(low=CYCLE[0], high=CYCLE[1], length=length))
    big = presenting()
    left, right = st.columns([3, 2])
    with left:
        fig = effect_grid(
            found.scores,
            title=text.IND_TITLE,
            bar_title=text.IND_BAR,
            layer_axis=f"layer (1–{result.n_layers})",
            head_axis=f"head (1–{result.n_heads})",
            outlined=cut.ablated,
            share=0.6,
            sizing=PRESENTER if big else PAGE,
            room=GRID_PRESENTER_PX if big else None,
        )
        fig.update_traces(zmax=1.0)  # a weight: the same scale for every model
        name = chart_filename("explore", "induction", f"seed{seed}", f"length{length}")
        chart(fig, "explore_induction", name)
        rows, cols = [str(i + 1) for i in range(result.n_layers)], [str(i + 1) for i in range(result.n_heads)]
        csv_download(found.scores, rows, cols, name, "explore_induction_csv", corner="layer \\ head (from 1)")
    with right:
        names = [text.IND_LOSS_NAMES["first"], text.IND_LOSS_NAMES["repeat"]]
        losses = [found.loss_first, found.loss_repeat]
        if cut.ablated:  # no head scores INDUCTION_MIN: nothing switched off, no third bar
            names.append(text.IND_LOSS_NAMES["ablated"].format(k=len(cut.ablated)))
            losses.append(cut.loss_repeat)
        fig = copy_losses_bars(
            names,
            losses,
            title=text.IND_LOSS_TITLE,
            y_title=text.IND_LOSS_Y,
            font=18 if big else 13,
            height=560 if big else None,
        )
        chart(fig, "explore_induction_losses", chart_filename("explore", "induction", "losses"))
    st.caption(text.IND_CAPTION.format(length=length, seed=seed, minimum=INDUCTION_MIN))
