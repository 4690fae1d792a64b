"""The circuit page's two runs on request: the whole search again on SmolLM2 (new prompts, a seed), and
the first step of the search (each head's direct effect) on a sentence of the user's own. Both ask
first when long (dashboard/long_work.py) and count with a bar; a sentence the search cannot read is
said in one line, and the view above stays as it was."""

from __future__ import annotations

import streamlit as st

from core.models.errors import ModelError
from dashboard import long_work
from dashboard.content import circuit as text
from dashboard.engines import load_engine
from dashboard.state import clean_widget_text
from dashboard.views.circuit import compute
from dashboard.views.circuit.data import Circuit, CircuitFileError
from dashboard.views.circuit.views import own_grid
from dashboard.widgets import error_md, md

SOURCE_KEY = "circuit_source"  # (prompts, seed) of the search shown instead of the shipped file
OWN_KEY = "circuit_own"
MAX_OWN_CHARS = 300
DEFAULT_PROMPTS, MAX_PROMPTS = 8, 32


def source(shipped: Circuit | None) -> tuple[Circuit | None, str | None]:
    """The circuit to show: the search run here when one was asked for and is still kept, else the
    shipped one; and a line saying which, when it is not the shipped one."""
    asked = st.session_state.get(SOURCE_KEY)
    if asked:
        found = compute.searched(*asked)
        if found is not None:
            return found, text.SHOWING_RECOMPUTED.format(n=asked[0], seed=asked[1])
        st.session_state.pop(SOURCE_KEY, None)
    return shipped, None


def recompute_ui(record: dict) -> None:
    """Prompts and seed, then the search (asking first); the result is shown on the next run."""
    st.subheader(text.RECOMPUTE_TITLE)
    if not compute.smollm2_here():
        st.caption(text.NO_SMOLLM2)
        return
    st.caption(text.RECOMPUTE_INTRO)
    # SmolLM2 is loaded (a few seconds, the first time) only once the search is wanted
    if not st.toggle(text.RECOMPUTE_TOGGLE, key="circuit_search_on"):
        return
    left, right = st.columns(2)
    prompts = left.number_input(
        text.PROMPTS_LABEL, 2, MAX_PROMPTS, DEFAULT_PROMPTS, step=1, key="circuit_n_prompts"
    )  # fmt: skip
    seed = right.number_input(text.SEED_LABEL, 0, 10_000, 0, step=1, key="circuit_seed")
    wanted, shown = (int(prompts), int(seed)), st.session_state.get(SOURCE_KEY)
    if shown and st.button(text.SHOW_SHIPPED, key="circuit_shipped"):
        st.session_state.pop(SOURCE_KEY, None)
        st.rerun()
    if compute.searched(*wanted) is not None:  # run before, by this session or another
        if tuple(shown or ()) != wanted and st.button(text.SHOW_SEARCHED, key="circuit_show_searched"):
            st.session_state[SOURCE_KEY] = wanted
            st.rerun()
        return
    try:
        if not compute.may_search(*wanted, record):
            return
        compute.search(*wanted)
    except (ModelError, CircuitFileError, ImportError) as err:
        st.info(f"The search could not run here: {error_md(err)}")
        return
    st.session_state[SOURCE_KEY] = wanted
    st.rerun()  # the page draws the new circuit from the top


def own_ui(circuit: Circuit) -> None:
    """A sentence of one's own: parsed into an IOI item (two names, one twice), then each head's
    direct effect on it, on request, beside the circuit's name movers' on the task."""
    st.subheader(text.OWN_TITLE)
    if not compute.smollm2_here():
        st.caption(text.NO_SMOLLM2)
        return
    st.caption(text.OWN_INTRO)
    if note := clean_widget_text(OWN_KEY, MAX_OWN_CHARS, "sentence"):
        st.warning(note)
    sentence = st.text_input(text.OWN_LABEL, key=OWN_KEY, max_chars=MAX_OWN_CHARS).strip()
    if not sentence:
        return
    try:
        item, io, s = compute.parse_own(sentence)
    except ValueError as err:  # the parser's own words: which part of the sentence is missing
        st.info(text.OWN_BAD.format(reason=md(str(err))))
        return
    except (ModelError, ImportError) as err:
        st.info(f"The sentence could not be measured here: {error_md(err)}")
        return
    found = compute.own_done(sentence)
    if found is None:
        engine = load_engine(compute.SMOLLM2_KEY, compute.ENGINE)
        work = compute.own_work(engine, len(item.clean))
        if not long_work.may_start(work, compute.own_key(sentence), text.OWN_ASK, text.OWN_BUTTON):
            return
        found = compute.own_direct(sentence, item)
    st.markdown(
        text.OWN_RESULT.format(
            io=md(io.strip()), s=md(s.strip()), clean=found.metric_clean, corrupt=found.metric_corrupt
        )
    )
    own_grid(found.restored, circuit, "circuit_own_grid")
