"""AppTests of the circuit page on a circuit file computed here: core.measures.circuit's find_circuit run
on a tiny random Llama whose tokenizer knows the task's names (tests/tiny_ioi.py), with thresholds
low enough that a random model's heads fall into classes (they are the file's own record: its
evidence keeps them). Every statement the page prints is recomputed here from the file; each view
draws its grid; the link opens the picked head on explore with the chosen prompt; a missing or broken
file is said, never a traceback; a sentence of one's own runs the direct effect (its numbers equal
path_patch's here) and a bad one is said while the view stays; the search runs again on request;
presenter mode folds the controls away; the deck `circuit` walks its slides."""

from __future__ import annotations

import json
import math
import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import chart_access
from dashboard.content import circuit as text
from dashboard.decks.model import builtin_deck
from dashboard.widgets import md
from tests.dashboard.harness import (
    NAMED_TEXTS,
    ROOT,
    assert_no_crash,
    chart_specs,
    messages,
    n_charts,
    page_script,
    plotly_array,
    set_text,
)
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("circuit")
APP = str(ROOT / "dashboard" / "app.py")
PAGES = ("learn", "explore", "compare", "atlas", "cost", "train", "circuit")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(engine, the circuit's JSON as written, its path): a real search on a tiny model."""
    from core.__main__ import load_engine
    from core.measures.circuit import find_circuit
    from core.measures.circuit_classes import Thresholds
    from tests.tiny_ioi import make_ioi_llama

    folder = make_ioi_llama(tmp_path_factory.mktemp("circuit-llama"), layers=4, heads=4, kv_heads=2)
    engine = load_engine("numpy", str(folder))
    loose = Thresholds(
        direct=0.02, attention_io=0.0, copy=0.0, s_inhibition=0.02, kv=0.02, attention_s2=0.0,
        previous=0.01, attention_previous=0.0,
    )  # fmt: skip
    data = find_circuit(engine, prompts=4, seed=0, thresholds=loose)
    data["record"] = {
        "command": "find_circuit(tiny, prompts=4)",
        "prompts": 4,
        "seconds": 1.5,
        "date": "today",
    }
    path = tmp_path_factory.mktemp("circuit-file") / "circuit.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return engine, data, path


@pytest.fixture
def shipped(tiny, monkeypatch):
    from dashboard.views.circuit import compute

    monkeypatch.setattr(compute, "CIRCUIT_FILE", tiny[2])
    return tiny[1]


def open_page(**params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    if params.pop("present", None) == "1":
        at.session_state["present"] = True
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def link_query(at: AppTest) -> dict:
    (button,) = at.get("link_button")
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(button.proto.url).query).items()}


