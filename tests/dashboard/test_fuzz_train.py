"""Bad input on the train page, fuzzed with the shared harness (tests/dashboard/harness.py): every
link parameter meets every named kind of link value and random ones (one new session per case, a
link being read on a session's first run only), in page and in presenter mode; then the number boxes
(steps, seed) get bad numbers through session state, in one session. The page must raise nothing,
never reach its last-resort handler, and keep every setting within its range.

The runs are tiny (the page's base settings shrunk by the script's prelude, as in
test_train_page.py) and a recorded run trained here stands in for the shipped one.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.train.trainer import Trainer, TrainSettings
from dashboard.views.train.links import HEAD_CHOICES, LEARNING_RATES, MAX_SEED, TASKS, TR_HEAD_CHOICES
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    NAMED_LINK_VALUES,
    assert_answered,
    bad_ints,
    bad_texts,
    named_links,
    page_script,
    utf8_safe,
)
from tests.dashboard.test_train_page import PRELUDE
from tests.deadline import APPTEST_DEADLINE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

SCRIPT = page_script("train", prelude=PRELUDE)
PARAMS = ["run", "layers", "heads", "steps", "lr", "seed", "step"]
URL_VALUE = st.one_of(
    st.sampled_from(["", "recorded", "own", "0.003", "1e-2", "-0", "2", "50"]),
    bad_ints(-2, 10**6).map(str),
    bad_texts(max_size=30, longest=10_001),
).filter(utf8_safe)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    run = Trainer(TrainSettings(width=16, context=16, probe_length=6, batch=8, record_every=5, steps=20))
    run.run()
    return run.save(tmp_path_factory.mktemp("fuzz_train") / "letters-gpt2")


def assert_settings_in_range(at, context) -> None:
    ss = at.session_state
    assert ss["train_layers"] in (1, 2), context
    assert ss["train_heads"] in HEAD_CHOICES, context
    assert 50 <= ss["train_steps"] <= 5000, context
    assert ss["train_lr"] in LEARNING_RATES, context
    assert 0 <= ss["train_seed"] <= MAX_SEED, context
    if ss["train_task"] == "translate":  # the translator's own settings, read from the link
        assert ss["train_tr_heads"] in TR_HEAD_CHOICES and ss["train_tr_lr"] in LEARNING_RATES, context
        assert 50 <= ss["train_tr_steps"] <= 5000 and 0 <= ss["train_tr_seed"] <= MAX_SEED, context


def test_link_parameters_survive_every_value(recorded, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr("core.models.shipped.shipped_model_dir", lambda: recorded)
    tried = []

    @FUZZ
    @named_links(PARAMS, present=["1", ""])
    @named_links([*PARAMS, "task"], {"task": "translate"})  # the translator's task, every value tampered
    @named_links(PARAMS, {"task": "translate"})  # ... and its settings, on the translator's task
    @example({"layers": "0", "heads": "99", "steps": "-5", "lr": "-1", "seed": "1e308", "step": "-3"})
    @example({"lr": "inf", "heads": "nan", "run": "own", "step": "18446744073709551616"})
    @given(params=st.dictionaries(st.sampled_from([*PARAMS, "task", "present"]), URL_VALUE, max_size=5))
    def case(params):
        tried.append(sorted(params))
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        if params.get("present") == "1":
            at.session_state["present"] = True
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        assert_settings_in_range(at, params)
        assert at.session_state["train_task"] in TASKS, params

    case()
    assert len(tried) >= len(NAMED_LINK_VALUES) + CASES, len(tried)


def test_the_number_boxes_survive_bad_numbers(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr("core.models.shipped.shipped_model_dir", lambda: None)
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.run()
    tried = []

    @FUZZ
    @given(steps=bad_ints(50, 5000), seed=bad_ints(0, MAX_SEED))
    def case(steps, seed):
        tried.append((steps, seed))
        at.session_state["fuzz_inject"] = {"train_steps": steps, "train_seed": seed}
        at.run()
        assert_answered(at, (steps, seed))
        assert_settings_in_range(at, (steps, seed))

    case()
    assert len(tried) >= CASES, len(tried)
