"""The compare and atlas pages' model picker (dashboard/model_pick.py): the default, the model the
explore page shows carried over, the link's model, and a model that cannot load (said in the page,
the bundled model shown instead)."""

from __future__ import annotations

import pytest

from tests.dashboard.harness import ROOT, messages, run_script

pytestmark = pytest.mark.usefixtures("fast_apptest")

SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard.hosted import current_limits
from dashboard.model_pick import model_pick_ui, model_url_params
from dashboard.state import PageLinks

carry = st.query_params.get("carry")
if carry and "t_model" not in st.session_state:
    st.session_state["explore_model"] = carry
links = PageLinks("t", model_url_params("t", current_limits()))
links.read_url()
picked = model_pick_ui("t", current_limits())
st.session_state["picked"] = None if picked is None else (picked[0].key, picked[1])
links.write_url()
"""


def test_the_bundled_model_by_default_on_the_numpy_engine():
    at = run_script(SCRIPT)
    assert at.session_state["picked"] == ("bundled", "numpy")
    assert not at.error
    assert at.selectbox(key="t_model").value == "bundled"


def test_the_model_explore_shows_is_carried_over_and_a_failure_falls_back(tmp_path):
    missing = str(tmp_path / "no-such-model")
    at = run_script(SCRIPT, carry=missing)
    assert missing in at.selectbox(key="t_model").options
    assert at.session_state["picked"] == ("bundled", "numpy")  # shown instead
    said = " ".join(messages(at))
    assert "Could not use the model" in said and "instead" in said
    at.selectbox(key="t_model").set_value("bundled").run()  # choosing again works, no error left
    assert at.session_state["picked"] == ("bundled", "numpy") and not at.error


def test_the_links_model_and_engine_are_read_and_written():
    at = run_script(SCRIPT, model="bundled", engine="torch")
    assert at.session_state["picked"][1] in ("torch", "numpy")  # torch where it is installed
    assert at.query_params.get("engine") in (None, ["torch"], "torch")
    at = run_script(SCRIPT, engine="nonsense")
    assert at.session_state["picked"] == ("bundled", "numpy")
