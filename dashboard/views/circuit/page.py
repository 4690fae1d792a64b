"""The circuit page put together: state from the link, the circuit (the shipped file, or a search run
here), the view (the graph, a path-patching grid, the logit differences, beside GPT-2 small) with
what it shows said beside it, then the prompt and head that open on explore, the heads' table, the
file's record, and the two runs on request. A missing or unreadable file is said in the page, never
as a traceback. In presenter mode the view fills the screen and the controls fold into one panel."""

from __future__ import annotations

import logging

import streamlit as st

from dashboard.content import circuit as text
from dashboard.presenter import presenting
from dashboard.views.circuit import compute, links, own
from dashboard.views.circuit.data import Circuit, CircuitFileError
from dashboard.views.circuit.views import draw
from dashboard.views.circuit.widgets import heads_table_ui, link_ui, pick_ui, picked, record_ui, view_ui
from dashboard.widgets import copy_link_ui, md

LOG = logging.getLogger(__name__)


def render() -> None:
    try:
        _render()
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("circuit page failed")
        st.error(f"Something went wrong while drawing the circuit ({type(err).__name__}).")
    finally:
        links.page_links().save()


def _shipped() -> tuple[Circuit | None, str | None]:
    """The shipped circuit, or None and the line that says why there is none."""
    try:
        return compute.shipped(), None
    except FileNotFoundError:
        here = text.OR_HERE if compute.smollm2_here() else ""
        return None, text.NO_FILE.format(or_here=here)
    except (CircuitFileError, OSError) as err:
        return None, text.BAD_FILE.format(reason=md(str(err)))


def _render() -> None:
    notes = links.init_state()
    present = presenting()
    if not present:
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    shipped, problem = _shipped()
    circuit, showing = own.source(shipped)
    if circuit is None:
        st.info(problem or text.NO_FILE.format(or_here=""))
        if not present:
            own.recompute_ui({})
        links.write_url()
        return
    notes += links.check_positions(circuit.shape, len(circuit.prompts))
    for note in notes:
        st.warning(note)
    if showing:
        st.caption(showing)
    controls = st.expander(text.PRESENTER_CONTROLS, icon=":material/tune:") if present else st.container()
    with controls:
        view = view_ui()
        if present:
            prompt, head = pick_ui(circuit)
    if not present:
        st.header(text.VIEWS[view], anchor=False)
    head = picked(circuit)
    # presenter mode: the picked head's link beside the graph (the other views are about a class)
    beside = (lambda: link_ui(circuit, prompt, head)) if present else None
    draw(circuit, view, head, beside)
    if not present:
        _below(circuit)
    links.write_url()
    with st.sidebar:  # after write_url: the link names what is on screen
        st.caption(f"{circuit.shape[0]} layers × {circuit.shape[1]} heads · {md(circuit.model)}")
        copy_link_ui()


def _below(circuit: Circuit) -> None:
    """Page mode, under the view: the prompt and head for explore, the heads' table, the record, runs."""
    st.subheader("Open a head on explore")
    prompt, head = pick_ui(circuit)
    link_ui(circuit, prompt, head)
    heads_table_ui(circuit, prompt)
    record_ui(circuit)
    st.caption(f"References: {text.SOURCE}")
    own.recompute_ui(dict(circuit.record))
    own.own_ui(circuit)
