"""The st.html the pages send is fixed text: a stylesheet, and the script that scrolls a new step to the
top (its only variables an int and an anchor from a fixed set). Proof for tests/e2e/test_injection.py's
ESCAPED_SINKS: with every payload as the sentence and in the links, in presenter mode and while
stepping, no st.html body carries user text, and every body is one of the fixed ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.presenter import _PRESENTER_CSS
from dashboard.views.learn.translator_steps import _BIG_TABLE
from dashboard.views.learn.widgets import _SCROLL
from tests.deadline import APPTEST_DEADLINE
from tests.e2e.test_injection import PAYLOADS

ROOT = Path(__file__).resolve().parents[2]
FIXED = (_PRESENTER_CSS, _BIG_TABLE)
ANCHORS = {f"step-{n}" for n in range(1, 8)} | {"multi-head"}
# _SCROLL with its two fields open: anything else in a body is not ours
SCROLL_RE = re.compile(
    re.escape(_SCROLL.format(run="RUN", anchor="ANCHOR").strip())
    .replace("RUN", r"\d+")
    .replace("ANCHOR", "(?P<anchor>[a-z0-9-]+)")
)


def script(page: str) -> str:
    return f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard import presenter
from dashboard.views import {page}
with st.sidebar:
    presenter.presenter_toggle_ui()
{page}.render()
"""


def assert_fixed(at: AppTest) -> list[str]:
    """Every st.html body of the page is one of the fixed ones; returns the bodies."""
    bodies = [element.proto.body.strip() for element in at.get("html")]  # st.html strips its text
    assert bodies, "the page sent no st.html at all: this test proves nothing"
    for body in bodies:
        for payload in PAYLOADS.values():
            assert payload not in body
        if body in {rule.strip() for rule in FIXED}:
            continue
        match = SCROLL_RE.fullmatch(body)
        assert match and match["anchor"] in ANCHORS, body[:200]
    return bodies


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_fixed_html_carries_no_user_text(name):
    payload = PAYLOADS[name]
    learn = AppTest.from_string(script("learn"), default_timeout=APPTEST_DEADLINE)
    learn.query_params.update({"present": "1", "text": payload, "step": "2", "anchor": payload})
    learn.run()
    assert not learn.exception
    learn.button(key="learn_next").click().run()  # the pager scrolls to the next step
    assert not learn.exception
    assert any(SCROLL_RE.fullmatch(body) for body in assert_fixed(learn)), "no scroll script was sent"
    explore = AppTest.from_string(script("explore"), default_timeout=APPTEST_DEADLINE)
    explore.query_params.update({"present": "1", "text": payload, "focus": payload, "target": payload})
    explore.run()
    assert not explore.exception
    assert_fixed(explore)
    # the decoder's step control (on the letter GPT-2 shipped with the product), and the train page's
    generate = AppTest.from_string(script("explore"), default_timeout=APPTEST_DEADLINE)
    link = {"present": "1", "text": payload, "model": "letters", "view": "generate", "tokens": "3"}
    generate.query_params.update({**link, "step": payload})
    generate.run()
    assert not generate.exception
    assert_fixed(generate)
    # the translator's check on learn, its table enlarged for a projector
    check = AppTest.from_string(script("learn"), default_timeout=APPTEST_DEADLINE)
    check.query_params.update({"present": "1", "model": "translator", "step": "check", "text": payload})
    check.run()
    assert not check.exception
    assert _BIG_TABLE.strip() in assert_fixed(check)
    train = AppTest.from_string(script("train"), default_timeout=APPTEST_DEADLINE)
    train.query_params.update({"present": "1", "step": payload, "seed": payload, "run": payload})
    train.run()
    assert not train.exception
    assert_fixed(train)
