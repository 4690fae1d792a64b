"""The atlas page on the translator trained here (issue 38 §3, `/atlas?model=translator`): one grid of
its heads in three kinds, each cell the role core.translate.atlas gives it and its score; a table a
kind whose links open each head on explore (`kind`, `layer`, `head`); a picked grid cell's link;
tampered link values said in one line; offered here and hosted, from the link, from explore's model
and in the page's one model picker, and back to another model; presenter mode."""

from __future__ import annotations

import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.translate.atlas import ALIGNER, KIND_STATS, KINDS, TranslatorAtlas, corpus_pairs, measure
from core.translate.engine import TRANSLATOR_DIR, TRANSLATOR_KEY, TranslatorEngine
from dashboard.content import atlas_translator as text
from dashboard.content.atlas import TITLE as ATLAS_TITLE
from dashboard.model_pick import model_label
from dashboard.views.atlas.translator import printed
from tests.dashboard.harness import assert_no_crash, chart_specs, messages, plotly_array
from tests.dashboard.test_atlas import PRESENTER_SCRIPT, SMALL_SCRIPT
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    """Another model's atlas, when a test goes back to one, lands in a cache folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def expected() -> TranslatorAtlas:
    engine = TranslatorEngine(TRANSLATOR_DIR)
    return measure(engine.params, engine.config, corpus_pairs(), engine.tokenizer.get_vocab())


def open_page(script: str = SMALL_SCRIPT, inject: dict | None = None, **params: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": TRANSLATOR_KEY, **params})
    if inject:
        at.session_state["fuzz_inject"] = inject
    at.run()
    assert_no_crash(at, params)
    return at


def panels(at: AppTest) -> list[dict]:
    """The grid's heatmaps, one a kind, in KINDS' order."""
    (spec,) = chart_specs(at)
    return [trace for trace in spec["data"] if trace["type"] == "heatmap"]


def test_the_grid_shows_each_heads_role_and_score_in_three_kinds(expected):
    at = open_page()
    assert at.title[0].value == text.TITLE
    assert at.selectbox(key="atlas_model").value == TRANSLATOR_KEY
    for kind, trace in zip(KINDS, panels(at), strict=True):
        roles = expected.roles(kind)
        cells = np.asarray(trace["text"], dtype=object)
        assert cells.shape == roles.shape == plotly_array(trace["z"]).shape
        for (layer, head), role in np.ndenumerate(roles):
            name = "alignment" if kind == "cross" else text.ROLE_CELL_STAT[role]
            score = printed(name, expected.kinds[kind].stats[name][layer, head], 2)
            cell = cells[layer, head].replace("&lt;", "<").replace("&gt;", ">")
            assert cell.startswith(f"<b>{text.ROLE_TEXT[role].cell}</b><br>") and f" {score}" in cell, cell
    assert (expected.roles("cross") == ALIGNER).any()
    said = " ".join(str(c.value) for c in at.caption)
    assert text.CORPUS.split("{")[0] in said and "teacher-forced" in said
    assert at.query_params["model"] == TRANSLATOR_KEY
    assert not set(at.query_params) & {"stat", "on", "roles", "text", "engine"}


def test_each_kinds_table_has_the_roles_numbers_and_explore_links(expected):
    at = open_page()
    assert len(at.dataframe) == len(KINDS)
    for kind, frame in zip(KINDS, at.dataframe, strict=True):
        table = frame.value
        roles = expected.roles(kind)
        assert list(table["role"]) == list(roles.ravel())
        for name in KIND_STATS[kind]:
            np.testing.assert_allclose(table[name], expected.kinds[kind].stats[name].ravel(), atol=1e-3)
        for (layer, head), url in zip(np.ndindex(roles.shape), table["explore"], strict=True):
            path, _, query = url.partition("?")
            assert path == "explore"
            assert urllib.parse.parse_qs(query) == {
                "model": [TRANSLATOR_KEY],
                "kind": [kind],
                "layer": [str(layer)],
                "head": [str(head)],
            }


def test_a_picked_cell_links_to_that_head_on_explore():
    at = open_page()
    assert not at.get("link_button")
    at.session_state["atlas_tr_pick"] = ("cross", 1, 2)  # what the grid's click callback stores
    at.run()
    (button,) = at.get("link_button")
    assert button.proto.label == "Open cross layer 2, head 3 on explore"
    assert button.proto.url == "explore?model=translator&kind=cross&layer=1&head=2"
    at.session_state["atlas_tr_pick"] = ("cross", 9, 9)  # a head the translator does not have: ignored
    at.run()
    assert_no_crash(at)
    assert not at.get("link_button")


@pytest.mark.parametrize(
    ("params", "note"),
    [
        ({"stat": "nope"}, "unknown `stat`"),
        ({"on": "elsewhere"}, "unknown `on`"),
        ({"roles": "cls,bogus,<script>"}, "`roles` names a role"),
        ({"engine": "quantum"}, "unknown `engine`"),
        ({"stat": "x" * 10_000}, "unknown `stat`"),
    ],
)
def test_a_tampered_link_value_is_one_line_and_the_atlas_still_shows(params, note):
    at = open_page(**params)
    (said,) = messages(at)
    assert note in said and "\n" not in said
    assert len(panels(at)) == len(KINDS) and not at.error


def test_a_sentence_in_the_link_is_said_unused():
    at = open_page(on="sentence", text="the cat sees the dog")
    assert text.ON_SENTENCE in [str(c.value) for c in at.caption]
    assert len(panels(at)) == len(KINDS) and "text" not in at.query_params


@pytest.mark.parametrize("hosted", [False, True], ids=["offline", "hosted"])
def test_one_picker_offers_the_translator_and_the_other_models(monkeypatch, hosted):
    if hosted:
        monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    at = AppTest.from_string(SMALL_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.run()
    assert_no_crash(at)
    (picker,) = at.sidebar.selectbox  # the shared picker, the only one: no picker of its own, no button
    assert picker.key == "atlas_model" and picker.value == "bundled" and not at.sidebar.button
    assert model_label(TRANSLATOR_KEY) in picker.options and model_label("bundled") in picker.options
    assert len(at.sidebar.radio) == (0 if hosted else 1)  # the engine switch where torch may run
    picker.set_value(TRANSLATOR_KEY).run()
    assert_no_crash(at)
    assert at.title[0].value == text.TITLE and len(panels(at)) == len(KINDS)
    assert at.query_params["model"] == TRANSLATOR_KEY and not at.sidebar.radio  # the NumPy engine only
    at.selectbox(key="atlas_model").set_value("bundled").run()
    assert_no_crash(at)
    assert "model" not in at.query_params and len(at.sidebar.selectbox) == 1
    assert len(at.sidebar.radio) == (0 if hosted else 1)
    assert at.title[0].value == ATLAS_TITLE and at.selectbox(key="atlas_model").value == "bundled"


def test_coming_from_explores_translator_opens_its_atlas():
    at = AppTest.from_string(SMALL_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.session_state["fuzz_inject"] = {"explore_model": TRANSLATOR_KEY}
    at.run()
    assert_no_crash(at)
    assert at.title[0].value == text.TITLE


def test_presenter_mode_puts_the_grid_first_in_large_type():
    at = open_page(PRESENTER_SCRIPT, present="1")
    assert not at.title
    kinds = [getattr(node, "type", type(node).__name__) for node in at.main.children.values()]
    chart_at = kinds.index("plotly_chart")
    assert set(kinds[:chart_at]) <= {"toggle", "status", "expander", "empty", "html"}, kinds
    spec = chart_specs(at)[0]
    assert spec["layout"]["font"]["size"] >= 20
    assert all(trace["textfont"]["size"] >= 20 for trace in panels(at))
    assert any(e.label == text.EXPLAIN_LABEL for e in at.expander)


def test_a_printed_score_never_rounds_up_onto_its_roles_threshold():
    assert printed("alignment", 0.6996, 2) == "0.69" and printed("alignment", 0.7, 2) == "0.70"
    assert printed("to_end", 0.49996, 3) == "0.499" and printed("spread", 0.7996, 2) == "0.79"
    assert printed("reordered", 0.6996, 2) == "0.70"  # no role is read from it
