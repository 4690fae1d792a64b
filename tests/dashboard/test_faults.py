"""Faults while loading a model, seen from the explore page (issue 5, section 4): the page says what
is wrong, keeps showing the bundled model (or, when the bundled model itself is damaged, the learn
page still works), and a retry once the fault is fixed succeeds in the same session, because no
cache holds the failure (st.cache_resource does not keep exceptions; the session forgets a failure
when the user asks again).

Each test starts from a process that has not loaded the model concerned (the page's caches for it
are cleared) and leaves it that way. The faults themselves are made as in tests/core/test_faults.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.models import bundled
from dashboard import engines
from tests.core.test_faults import (
    HUB_FAULTS,
    HUB_ID,
    deny_reads_under,
    hub,
    make_damaged_bundled,
    repair_bundled,
)
from tests.dashboard.harness import ROOT, assert_no_crash, messages, n_charts, open_path, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_bert import make_tiny_bert

EXPLORE = page_script("explore")


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory) -> Path:
    return make_tiny_bert(
        tmp_path_factory.mktemp("page_fault_tiny"), hidden_size=24, num_heads=3, num_layers=2
    )


@pytest.fixture
def tiny(tmp_path, tiny_source) -> Path:
    return Path(shutil.copytree(tiny_source, tmp_path / "model"))


@pytest.fixture
def fresh(monkeypatch):
    """The page's per-process memory of loaded models, emptied for the test (and after it)."""
    monkeypatch.setattr(engines, "_LOADED", set())
    monkeypatch.setattr(bundled, "_VERIFIED_BUNDLED", set())
    engines.cached_engine.clear()
    engines.RESULTS.clear()
    yield
    engines.cached_engine.clear()
    engines.RESULTS.clear()


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def errors(at: AppTest) -> str:
    return plain(" ".join(e.value for e in at.error))


def load_folder(at: AppTest, folder: Path) -> AppTest:
    if at.selectbox(key="explore_model_choice").value != "__other__":
        at.selectbox(key="explore_model_choice").set_value("__other__").run()
    at.text_input(key="explore_model_custom").set_value(str(folder))
    next(b for b in at.button if b.label == "Load").click().run()
    assert_no_crash(at)
    return at


def assert_shows_the_bundled_model(at: AppTest) -> None:
    assert "Still showing all-MiniLM-L6-v2" in errors(at)
    assert n_charts(at) and "12 heads" in " ".join(c.value for c in at.sidebar.caption)


def assert_shows_the_tiny_model(at: AppTest) -> None:
    assert not at.error, errors(at)
    assert n_charts(at) and "2 layers × 3 heads" in " ".join(c.value for c in at.sidebar.caption)


# ---- faults in a local folder --------------------------------------------------------------------


def _unreadable(monkeypatch, folder: Path):
    patch = pytest.MonkeyPatch()
    deny_reads_under(patch, folder)
    return patch.undo  # the fix: readable again


def _damaged_weights(monkeypatch, folder: Path):
    weights = folder / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(good[: len(good) // 2])
    return lambda: weights.write_bytes(good)


def _no_heads(monkeypatch, folder: Path):
    path = folder / "config.json"
    good = path.read_text()
    config = json.loads(good)
    del config["num_attention_heads"]
    path.write_text(json.dumps(config))
    return lambda: path.write_text(good)


FOLDER_FAULTS = {
    "unreadable folder": (_unreadable, "Permission denied"),
    "damaged safetensors": (_damaged_weights, "model.safetensors|damaged"),
    "config without heads": (_no_heads, "attention head|num_attention_heads"),
}


@pytest.mark.parametrize("fault", FOLDER_FAULTS)
def test_a_faulty_folder_is_reported_the_bundled_model_stays_and_a_retry_works(
    fresh, monkeypatch, tiny, fault
):
    make, says = FOLDER_FAULTS[fault]
    fix = make(monkeypatch, tiny)
    at = load_folder(AppTest.from_string(EXPLORE, default_timeout=APPTEST_DEADLINE).run(), tiny)
    assert re.search(says, errors(at)), errors(at)
    assert_shows_the_bundled_model(at)
    at.segmented_control(key="explore_view").set_value("focus").run()  # the page goes on working
    assert_no_crash(at)
    assert n_charts(at) >= 2
    fix()
    load_folder(at, tiny)  # the user presses Load again
    assert_shows_the_tiny_model(at)


# ---- faults reaching the Hub ---------------------------------------------------------------------


@pytest.mark.parametrize("fault", HUB_FAULTS)
def test_a_hub_fault_is_reported_the_bundled_model_stays_and_a_retry_works(fresh, monkeypatch, tiny, fault):
    make, says = HUB_FAULTS[fault]
    hub(monkeypatch, make())
    at = AppTest.from_string(EXPLORE, default_timeout=APPTEST_DEADLINE).run()
    at.selectbox(key="explore_model_choice").set_value(HUB_ID).run()
    assert_no_crash(at)
    assert says in errors(at) and HUB_ID in errors(at), errors(at)
    assert_shows_the_bundled_model(at)
    hub(monkeypatch, tiny)  # the network is back (the "download" gives the tiny model's files)
    at.selectbox(key="explore_model_choice").set_value("bundled").run()
    at.selectbox(key="explore_model_choice").set_value(HUB_ID).run()  # asked for again
    assert_no_crash(at)
    assert_shows_the_tiny_model(at)
    assert at.query_params["model"] == HUB_ID


# ---- the bundled model's weights are damaged -----------------------------------------------------


@pytest.fixture
def damaged_bundled(fresh, tmp_path, monkeypatch) -> Path:
    copy = make_damaged_bundled(tmp_path, monkeypatch)
    for engine in engines.ENGINES:
        engines.cached_engine.clear("bundled", engine, False)
    return copy


def test_damaged_bundled_weights_leave_the_learn_page_working_and_a_new_session_recovers(
    damaged_bundled, monkeypatch
):
    app = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=APPTEST_DEADLINE)
    app.query_params["step"] = "all"  # every step of the learn page on screen
    app.run()
    assert_no_crash(app)
    assert app.title[0].value.startswith("Learn") and n_charts(app) >= 10
    open_path(monkeypatch, "explore")
    app.run()
    assert_no_crash(app)
    assert app.title[0].value.startswith("Explore")
    assert "may be damaged" in errors(app) and "sha256" in errors(app)
    assert any("No model is available" in m for m in messages(app))
    open_path(monkeypatch, "learn")
    app.run()
    assert_no_crash(app)
    assert app.title[0].value.startswith("Learn") and n_charts(app) >= 10
    repair_bundled(damaged_bundled)  # reinstalled
    again = AppTest.from_string(EXPLORE, default_timeout=APPTEST_DEADLINE).run()  # "reload the page"
    assert_no_crash(again)
    assert not again.error and n_charts(again)