def test_the_graph_and_its_statements_come_from_the_file(shipped):
    at = open_page()
    assert not at.error and not at.warning, messages(at)
    assert at.title[0].value == text.TITLE and n_charts(at) >= 1
    said = markdown(at)
    clean, corrupt = shipped["logit_diff_clean"], shipped["logit_diff_corrupt"]
    assert f"**{clean:+.2f}**" in said and f"**{corrupt:+.2f}**" in said
    assert f"**{len(shipped['prompts'])} prompts**" in said
    assert f"**{shipped['faithfulness']:.0%}**" in said
    n_in = len({tuple(h) for heads in shipped["classes"].values() for h in heads})
    assert f"({n_in} heads; the other {4 * 4 - n_in} mean-ablated)" in said
    for name, heads in shipped["classes"].items():
        label = text.CLASSES[name].one if len(heads) == 1 else text.CLASSES[name].label
        assert (f"**{len(heads)} {label}**" if heads else text.NO_CLASS.format(label=label)) in said
    # the graph: one trace per class with heads, its nodes where the file puts them (from 1)
    (graph,) = [s for s in chart_specs(at) if any(t.get("customdata") for t in s["data"])]
    nodes = {tuple(c) for t in graph["data"] for c in t.get("customdata") or []}
    placed = {tuple(h) for heads in shipped["classes"].values() for h in heads}
    left_out = {tuple(row["head"]) for row in shipped["evidence"]["left_out"]["direct_only"]}
    assert (
        nodes == placed | left_out and left_out - placed
    )  # and the heads with a direct effect the tests left out
    # the head shown first: the name mover with the largest direct effect, found here
    movers = shipped["classes"]["name_mover"]
    layer, head = max(movers, key=lambda h: abs(shipped["direct"][h[0]][h[1]]))
    query = link_query(at)
    assert (query["layer"], query["head"], query["view"], query["model"]) == (
        str(layer),
        str(head),
        "head",
        "smollm2",
    )
    assert query["text"] == shipped["prompts"][0]["text"]
    # the heads' table: each head with the figure that put it in its class and its other figures
    table = at.dataframe[0].value
    row = shipped["evidence"]["heads"]["name_mover"][0]
    mine = table[(table["layer"] == row["head"][0] + 1) & (table["head"] == row["head"][1] + 1)].iloc[0]
    assert mine["restored"] == pytest.approx(row["figure"], abs=1e-4)
    assert f"END→IO {row['end_io']:.2f}" in mine["its other figures"]
    assert f"copy score {row['copy_score']:.2f}" in mine["its other figures"]
    assert len(table) == len({tuple(h) for heads in shipped["classes"].values() for h in heads})
    # every chart named for a screen reader, its numbers a table away (dashboard.widgets.chart)
    assert all(c.proto.alt.startswith("Chart") for c in at.get("plotly_chart"))
    assert "name mover" in at.get("plotly_chart")[0].proto.alt
    assert any(e.label == chart_access.NUMBERS_LABEL for e in at.expander)


def test_each_view_draws_its_grid_from_the_file(shipped):
    paths = shipped["evidence"]["paths"]
    grids = {"direct": "direct", "q": "q", "kv": "kv", "prev": "previous_k"}
    for view, name in grids.items():
        at = open_page(view=view)
        assert not at.error, (view, messages(at))
        expected = np.array([[np.nan if v is None else v for v in row] for row in paths[name]["restored"]])
        if not np.isfinite(expected).any():  # a step the search skipped: said, not drawn
            assert text.GRID_MISSING in messages(at), view
            continue
        (spec,) = chart_specs(at)
        np.testing.assert_allclose(plotly_array(spec["data"][0]["z"]), expected, equal_nan=True)
    # the direct view names the heads with a direct effect the name-mover tests left out, largest first
    at = open_page(view="direct")
    placed = {tuple(h) for heads in shipped["classes"].values() for h in heads}
    rows = [row for row in shipped["evidence"]["left_out"]["direct_only"] if tuple(row["head"]) not in placed]
    top = max(rows, key=lambda row: abs(row["figure"]))
    verb = "restores" if top["figure"] >= 0 else "takes away"
    why = md("; ".join(top["failed"]))
    assert (
        f"L{top['head'][0] + 1} H{top['head'][1] + 1} ({verb} {abs(top['figure']):.0%}; {why})"
        in markdown(at)
    )
    for view in ("logit", "gpt2"):
        at = open_page(view=view)
        assert not at.error and n_charts(at) == 1, (view, messages(at))
    at = open_page(view="logit")
    (spec,) = chart_specs(at)
    circuit = shipped["evidence"]["logit_diff_circuit"]
    assert list(plotly_array(spec["data"][0]["y"])) == pytest.approx(
        [shipped["logit_diff_clean"], shipped["logit_diff_corrupt"], circuit]
    )
    at = open_page(view="gpt2")
    said = markdown(at)
    assert "Name movers: 3 (layers 10–11" in said  # GPT-2 small's published name movers 9.6, 9.9, 10.0
    movers = shipped["classes"]["name_mover"]
    layers = sorted({h[0] + 1 for h in movers})
    where = f"layer {layers[0]}" if len(layers) == 1 else f"layers {layers[0]}–{layers[-1]}"
    assert (f"small, {len(movers)} ({where}, " if movers else "small, none here.") in said
    n_ours = len({tuple(h) for heads in shipped["classes"].values() for h in heads})
    n_theirs = len({h for heads in text.GPT2_CLASSES.values() for h in heads})
    assert f"has {n_ours} of the model's 16 heads ({n_ours / 16:.0%})" in said
    assert f"{n_theirs} of 144 ({n_theirs / 144:.0%}," in said


