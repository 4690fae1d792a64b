"""Every explore view a decoder has, on a Llama: a tiny one built here (grouped-query attention, RoPE,
RMSNorm, SwiGLU), run by the same code that runs SmolLM2, so a view that assumed GPT-2's shapes (one
key/value head per query head, learned positions) fails here in seconds. One session switches views,
as a reader does; the model loads once."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.content.explore import VIEWS
from dashboard.views.explore.decoder import views_for
from tests.dashboard.harness import assert_no_crash, messages, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_llama import make_tiny_llama

pytestmark = pytest.mark.usefixtures("fast_apptest")
TEXT = "the cat sat on the mat because it was tired"


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> AppTest:
    folder = make_tiny_llama(tmp_path_factory.mktemp("explore_llama"), heads=4, kv_heads=2, positions=128)
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": str(folder), "text": TEXT, "view": "head"})
    at.run()
    assert_no_crash(at)
    return at


def test_the_views_offered_are_a_decoders():
    assert "qk" not in views_for(True) and {"nextword", "generate", "induction"} <= set(views_for(True))


@pytest.mark.parametrize("view", [v for v in VIEWS if v in views_for(True)])
def test_every_decoder_view_draws_on_a_llama(app, view):
    app.query_params.clear()
    app.segmented_control(key="explore_view").set_value(view).run()
    assert_no_crash(app, view)
    assert app.session_state["explore_view"] == view
    assert not app.error, (view, messages(app))
    assert n_charts(app) or app.get("imgs"), (view, messages(app))
