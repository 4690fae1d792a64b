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


def test_the_translator_explore_shows_is_not_carried_to_a_page_that_cannot_draw_it():
    at = run_script(SCRIPT, carry="translator")  # compare and cost read one model's self-attention
    assert "translator" not in at.selectbox(key="t_model").options
    assert at.session_state["picked"] == ("bundled", "numpy") and not messages(at)


def test_the_links_model_and_engine_are_read_and_written():
    at = run_script(SCRIPT, model="bundled", engine="torch")
    assert at.session_state["picked"][1] in ("torch", "numpy")  # torch where it is installed
    assert at.query_params.get("engine") in (None, ["torch"], "torch")
    at = run_script(SCRIPT, engine="nonsense")
    assert at.session_state["picked"] == ("bundled", "numpy")


# ---- the curated models in the pickers ------------------------------------------------------------

DECODERS = ("distilbert/distilgpt2", "gpt2")

EXPLORE_PICKER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard.hosted import current_limits
from dashboard.views.explore.loading import model_ui

st.session_state.setdefault("explore_failures", {{}})
model_ui(current_limits())
"""


def test_the_pickers_list_the_decoders_and_explore_says_their_download_size(monkeypatch):
    from core.models.registry import CURATED_HUB_MODELS
    from dashboard.model_pick import model_label

    monkeypatch.delenv("ATTENTION_EXPLORER_HOSTED", raising=False)
    assert {model_label(key) for key in DECODERS} <= set(run_script(SCRIPT).selectbox(key="t_model").options)
    at = run_script(EXPLORE_PICKER)
    for key in DECODERS:
        at.selectbox(key="explore_model_choice").set_value(key).run()
        info = CURATED_HUB_MODELS[key]
        caption = f"{info.summary}; {info.download} to download the first time."
        assert caption in [c.value for c in at.sidebar.caption], key
        assert "a decoder (causal attention)" in info.summary


def test_the_download_sizes_said_are_the_checkpoints_sizes():
    """ "about N MB" is the Hub's model.safetensors of that shape (the real sizes, random weights)."""
    from core.models.registry import CURATED_HUB_MODELS
    from tests.real_size_gpt2 import REAL_SHAPES, safetensors_bytes

    assert set(REAL_SHAPES) == set(DECODERS)
    for key, n_layer in REAL_SHAPES.items():
        said = CURATED_HUB_MODELS[key].download
        assert said == f"about {round(safetensors_bytes(n_layer) / 1e6)} MB", key


def test_compare_and_atlas_in_hosted_mode_offer_the_models_explore_offers(monkeypatch):
    from dashboard.engines import allowed_models
    from dashboard.hosted import HOSTED
    from dashboard.model_pick import model_label

    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    at = run_script(SCRIPT)
    assert at.selectbox(key="t_model").options == [model_label(key) for key in allowed_models(HOSTED)]
    from core.models.registry import CURATED_HUB_MODELS

    for key in [k for k, m in CURATED_HUB_MODELS.items() if not m.hosted][:1]:
        at = run_script(SCRIPT, model=key)  # a link to a model the demo leaves out: the bundled one
        assert at.session_state["picked"] == ("bundled", "numpy")