def test_picking_a_head_and_a_prompt_changes_the_link(shipped):
    at = open_page()
    last = len(shipped["prompts"]) - 1
    at.selectbox(key="circuit_prompt").set_value(last).run()
    at.selectbox(key="circuit_pick").set_value("0.1").run()
    assert_no_crash(at)
    query = link_query(at)
    assert (query["layer"], query["head"], query["text"]) == ("0", "1", shipped["prompts"][last]["text"])
    assert (at.query_params["layer"], at.query_params["head"], at.query_params["prompt"]) == (
        "0",
        "1",
        str(last),
    )
    # what a click on a node stores (AppTest cannot click a Plotly point: tests/e2e/test_circuit_browser.py)
    at.session_state["circuit_layer"], at.session_state["circuit_head"] = 1, 2
    at.run()
    assert (link_query(at)["layer"], link_query(at)["head"]) == ("1", "2")
    assert at.selectbox(key="circuit_pick").value == "1.2"


def test_bad_link_values_are_said_and_the_nearest_valid_ones_shown(shipped):
    at = open_page(view="zebra", layer="99", head="-3", prompt="500")
    notes = " ".join(m.value for m in at.warning)
    assert "unknown `view`" in notes and "`layer` value 99" in notes and "`prompt`" in notes
    query = link_query(at)
    assert (query["layer"], query["head"]) == ("3", "0")


@pytest.mark.parametrize(
    "content, said",
    [
        (None, "is missing"),
        ("{not json", "not valid JSON"),
        (json.dumps({"model": "m"}), "not a grid of numbers"),
        ("CLASSES", "names a head the model does not have"),
    ],
)
def test_a_missing_or_broken_file_is_said_without_a_traceback(tiny, monkeypatch, tmp_path, content, said):
    from dashboard.views.circuit import compute

    path = tmp_path / "circuit.json"
    if content == "CLASSES":
        content = json.dumps({**tiny[1], "classes": {"name_mover": [[40, 0]]}})
    if content is not None:
        path.write_text(content, encoding="utf-8")
    monkeypatch.setattr(compute, "CIRCUIT_FILE", path)
    at = open_page()
    assert any(said in m for m in messages(at)), messages(at)
    assert not at.exception and not at.error


def test_presenter_mode_folds_the_controls_and_keeps_the_view(shipped):
    at = open_page(present="1", view="q")
    assert not at.title and len(at.expander) == 1 and at.expander[0].label == text.PRESENTER_CONTROLS
    assert n_charts(at) == 1 and not at.get("link_button")  # a class's view: no head link
    at = open_page(present="1")
    assert len(at.get("link_button")) == 1  # the graph: the picked head's link under it


@pytest.fixture
def here(tiny, shipped, monkeypatch):
    """SmolLM2 stood in for by the tiny model: the page's runs on request go to it."""
    from dashboard.views.circuit import compute, own

    monkeypatch.setattr(compute, "smollm2_here", lambda: True)
    monkeypatch.setattr(compute, "load_engine", lambda key, engine: tiny[0])
    monkeypatch.setattr(own, "load_engine", lambda key, engine: tiny[0])
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", "inf")  # asking first: tests/dashboard/test_long_work
    return tiny[0]


