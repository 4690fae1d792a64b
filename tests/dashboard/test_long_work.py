"""dashboard/long_work.py: the estimate of a piece of work (grows with its positions, runs and the
model's size; follows what such work took here the last time), how seconds are written, and, in an
AppTest, the ask: a long work waits for its button, remembered per input; a short one starts at once;
the bar counts while it runs and goes when it is done. The machine's speed is set by the test, never
measured: no timing decides a test's outcome."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import long_work
from dashboard.long_work import Work, about, estimate, record
from tests.dashboard.harness import record_bars
from tests.deadline import APPTEST_DEADLINE

SMALL = Work("sweep", "m", runs=10, positions=8, layers=2, width=16)


@pytest.fixture(autouse=True)
def fixed_speed(monkeypatch):
    """A machine doing 1e9 multiply-adds a second, no work timed yet, the default threshold."""
    monkeypatch.setattr(long_work, "machine_speed", lambda: 1e9)
    monkeypatch.setattr(long_work, "_ratios", {})
    monkeypatch.delenv("ATTENTION_EXPLORER_ASK_AFTER", raising=False)


def test_the_estimate_grows_with_the_positions_the_runs_and_the_model():
    bigger = [
        Work("sweep", "m", runs=10, positions=9, layers=2, width=16),
        Work("sweep", "m", runs=11, positions=8, layers=2, width=16),
        Work("sweep", "m", runs=10, positions=8, layers=3, width=16),
        Work("sweep", "m", runs=10, positions=8, layers=2, width=17),
        Work("sweep", "m", runs=10, positions=8, layers=2, width=16, vocab=100, outputs=1),
    ]
    assert all(estimate(work) > estimate(SMALL) for work in bigger)
    positions = [estimate(Work("sweep", "m", 10, n, 2, 16)) for n in (1, 2, 4, 8, 64, 512)]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_the_estimate_is_the_multiply_adds_at_the_machines_speed_times_the_prior():
    per_position = 12 * SMALL.layers * SMALL.width**2
    expected = SMALL.runs * (SMALL.positions + long_work.PASS_POSITIONS) * per_position / 1e9
    assert estimate(SMALL) == pytest.approx(expected * long_work.PRIOR)


def test_a_measured_time_sets_the_next_estimate_of_that_model_and_kind():
    record(SMALL, 2.5)
    assert estimate(SMALL) == pytest.approx(2.5)
    twice = Work("sweep", "m", runs=20, positions=8, layers=2, width=16)
    assert estimate(twice) == pytest.approx(5.0)  # scaled by the multiply-adds
    other_model, other_kind = Work("sweep", "n", 10, 8, 2, 16), Work("corpus", "m", 10, 8, 2, 16)
    prior = SMALL.multiply_adds() / 1e9 * long_work.PRIOR
    assert estimate(other_model) == pytest.approx(prior) and estimate(other_kind) == pytest.approx(prior)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.2, "1 s"), (4.4, "4 s"), (12, "10 s"), (13, "15 s"), (59, "60 s"), (95, "2 min"), (610, "10 min")],
)
def test_seconds_are_written_plainly(seconds, said):
    assert about(seconds) == said


def test_the_threshold_comes_from_the_environment(monkeypatch):
    assert long_work.ask_after() == long_work.DEFAULT_ASK_AFTER
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", "inf")
    assert long_work.ask_after() == float("inf")
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", "soon")
    assert long_work.ask_after() == long_work.DEFAULT_ASK_AFTER


# ---- asking, in a page ------------------------------------------------------------------------------

SCRIPT = """
import streamlit as st
from dashboard import long_work

work = long_work.Work("sweep", "m", runs=12, positions=8, layers=2, width=16)
sig = st.session_state.get("input", "first")
if long_work.may_start(work, sig, "Sweeping every head", "Sweep every head (12 runs)"):
    with long_work.counting(work, "Swept {done} of {total} heads") as progress:
        for done in range(13):
            progress(done, 12)
    st.session_state["computed"] = st.session_state.get("computed", 0) + 1
    st.write("the chart")
"""


@pytest.fixture
def bars(monkeypatch):
    """The texts of every progress bar drawn and moved."""
    return record_bars(monkeypatch)


def _page() -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.run()
    assert not at.exception
    return at


def test_a_long_work_asks_first_and_runs_with_a_counting_bar_when_pressed(monkeypatch, bars):
    monkeypatch.setattr(long_work, "machine_speed", lambda: 1.0)  # everything is long
    monkeypatch.setattr(long_work, "record", lambda work, seconds: None)
    at = _page()
    (line,) = [c.value for c in at.caption]
    assert line.startswith("Sweeping every head takes about ")
    assert line.endswith(" s on this machine (12 runs of the model).") or "min on this machine" in line
    assert at.button(key="long_work_sweep").label == "Sweep every head (12 runs)"
    assert "computed" not in at.session_state and not bars  # nothing ran, no bar
    at.button(key="long_work_sweep").click().run()
    assert at.session_state["computed"] == 1 and [m.value for m in at.markdown] == ["the chart"]
    assert "Swept 12 of 12 heads" in bars and bars[-1] == "(gone)"
    assert any(t.startswith("Swept 6 of 12 heads · about ") and t.endswith(" left") for t in bars), bars
    assert not at.get("button") and not at.caption  # the ask is gone with it
    at.run()  # the same input again: remembered, not asked
    assert at.session_state["computed"] == 2 and not at.get("button")
    at.session_state["input"] = "second"
    at.run()  # a new input: asked again
    assert at.session_state["computed"] == 2 and at.button(key="long_work_sweep")


def test_a_short_work_starts_at_once(bars):
    at = _page()
    assert at.session_state["computed"] == 1 and not at.get("button") and not at.caption
    assert "Swept 12 of 12 heads" in bars and bars[-1] == "(gone)"


def test_a_lowered_threshold_asks(monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", "0")
    at = _page()
    assert "computed" not in at.session_state and at.button(key="long_work_sweep")


def test_a_work_timed_here_is_estimated_by_its_time(monkeypatch):
    monkeypatch.setattr(long_work, "machine_speed", lambda: 1.0)
    record(Work("sweep", "m", runs=12, positions=8, layers=2, width=16), 0.5)  # it took half a second
    at = _page()
    assert at.session_state["computed"] == 1
