"""The generate view's sampling: the top-k and top-p controls (and their link values), and each
step's distribution drawn with what the cut kept, what it cut, and where the drawn token fell, under
one computed sentence. The arithmetic is core/models/sampling.py's (transformers' order: temperature,
then top-k, then top-p, renormalised); the figure is dashboard/charts/sampling.py's.

State (in the link, see links.py): top_k (0: off) and top_p (1: off); both apply only when sampling.
"""

from __future__ import annotations

import math

import streamlit as st

from core.models.decoder import GenerationStep
from core.models.sampling import TOP_K_OFF, TOP_P_OFF
from dashboard.charts.decoder import shown_token
from dashboard.charts.sampling import Candidates, Words, sampling_bars
from dashboard.content import sampling as text
from dashboard.state import Parsed, UrlParam, clamped_int_param
from dashboard.widgets import chart, chart_filename, md

TOP_K_KEY, TOP_P_KEY = "explore_gen_top_k", "explore_gen_top_p"
MAX_TOP_K = 1000  # the number box's top; past the vocabulary top-k keeps every token anyway
TOP_P_MIN, TOP_P_STEP = 0.01, 0.01  # the slider's
CANDIDATES = 20  # the bars each step shows, and the kept tokens it records


def parse_top_p(raw: str) -> Parsed:
    """A link's top-p: above 0 and at most 1 (on the slider's 0.01 steps); anything else is off (1)
    with a note, so the view still draws."""
    if raw == "":
        return TOP_P_OFF, None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:  # also NaN
        shown = raw[:12] if value != value else f"{value:g}"
        return TOP_P_OFF, text.LINK_TOP_P.format(shown=md(shown))
    nearest = max(round(value, 2), TOP_P_MIN)
    if nearest > value:
        return nearest, text.LINK_TOP_P_SMALL.format(value=value, nearest=nearest)
    return nearest, None


LINK_PARAMS = (
    clamped_int_param("top_k", TOP_K_KEY, TOP_K_OFF, 0, MAX_TOP_K),
    UrlParam("top_p", TOP_P_KEY, TOP_P_OFF, parse_top_p, show=lambda v: f"{v:g}"),
)


def cut_ui() -> tuple[int, float]:
    """Top-k and top-p, beside the temperature: returns (top_k, top_p), 0 and 1 being off."""
    ss = st.session_state
    ss.setdefault(TOP_K_KEY, TOP_K_OFF)
    ss.setdefault(TOP_P_KEY, TOP_P_OFF)
    left, right = st.columns(2)
    with left:
        top_k = st.number_input(text.TOP_K_LABEL, 0, MAX_TOP_K, step=1, key=TOP_K_KEY, help=text.TOP_K_HELP)
    with right:
        top_p = st.slider(
            text.TOP_P_LABEL, TOP_P_MIN, 1.0, step=TOP_P_STEP, key=TOP_P_KEY, help=text.TOP_P_HELP
        )
    return int(top_k), float(top_p)


def candidates(step: GenerationStep, greedy: bool) -> Candidates:
    """The bars for one step: its likeliest tokens before the cut (step.top), the kept ones'
    renormalised probabilities (step.kept: the same order, kept ones first), and the drawn token
    added last, with its rank, when it is not among them."""
    n = len(step.top)
    kept = [greedy or i < step.n_kept for i in range(n)]
    after = [step.kept[i][1] if i < len(step.kept) and not greedy else 0.0 for i in range(n)]
    tokens, before, ranks = [t for t, _p in step.top], [p for _t, p in step.top], list(range(n))
    drawn = step.rank
    if step.rank >= n:  # drawn from the tail: its probability before the cut is after × kept mass
        tokens, ranks, after, kept = (
            [*tokens, step.token],
            [*ranks, step.rank],
            [*after, step.prob],
            [*kept, True],
        )
        before, drawn = [*before, step.prob * step.kept_mass], n
    return Candidates(tokens, before, after, kept, ranks, drawn)


def sentence(step: GenerationStep, settings: tuple, vocab: int) -> str:
    """What the cut did at this step and where the drawn token fell, in one sentence of Markdown (the
    token escaped); settings: (temperature or None, top_k, top_p)."""
    temperature, top_k, top_p = settings
    token = md(shown_token(step.token))
    if temperature is None:
        return text.GREEDY.format(token=token, before=step.top[0][1])
    cut_k, cut_p = top_k != TOP_K_OFF, top_p < TOP_P_OFF
    if not (cut_k or cut_p):
        head = text.KEPT_ALL.format(temperature=temperature, vocab=vocab)
        return head + text.DRAWN_UNCUT.format(token=token, rank=step.rank + 1, after=step.prob)
    cuts = text.CUTS["kp" if cut_k and cut_p else "k" if cut_k else "p"].format(k=top_k, p=top_p)
    head = text.KEPT.format(
        temperature=temperature, cuts=cuts, n=step.n_kept, vocab=vocab, mass=step.kept_mass
    )
    if cut_k and not cut_p and step.n_kept > top_k:
        head += text.TIED.format(k=top_k)
    before = step.prob * step.kept_mass
    return head + text.DRAWN_SENTENCE.format(token=token, rank=step.rank + 1, after=step.prob, before=before)


def distribution_ui(step: GenerationStep, k: int, settings: tuple, said: str, big: bool) -> None:
    """Step k's distribution chart; settings: (temperature or None, top_k, top_p); said: its sentence
    (shown by the view above the charts, and the chart's name for a screen reader)."""
    greedy = settings[0] is None
    words = Words(
        title=(text.TITLE_GREEDY if greedy else text.TITLE_SAMPLED).format(step=k),
        x_title=text.X_TITLE,
        kept_name=text.KEPT_NAME,
        before_name=text.BEFORE_NAME,
        cut_name=text.CUT_NAME,
        cut=text.CUT,
        drawn=text.TAKEN if greedy else text.DRAWN,
        hover_kept=text.HOVER_KEPT,
        hover_cut=text.HOVER_CUT,
    )
    fig = sampling_bars(
        candidates(step, greedy), words, greedy=greedy, font=20 if big else 13, height=600 if big else None
    )
    # the sentence names the chart for a screen reader (widgets.chart's alt)
    chart(fig, "explore_gen_top", chart_filename("explore", "generate", f"step{k}", "top"), alt=said)
