"""Nothing long starts by itself (issue 49): with the threshold at 0 s, where every multi-run work must
ask, switching to any explore view on a Llama runs at most a few forward passes before a button is
pressed: the page's own, a partner sentence's, the continuation panel's one batch. A view that
started a sweep by itself (a pass per head, per token or per corpus sentence) would run dozens.

The passes are counted on the engine the page loaded (every pass of the NumPy Llama goes through
`layers_from`: whole runs, restarts and batches alike), so the test needs no clock."""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.content.explore import VIEWS
from dashboard.engines import load_engine
from dashboard.views.explore.decoder import views_for
from tests.dashboard.harness import assert_no_crash, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_llama import make_tiny_llama

pytestmark = pytest.mark.usefixtures("fast_apptest")
TEXT = "the cat sat on the mat because it was tired"
MOST_PASSES = 4  # the focus view: its pair's two sentences and the continuation's batch, and one spare
ASK = "ATTENTION_EXPLORER_ASK_AFTER"


class CountedPasses:
    """The engine's layers_from, counting its calls (a test's wrapper: the product has no hooks)."""

    def __init__(self, engine):
        self.engine, self.inner, self.calls = engine, engine.layers_from, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.inner(*args, **kwargs)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = make_tiny_llama(tmp_path_factory.mktemp("unasked"), heads=4, kv_heads=2, positions=128)
    before = os.environ.get(ASK)
    os.environ[ASK] = "0"  # every work the views count as long asks first
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": str(folder), "text": TEXT, "view": "head"})
    at.run()
    assert_no_crash(at)
    engine = load_engine(str(folder), "numpy")
    counted = CountedPasses(engine)
    engine.layers_from = counted
    try:
        yield at, counted
    finally:
        del engine.layers_from
        os.environ.pop(ASK) if before is None else os.environ.__setitem__(ASK, before)


@pytest.mark.parametrize("view", [v for v in VIEWS if v in views_for(True)])
def test_no_view_starts_a_sweep_before_its_button(app, view):
    at, counted = app
    at.query_params.clear()
    counted.calls = 0
    at.segmented_control(key="explore_view").set_value(view).run()
    assert_no_crash(at, view)
    assert counted.calls <= MOST_PASSES, (view, counted.calls)


def test_the_count_sees_a_sweep_once_asked_for(app):
    """The same count is many once the ablation grid's button is pressed: it would see a view that
    started its sweep unasked."""
    at, counted = app
    at.segmented_control(key="explore_view").set_value("ablation").run()
    buttons = [b for b in at.button if "head" in str(b.label).lower()]
    assert buttons, [b.label for b in at.button]
    counted.calls = 0
    buttons[0].click().run()
    assert_no_crash(at, "ablation")
    assert counted.calls > MOST_PASSES, counted.calls
