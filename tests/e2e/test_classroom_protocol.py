"""The classroom load test, small (issue 23 §1): 4 sessions at the protocol level (bench/classroom.py:
Streamlit's own websocket messages, no browser) run the classroom script against a real server in
hosted mode. Asserted: no error, no session shown another session's words (with the control that
each session does get its own words back), one model load. No timing is asserted; `make stress`
runs 30 sessions and prints the figures."""

from __future__ import annotations

import pytest

from bench.classroom import run_classroom

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(600)]


def test_four_students_at_once():
    # no timing asserted: a busy machine may take minutes for the atlas's first corpus, not an error
    measured, loads, _ = run_classroom(4, ramp_s=4, think_s=(0.0, 0.5), timeout_s=400)
    assert measured.errors == []
    assert measured.leaks == [] and measured.blind == []
    assert loads == 1
    kinds = {kind: len(seconds) for kind, seconds in measured.seconds.items()}
    assert kinds == {
        "open learn": 4,
        "learn: change the step": 12,
        "open explore, own sentence": 4,
        "explore: change layer or head": 40,
        "open compare, own pair": 4,
        "open atlas": 4,
    }
