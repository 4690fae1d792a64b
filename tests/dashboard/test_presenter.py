"""AppTest for presenter mode and the slide exports: `present=1` is read from the link and kept in
it, the controls fold into a closed panel, charts are drawn for a projector (numbers of 16 px or
more, dark labels), the pager's keys are bound, and every chart's image and CSV are named after what
they show. Key presses and scrolling are checked in a real browser (tests/e2e/test_presenter.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from dashboard.chart_access import NUMBERS_LABEL
from dashboard.charts.heatmap import PRESENTER, matrix_heatmap
from dashboard.widgets import chart_filename
from tests.dashboard.harness import run_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard import presenter
from dashboard.views import learn
with st.sidebar:
    presenter.presenter_toggle_ui()
learn.render()
"""


def run(**params: str) -> AppTest:
    return run_script(SCRIPT, **params)


def test_present_link_turns_presenter_mode_on_and_stays_in_the_link():
    at = run(present="1", step="5")
    assert at.toggle(key="present").value is True
    assert at.query_params["present"] in ("1", ["1"])
    assert at.expander[0].label.startswith("Controls")
    assert not at.title  # the step's heading comes first
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["data"][0]["textfont"]["size"] >= 16
    assert fig["layout"]["yaxis"]["tickfont"]["color"] == "#111111"


def test_toggle_off_removes_present_from_the_link():
    at = run(present="1")
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params
    assert at.title and not [e for e in at.expander if e.label != NUMBERS_LABEL]  # only the charts' tables


def test_normal_mode_has_the_page_title_and_no_controls_panel():
    at = run()
    assert at.toggle(key="present").value is False and at.title


def test_pager_binds_the_clicker_keys():
    """The pager's Next and Back are the clicker's (dashboard/clicker.py counts the keys in the page:
    tests/e2e/test_clicker_count_browser.py presses them); no button carries a shortcut of its own."""
    at = run(step="3")
    assert not [b.key for b in at.button if b.proto.shortcut]
    target = at.session_state["clicker_target"]
    assert [target[d][0].__name__ for d in ("next", "prev")] == ["_step_by", "_step_by"]
    assert (target["next"][1][1], target["prev"][1][1]) == (1, -1)
    at.button(key="learn_next").click().run()
    assert at.query_params["step"] in ("4", ["4"])


def test_the_clicker_script_is_fixed():
    """Proof for tests/e2e/test_injection.py's ESCAPED_SINKS entry of dashboard/clicker.py's component:
    its script is one constant, never formatted, and its only data is one flag, so no text of the
    user's or of the link reaches the browser through it."""
    source = (ROOT / "dashboard" / "clicker.py").read_text(encoding="utf-8")
    assert source.count("_JS") == 2 and "js=_JS)" in source  # defined once, handed over once
    assert source.count("data=") == 1 and 'data={"steps": steps}' in source
    assert "steps = bool(" in source and ".format(" not in source and 'f"""' not in source


def test_chart_images_and_tables_are_named_after_what_they_show():
    at = run(step="5", heads="2")
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"] == {
        "format": "png",
        "scale": 3,
        "filename": "attention-explorer_learn_step5_probs_head1",
    }
    (csv,) = [d for d in at.get("download_button") if d.proto.label == "CSV"]
    assert csv.proto.url or csv.proto.id  # a file is served


def test_chart_filename_keeps_only_safe_characters():
    assert chart_filename("learn", "../etc/<b>", None, "head 1") == "attention-explorer_learn_etc-b_head-1"


def test_presenter_sizing_prints_numbers_at_16_px_or_leaves_them_out():
    small = matrix_heatmap(np.eye(6), list("abcdef"), list("abcdef"), sizing=PRESENTER)
    assert small.data[0].textfont.size >= 16 and small.data[0].texttemplate
    labels = [str(i) for i in range(60)]
    wide = matrix_heatmap(np.eye(60), labels, labels, sizing=PRESENTER)
    assert not wide.data[0].texttemplate