def test_ones_own_sentence_runs_the_direct_effect_and_a_bad_one_is_said(here, shipped):
    from core.measures.ioi import parse_prompt
    from core.measures.paths import path_patch

    at = open_page()
    at.text_input(key="circuit_own").set_value("There are no names in this one.").run()
    assert_no_crash(at)
    assert any(m.startswith(text.OWN_BAD.split("{")[0]) for m in messages(at)), messages(at)
    assert any(s for s in chart_specs(at) if any(t.get("customdata") for t in s["data"])), "the graph stays"
    sentence = shipped["prompts"][1]["text"]
    at.text_input(key="circuit_own").set_value(sentence).run()
    assert_no_crash(at)
    item, io, _s = parse_prompt(here, sentence)
    found = path_patch(here, [item])
    z = plotly_array(chart_specs(at)[-1]["data"][0]["z"])
    np.testing.assert_allclose(z, found.restored, equal_nan=True)
    assert f"**{found.metric_clean:+.2f}**" in markdown(at) and io.strip() in markdown(at)
    (layer, head), *_ = shipped["classes"]["name_mover"]  # the circuit's name movers, on this sentence
    mover = (
        f"L{layer + 1} H{head + 1} {found.restored[layer, head]:+.0%} ({shipped['direct'][layer][head]:+.0%})"
    )
    assert mover in markdown(at)


def test_the_search_runs_again_on_request(here, shipped):
    at = open_page()
    at.session_state["circuit_n_prompts"] = 2  # the box is drawn once the search is wanted
    at.toggle(key="circuit_search_on").set_value(True).run()
    assert_no_crash(at)
    assert text.SHOWING_RECOMPUTED.format(n=2, seed=0) in [c.value for c in at.caption]
    assert math.isfinite(float(at.session_state["circuit_source"][0]))
    at.button(key="circuit_shipped").click().run()
    assert text.SHOWING_RECOMPUTED.format(n=2, seed=0) not in [c.value for c in at.caption]


@pytest.mark.slow
def test_the_deck_walks_its_slides(shipped):
    deck = builtin_deck("circuit", PAGES, ("decoder", "smollm2", "translator"))
    assert deck is not None and 6 <= len(deck.slides) <= 8
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params["deck"] = "circuit"
    at.run()
    for k, slide in enumerate(deck.slides, 1):
        context = (k, slide.title)
        assert_no_crash(at, context)
        assert not at.error, (context, messages(at))
        assert at.get("plotly_chart"), (context, "the slide's view drew no chart")
        assert f"**Slide {k} of {len(deck.slides)}**" in at.markdown[0].value
        query = dict(at.query_params)
        assert all(query.get(p, v) == v for p, v in slide.params), (context, query)
        if k < len(deck.slides):
            at.button(key="deck_next").click().run()


def test_the_search_asks_first_saying_how_long_from_the_files_record(here, tiny, monkeypatch, tmp_path):
    from dashboard import long_work
    from dashboard.views.circuit import compute

    path = tmp_path / "circuit.json"
    path.write_text(json.dumps({**tiny[1], "record": {"seconds": 600.0, "prompts": 8}}), encoding="utf-8")
    monkeypatch.setattr(compute, "CIRCUIT_FILE", path)
    monkeypatch.setattr(compute, "_calibrated", set())
    monkeypatch.setattr(long_work, "_ratios", {})
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", "3")
    at = open_page()
    at.toggle(key="circuit_search_on").set_value(True).run()
    asked = [c.value for c in at.caption if c.value.startswith(text.RECOMPUTE_ASK.format(n=8))]
    assert asked and "about 10 min" in asked[0], [c.value for c in at.caption]  # the record's 600 s
    assert "circuit_source" not in at.session_state  # nothing ran
    at.button(key="long_work_circuit").click().run()
    assert_no_crash(at)
    assert text.SHOWING_RECOMPUTED.format(n=8, seed=0) in [c.value for c in at.caption]


@pytest.mark.parametrize("kind", list(NAMED_TEXTS))
def test_any_sentence_typed_is_said_or_measured_never_a_crash(here, kind):
    """Every kind of bad text (tests/dashboard/harness.py) in one's own sentence: a line that says why
    (or the measurement), the graph above drawn as before, nothing of it read as markup."""
    at = open_page()
    set_text(at, "text_input", "circuit_own", NAMED_TEXTS[kind])
    at.run()
    assert_no_crash(at, kind)
    assert not at.error, (kind, messages(at))
    assert any(t.get("customdata") for s in chart_specs(at)[:1] for t in s["data"]), (kind, "the graph stays")
    assert "<script>" not in markdown(at)
