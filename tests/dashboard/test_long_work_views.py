"""AppTests of the views whose work can be long (dashboard/long_work.py), on a tiny BERT with the
bundled tokenizer: on a machine set slow (its speed patched, never measured) each one asks first,
at the top of its work, with the time and the runs, computes nothing before its button, and after
the press computes with a bar that counts; on a fast machine it starts at once. The views: explore's
ablation grid, attribution, the similarity view's corpus search and the query/key space (their corpus
vectors), and the atlas page's corpus atlas."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import long_work
from tests.dashboard.harness import (
    assert_no_crash,
    make_tiny_bundled_tokenizer_bert,
    messages,
    page_script,
    record_bars,
)
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")
TEXT = "The cat sat on the mat because it was tired."
SLOW, FAST = 1.0, 1e18  # multiply-adds a second: everything long, everything short


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("long_work_model")))


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """Set the machine's speed (`machine(SLOW)`); nothing timed, kept or prepared yet (an empty
    cache folder), the default threshold; returns the texts of every bar drawn."""

    from dashboard.corpus_vectors import memory_store as vectors_store
    from dashboard.views.atlas.compute import memory_store as atlas_store

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for store in (long_work.shelf, vectors_store, atlas_store):
        store.clear()
    monkeypatch.setattr(long_work, "_ratios", {})
    monkeypatch.setattr(long_work, "record", lambda work, seconds: None)  # the speed set stays the truth
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", str(long_work.DEFAULT_ASK_AFTER))
    texts = record_bars(monkeypatch)

    def set_speed(speed: float) -> list:
        monkeypatch.setattr(long_work, "machine_speed", lambda: speed)
        return texts

    return set_speed


def open_explore(model: str, view: str) -> AppTest:
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": model, "text": TEXT, "view": view})
    at.run()
    assert_no_crash(at)
    assert not at.error, messages(at)
    return at


def charts(at: AppTest) -> list[str]:
    return [c.proto.id for c in at.get("plotly_chart")]


def ask_line(at: AppTest) -> str:
    (line,) = [c.value for c in at.caption if "on this machine" in c.value]
    return line


def press(at: AppTest, kind: str) -> AppTest:
    at.button(key=f"long_work_{kind}").click().run()
    assert_no_crash(at)
    assert not at.error, messages(at)
    assert not at.get("button") or not any(b.key == f"long_work_{kind}" for b in at.button)
    return at


def test_the_ablation_grid_asks_on_a_slow_machine_then_counts(tiny, machine, monkeypatch):
    from dashboard.views.explore import ablation

    calls, real = [], ablation.head_effects
    monkeypatch.setattr(ablation, "head_effects", lambda *a, **k: calls.append(1) or real(*a, **k))
    bars = machine(SLOW)
    at = open_explore(tiny, "ablation")
    assert ask_line(at).startswith("Switching off each of the 4 heads in turn takes about ")
    assert "(4 runs of the model)" in ask_line(at)
    assert at.button(key="long_work_ablation").label == "Switch off each head (4 runs)"
    assert not calls and not bars and not any("ablation_grid" in c for c in charts(at))
    press(at, "ablation")
    assert calls == [1] and any("ablation_grid" in c for c in charts(at))
    assert "Switched off 4 of 4 heads" in bars, bars
    at.run()  # kept: neither asked nor computed again
    assert calls == [1] and any("ablation_grid" in c for c in charts(at))


def test_the_ablation_grid_starts_at_once_on_a_fast_machine(tiny, machine):
    bars = machine(FAST)
    at = open_explore(tiny, "ablation")
    assert not [c for c in at.caption if "on this machine" in c.value]
    assert any("ablation_grid" in c for c in charts(at)) and "Switched off 4 of 4 heads" in bars


def test_attribution_asks_on_a_slow_machine_then_counts(tiny, machine):
    bars = machine(SLOW)
    at = open_explore(tiny, "attribution")
    line = ask_line(at)
    assert line.startswith("Running the model again without each of the ") and "tokens in turn" in line
    assert not bars and not any("attribution_bars" in c for c in charts(at))
    press(at, "attribution")
    assert any("attribution_bars" in c for c in charts(at))
    assert any(t and t.startswith("Left out ") and " of " in t for t in bars), bars


def test_the_corpus_search_asks_with_the_command_that_prepares_it(tiny, machine):
    bars = machine(SLOW)
    at = open_explore(tiny, "similarity")
    assert any("similarity_chart" in c for c in charts(at))  # the sentence's own map needs no corpus
    line = ask_line(at)
    assert line.startswith("Reading the ") and f"`python -m core prepare --model {tiny}`" in line
    assert not bars and not [m for m in at.markdown if m.value.startswith("1. **")]
    press(at, "corpus")
    assert [m for m in at.markdown if m.value.startswith("1. **")]  # the nearest words, listed
    assert any(t and t.startswith("Read ") and " of " in t and "corpus sentences" in t for t in bars)


def test_the_query_key_space_asks_for_the_corpus_first(tiny, machine):
    machine(SLOW)
    at = open_explore(tiny, "qk")
    assert ask_line(at).startswith("Reading the ") and not any("qk_chart" in c for c in charts(at))
    press(at, "corpus")
    assert any("qk_chart" in c for c in charts(at))


def test_the_atlas_asks_on_a_slow_machine_then_counts(tiny, machine):
    bars = machine(SLOW)
    at = AppTest.from_string(page_script("atlas"), default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = tiny
    at.run()
    assert_no_crash(at)
    line = ask_line(at)
    assert line.startswith("Measuring every head on the ") and "python -m core prepare" in line
    assert not bars and not charts(at)
    press(at, "atlas")
    assert charts(at) and any(t and t.startswith("Measured every head on ") for t in bars), bars


def fake_length(n: int, d_model: int, n_heads: int, heads_up_to: int | None = None) -> dict:
    """A price row without timing anything: the page's work is what is tested here, not the clock."""
    from core.cost.price import heads_curve

    row = {"one head": (1e-9 * n * n, 4 * n * n), "projections": (1e-7 * n, 4 * n * d_model)}
    if heads_up_to is None or n <= heads_up_to:
        row[heads_curve(n_heads)] = (1e-9 * n * n * n_heads, 4 * n * n * n_heads)
    return row


def test_the_cost_page_asks_before_timing_the_price(tiny, machine, monkeypatch):
    from dashboard.views.cost import measure

    monkeypatch.setattr(measure, "measure_length", fake_length)
    measure.price_store.clear()
    bars = machine(SLOW)
    at = AppTest.from_string(page_script("cost"), default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = tiny
    at.run()
    assert_no_crash(at)
    assert ask_line(at).startswith("Timing attention at 9 lengths, n = 16 … 4,096 tokens")
    assert not bars and not any("cost_price" in c for c in charts(at))
    press(at, "price")
    assert any("cost_price" in c for c in charts(at)) and "Timed 9 of 9 lengths" in bars, bars


def test_the_induction_test_asks_on_a_slow_machine_then_counts(machine, tmp_path_factory):
    from tests.tiny_llama import make_tiny_llama

    llama = str(make_tiny_llama(tmp_path_factory.mktemp("long_work_llama"), positions=128))
    bars = machine(SLOW)
    at = open_explore(llama, "induction")
    line = ask_line(at)
    assert line.startswith("Running ") and "induction heads off, takes about" in line and "(2 runs" in line
    assert not bars and not any("explore_induction" in c for c in charts(at))
    press(at, "induction")
    assert any("explore_induction" in c for c in charts(at)) and "Ran 2 of 2 runs" in bars, bars
