"""The atlas page (issue 16 §2) under AppTest: the grid and the table, the stat switch, the role
filter, the user's sentence, bad link values, presenter mode, the link a grid click shows, and the
caches (memory, disk, a damaged or unwritable cache folder, a model retrained in place, a computation
interrupted by a rerun), and the printed numbers against the role thresholds.

Most tests run a 2-layer, 2-head random BERT with the bundled tokenizer on the corpus's first
sentences (the prelude swaps the corpus for the test and puts it back); one runs the real bundled
model on the whole corpus. Every test has its own cache folder (XDG_CACHE_HOME) and an empty
in-memory store.
"""

from __future__ import annotations

import json
import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.atlas import (
    ROLE_SHARE,
    STATS,
    HeadAtlas,
    cache_dir,
    cache_path,
    compute_atlas,
    corpus_hash,
    head_roles,
    load_atlas,
)
from dashboard.content.atlas import corpus
from dashboard.engines import files_fingerprint
from tests.dashboard.harness import (
    assert_no_crash,
    chart_specs,
    make_tiny_bundled_tokenizer_bert,
    messages,
    page_script,
    plotly_array,
)
from tests.deadline import APPTEST_DEADLINE

N_SMALL = 12  # corpus sentences the tiny-model tests measure
SMALL_PRELUDE = f"""
import dashboard.content.atlas as _content
_full_corpus = _content.corpus
_content.corpus = lambda: _full_corpus()[:{N_SMALL}]
_original_progress = st.progress
def _progress(*args, **kwargs):
    st.session_state["test_progress_bars"] = st.session_state.get("test_progress_bars", 0) + 1
    return _original_progress(*args, **kwargs)
st.progress = _progress
"""
SMALL_POSTLUDE = "_content.corpus = _full_corpus; st.progress = _original_progress"
SMALL_SCRIPT = page_script("atlas", SMALL_PRELUDE, SMALL_POSTLUDE)
FULL_SCRIPT = page_script("atlas")
# the app draws the presenter toggle (it reads `present` from the link) before the page runs
PRESENTER_SCRIPT = page_script(
    "atlas",
    SMALL_PRELUDE + "\nfrom dashboard import presenter\npresenter.presenter_toggle_ui()\n",
    SMALL_POSTLUDE,
)


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    """A cache folder of the test's own, and an empty in-memory store."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    from dashboard.views.atlas.compute import memory_store

    memory_store.clear()
    yield tmp_path / "xdg"
    memory_store.clear()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("atlas_model")))


def open_page(script: str = SMALL_SCRIPT, **params: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert_no_crash(at)
    return at


def table(at: AppTest):
    return at.dataframe[0].value


def caption_text(at: AppTest) -> str:
    return " ".join(str(c.value) for c in at.caption)


def grid_z(at: AppTest) -> np.ndarray:
    return plotly_array(chart_specs(at)[0]["data"][0]["z"])


def tiny_atlas(model: str):
    from core.models.bert import BertNumpy

    engine = BertNumpy.from_pretrained(model)
    sentences = corpus()[:N_SMALL]
    return compute_atlas([engine.run(s) for s in sentences], model=model, corpus_hash=corpus_hash(sentences))


# ---- the page on the tiny model ----------------------------------------------------------------------


def test_grid_and_table_show_the_atlas(tiny_model):
    at = open_page(model=tiny_model)
    assert len(chart_specs(at)) == 1 and not at.error, messages(at)
    expected = tiny_atlas(tiny_model)
    rows = table(at)
    assert len(rows) == 4 and list(rows["layer"]) == [1, 1, 2, 2] and list(rows["head"]) == [1, 2, 1, 2]
    for name in STATS:  # the table's numbers are the atlas's, layer-major
        np.testing.assert_allclose(rows[name], expected.stat(name).ravel(), rtol=1e-6, err_msg=name)
    assert list(rows["role"]) == list(head_roles(expected).ravel())
    link = urllib.parse.urlparse(rows["explore"][3])
    query = urllib.parse.parse_qs(link.query)
    assert link.path == "explore" and query == {
        "view": ["head"],
        "layer": ["1"],
        "head": ["1"],
        "model": [tiny_model],
        "engine": ["numpy"],
    }
    assert f"{N_SMALL} sentences" in caption_text(at) and "computed now and saved" in caption_text(at)
    assert "computed by the NumPy engine" in caption_text(at)  # the atlas says which engine made it
    assert at.session_state["test_progress_bars"] == 1  # the bar showed while it computed
    spec = chart_specs(at)[0]
    assert (
        spec["layout"]["yaxis"]["title"]["text"] == "layer"
        and spec["layout"]["xaxis"]["title"]["text"] == "head"
    )
    assert spec["data"][0]["y"] == ["1", "2"] and spec["data"][0]["x"] == ["1", "2"]
    assert "Clark" in " ".join(m.value for m in at.markdown)  # the source is cited


def test_stat_switch_draws_that_statistic(tiny_model):
    at = open_page(model=tiny_model)
    expected = tiny_atlas(tiny_model)
    for name in ("to_prev", "entropy", "distance", "to_sep"):
        at.selectbox(key="atlas_stat").set_value(name).run()
        assert_no_crash(at, name)
        np.testing.assert_allclose(grid_z(at), expected.stat(name), rtol=1e-6, err_msg=name)
        assert at.query_params["stat"] == name
        hover = chart_specs(at)[0]["data"][-1]["text"]
        assert hover[0].startswith("<b>Layer 1, head 1</b>") and len(hover) == 4
    assert at.session_state["test_progress_bars"] == 1  # computed once, then from memory
    assert "opened from memory" in caption_text(at)


def test_role_filter_filters_the_table_and_greys_the_grid():
    """On the bundled model (its heads have several roles even on a few sentences)."""
    from dashboard.content.atlas import ROLE_TEXT

    at = open_page()
    roles = list(table(at)["role"])
    assert len(roles) == 72 and len(set(roles)) >= 3
    role = "previous token"
    assert 0 < roles.count(role) < 72
    pills = at.button_group(key="atlas_roles_pills")
    assert f"previous token · {roles.count(role)}" in pills.options
    pills.set_value([ROLE_TEXT[role].slug]).run()
    assert_no_crash(at)
    rows = table(at)
    assert set(rows["role"]) == {role} and len(rows) == roles.count(role)
    cover = plotly_array(chart_specs(at)[0]["data"][1]["z"])  # a translucent cover over the others
    assert np.array_equal(np.isnan(cover).ravel(), np.array(roles) == role)
    assert at.query_params["roles"] == "prev"
    pills.set_value(["prev", "broad"]).run()
    assert set(table(at)["role"]) == {role, "broad"} and at.query_params["roles"] == "prev,broad"
    pills.set_value([]).run()
    assert len(table(at)) == 72 and len(chart_specs(at)[0]["data"]) == 2  # no cover
    assert "roles" not in at.query_params


def test_user_sentence(tiny_model):
    from core.models.bert import BertNumpy

    at = open_page(model=tiny_model)
    at.segmented_control(key="atlas_on").set_value("sentence").run()
    assert "Type a sentence" in " ".join(messages(at))
    sentence = "The keys to the cabinet are on the table, aren't they?"
    at.text_area(key="atlas_text").set_value(sentence).run()
    assert_no_crash(at)
    result = BertNumpy.from_pretrained(tiny_model).run(sentence)
    expected = compute_atlas([result], model=tiny_model, corpus_hash="x")
    np.testing.assert_allclose(table(at)["to_cls"], expected.to_cls.ravel(), rtol=1e-6)
    assert "your sentence only" in caption_text(at)
    assert f"({result.n_tokens} tokens)" in caption_text(at)
    link = urllib.parse.parse_qs(urllib.parse.urlparse(table(at)["explore"][0]).query)
    assert link["text"] == [sentence]  # the explore link opens the head on the same sentence
    assert at.query_params["text"] == sentence and at.query_params["on"] == "sentence"
    at.text_area(key="atlas_text").set_value("\x01\x02\u200b").run()  # nothing the tokenizer keeps
    assert_no_crash(at)
    assert at.error and "Could not run the model" in at.error[0].value
    at.segmented_control(key="atlas_on").set_value("corpus").run()
    assert not at.error and "text" not in at.query_params


def test_link_with_a_sentence_opens_on_it(tiny_model):
    at = open_page(model=tiny_model, text="<b>Hi</b> [x](javascript:1) there.")
    assert at.segmented_control(key="atlas_on").value == "sentence"
    assert at.text_area(key="atlas_text").value == "<b>Hi</b> [x](javascript:1) there."
    assert "your sentence only" in caption_text(at)


@pytest.mark.parametrize(
    ("params", "note"),
    [
        ({"stat": "nope"}, "unknown `stat`"),
        ({"on": "elsewhere"}, "unknown `on`"),
        ({"roles": "cls,bogus,<script>"}, "`roles` names a role"),
        ({"engine": "quantum"}, "unknown `engine`"),
        ({"stat": "x" * 10_000, "roles": "," * 5000}, "unknown `stat`"),
    ],
)
def test_bad_link_values_are_said_and_ignored(tiny_model, params, note):
    at = open_page(model=tiny_model, **params)
    shown = " ".join(messages(at))
    assert note in shown, shown
    assert len(chart_specs(at)) == 1 and not at.error


def test_unknown_model_falls_back_to_a_message(tiny_model):
    at = open_page(model="/no/such/model/folder")
    assert at.error and "Could not use the model" in at.error[0].value
    assert len(chart_specs(at)) == 1  # the bundled model instead, on the small corpus


def test_grid_click_shows_a_link_to_explore(tiny_model):
    at = open_page(model=tiny_model)
    assert not at.get("link_button")
    at.session_state["atlas_pick"] = (1, 0)  # what the grid's click callback stores
    at.run()
    buttons = at.get("link_button")
    assert len(buttons) == 1 and buttons[0].proto.label == "Open layer 2, head 1 on explore"
    query = urllib.parse.parse_qs(urllib.parse.urlparse(buttons[0].proto.url).query)
    assert query["layer"] == ["1"] and query["head"] == ["0"] and query["view"] == ["head"]
    at.session_state["atlas_pick"] = (99, 99)  # a pick this model does not have: ignored
    at.run()
    assert_no_crash(at)
    assert not at.get("link_button")


def test_presenter_mode_puts_the_chart_first(tiny_model):
    at = open_page(PRESENTER_SCRIPT, model=tiny_model, present="1")
    assert not at.title
    expander = at.expander[0]
    assert expander.label.startswith("Controls")
    assert expander.selectbox(key="atlas_stat") is not None  # the controls are folded inside
    kinds = [getattr(node, "type", type(node).__name__) for node in at.main.children.values()]
    chart_at = kinds.index("plotly_chart")
    assert set(kinds[:chart_at]) <= {"toggle", "status", "expander", "empty", "html"}, kinds  # chart first
    spec = chart_specs(at)[0]
    assert spec["layout"]["font"]["size"] >= 20  # projector type
    assert any(e.label.startswith("What the numbers mean") for e in at.expander)


# ---- the caches ----------------------------------------------------------------------------------------


def test_disk_cache_then_memory(tiny_model, fresh_caches):
    from dashboard.views.atlas.compute import memory_store

    open_page(model=tiny_model)
    sentences = corpus()[:N_SMALL]
    path = cache_path(tiny_model, corpus_hash(sentences), fingerprint=files_fingerprint(tiny_model))
    assert path.is_file() and path.parent == cache_dir() and str(path).startswith(str(fresh_caches))
    memory_store.clear()
    at = open_page(model=tiny_model)
    assert "opened from the cache on disk" in caption_text(at)
    assert "test_progress_bars" not in at.session_state
    assert load_atlas(path, model=tiny_model, corpus=corpus_hash(sentences)) is not None


def test_damaged_cache_file_is_recomputed(tiny_model):
    from dashboard.views.atlas.compute import memory_store

    open_page(model=tiny_model)
    path = cache_path(tiny_model, corpus_hash(corpus()[:N_SMALL]), fingerprint=files_fingerprint(tiny_model))
    path.write_bytes(b"PK\x03\x04 broken")
    memory_store.clear()
    at = open_page(model=tiny_model)
    assert "computed now and saved" in caption_text(at) and len(chart_specs(at)) == 1


def test_unwritable_cache_folder_keeps_it_in_memory(tiny_model, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    at = open_page(model=tiny_model)
    assert "kept in memory only" in caption_text(at) and len(chart_specs(at)) == 1 and not at.error


# ---- the real bundled model on the whole corpus ------------------------------------------------------------


@pytest.mark.slow
def test_bundled_model_on_the_whole_corpus(fresh_caches):
    at = open_page(FULL_SCRIPT)
    assert not at.error, messages(at)
    rows = table(at)
    assert len(rows) == 72
    n = len(corpus())
    assert n >= 200 and f"{n} sentences" in caption_text(at)
    path = cache_path("bundled", corpus_hash(corpus()), fingerprint=files_fingerprint("bundled"))
    cached = load_atlas(path, model="bundled", corpus=corpus_hash(corpus()))
    assert cached is not None and cached.n_sentences == n
    for name in STATS:
        np.testing.assert_allclose(rows[name], cached.stat(name).ravel(), rtol=1e-6, err_msg=name)
    # layer 1, head 3 looks at the previous token almost always (checked against transformers in
    # tests/core/test_atlas.py); it is named so in the table and the role map
    assert rows["role"][2] == "previous token" and rows["to_prev"][2] > 0.95
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert np.asarray(spec["data"][0]["text"])[0, 2] == "prev."
    again = open_page(FULL_SCRIPT)
    assert "opened from memory" in caption_text(again)


def test_hosted_mode_bounds_new_sentences_a_minute(monkeypatch):
    from dataclasses import replace

    from dashboard import hosted

    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    monkeypatch.setattr(hosted, "HOSTED", replace(hosted.HOSTED, max_texts_per_minute=2))
    at = open_page(on="sentence", text="The first sentence.")
    assert len(chart_specs(at)) == 1 and not at.warning
    at.text_area(key="atlas_text").set_value("The second sentence.").run()
    assert len(chart_specs(at)) == 1 and not at.warning
    at.selectbox(key="atlas_stat").set_value("to_prev").run()  # the same sentence is not counted again
    assert len(chart_specs(at)) == 1 and not at.warning
    at.text_area(key="atlas_text").set_value("A third one, too soon.").run()
    assert_no_crash(at)
    assert not chart_specs(at) and "at most 2 new texts a minute" in at.warning[0].value


# ---- the review's fixes ----------------------------------------------------------------------------------


def test_model_retrained_in_place_gets_a_new_atlas(tmp_path):
    """A local folder overwritten with other weights: once its engine is loaded again (a restart),
    the page measures the new weights instead of opening the old atlas from the disk cache."""
    import os

    import torch
    from transformers import BertModel

    from dashboard.engines import cached_engine

    folder = make_tiny_bundled_tokenizer_bert(tmp_path / "retrained")
    model = str(folder)
    first = open_page(model=model)
    assert "computed now and saved" in caption_text(first)
    old_to_cls = np.array(table(first)["to_cls"])
    torch.manual_seed(1)  # "retrain": other weights, same architecture, same file names and size
    BertModel(BertModel.config_class.from_pretrained(folder)).eval().save_pretrained(
        folder, safe_serialization=True
    )
    weights = folder / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    from dashboard.views.atlas.compute import memory_store

    memory_store.clear()
    cached_engine.clear()  # what a restart does: the engine reads the new weights
    again = open_page(model=model)
    assert "computed now and saved" in caption_text(again), caption_text(again)
    expected = tiny_atlas(model)  # the new weights, measured independently of the page
    np.testing.assert_allclose(table(again)["to_cls"], expected.to_cls.ravel(), rtol=1e-6)
    assert not np.allclose(old_to_cls, expected.to_cls.ravel())
    assert len(list(cache_dir().glob("atlas-*.npz"))) == 2  # the old weights' atlas is another file


INTERRUPT_PRELUDE = SMALL_PRELUDE.replace(
    "    return _original_progress(*args, **kwargs)",
    """    bar = _original_progress(*args, **kwargs)
    if st.session_state.get("test_interrupt"):
        _update = bar.progress
        def _interrupted(value, text=None):
            if value >= 5 / 12:  # the bar's update after sentence 5: where a click would stop the run
                st.session_state["test_interrupt"] = False
                raise RuntimeError("interrupted, as by a rerun")
            return _update(value, text=text)
        bar.progress = _interrupted
    return bar""",
)


def test_interrupted_corpus_computation_resumes(tiny_model):
    at = AppTest.from_string(
        page_script("atlas", INTERRUPT_PRELUDE, SMALL_POSTLUDE), default_timeout=APPTEST_DEADLINE
    )
    at.query_params["model"] = tiny_model
    at.session_state["test_interrupt"] = True
    at.run()
    assert at.error and not chart_specs(at)  # the run stopped after 5 of the 12 sentences
    at.run()
    assert_no_crash(at)
    assert "resuming after sentence 5" in caption_text(at) and "computed now and saved" in caption_text(at)
    expected = tiny_atlas(tiny_model)
    assert f"{N_SMALL} sentences" in caption_text(at) and not at.error
    for name in STATS:  # the resumed atlas is the uninterrupted one
        np.testing.assert_allclose(table(at)[name], expected.stat(name).ravel(), rtol=1e-6, err_msg=name)
    from dashboard.views.atlas.compute import memory_store

    assert not memory_store().partials  # the partial sums are dropped once the atlas is whole


def test_role_filter_keeps_roles_the_model_lacks(tiny_model):
    """Roles chosen on one model survive a model without them and come back with the first model."""
    tiny_roles = set(head_roles(tiny_atlas(tiny_model)).ravel())
    assert "previous token" not in tiny_roles  # a random 2 x 2 model has no previous-token head
    at = AppTest.from_string(SMALL_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.session_state["explore_model"] = tiny_model  # so the picker offers it
    at.query_params["model"] = "bundled"
    at.run()
    at.button_group(key="atlas_roles_pills").set_value(["prev"]).run()
    assert set(table(at)["role"]) == {"previous token"}
    at.selectbox(key="atlas_model").set_value(tiny_model).run()
    assert_no_crash(at)
    pills = at.button_group(key="atlas_roles_pills")
    assert not any(o.startswith("previous token") for o in pills.options)
    assert at.session_state["atlas_roles"] == ["prev"] and at.query_params["roles"] == "prev"
    assert "no head of this model has the role: previous token" in caption_text(at)
    assert len(table(at)) == 4  # nothing of the filter applies here: every head
    at.selectbox(key="atlas_model").set_value("bundled").run()
    assert at.button_group(key="atlas_roles_pills").value == ["prev"]
    assert set(table(at)["role"]) == {"previous token"}
    at.button_group(key="atlas_roles_pills").set_value(["prev", "broad"]).run()
    at.selectbox(key="atlas_model").set_value(tiny_model).run()
    assert at.session_state["atlas_roles"] == ["prev", "broad"]


def test_sentence_of_invisible_characters_is_refused_on_the_torch_engine(tiny_model):
    """The torch engine measures [CLS] [SEP] alone where the NumPy one raises: said, not measured."""
    pytest.importorskip("torch")
    at = open_page(model=tiny_model, engine="torch", on="sentence", text="\u200b\u200d\ufeff")
    assert "finds no words" in " ".join(messages(at)), messages(at)
    assert not chart_specs(at) and not at.error


def test_printed_numbers_never_contradict_the_role():
    from dashboard.content.atlas import STAT_TEXT, printed, printed_text
    from dashboard.views.atlas.widgets import _hover, head_table

    values = {"to_cls": np.array([[0.4997, ROLE_SHARE, 0.4994, 0.61234]])}
    stats = {name: values.get(name, np.zeros((1, 4))) for name in STATS}
    stats["entropy_norm"] = np.array([[0.79996, 0.8, 0.1, 0.1]])
    atlas = HeadAtlas(**stats, n_sentences=1, n_rows=4, model="m", corpus_hash="c")
    roles = head_roles(atlas)
    assert list(roles[0]) == ["mixed", "[CLS] sink", "mixed", "[CLS] sink"]
    assert list(printed_text("to_cls", atlas.to_cls)[0]) == ["0.499", "0.500", "0.499", "0.612"]
    assert list(printed_text("entropy_norm", atlas.entropy_norm)[0]) == ["0.799", "0.800", "0.100", "0.100"]
    assert printed("distance", 0.4997) == 0.4997  # no threshold: printed as it is
    hover = _hover(atlas, roles)
    assert "→ [CLS]: 0.499<br>" in hover[0] and "· mixed" in hover[0] and "spread: 0.799" in hover[0]
    rows = head_table(atlas, roles, "m", "numpy", None)
    fmt = STAT_TEXT["to_cls"].fmt  # the table's column format
    assert [fmt % v for v in rows["to_cls"]] == ["0.499", "0.500", "0.499", "0.612"]


def test_grids_draw_the_cells_they_are_given():
    from dashboard.charts.atlas import role_grid, stat_grid

    shown = np.array([[True, False]])
    fig = stat_grid(
        np.array([[0.25, 0.5]]), shown, ["a", "b"], title="t", cells=np.array([["x", "y"]]), share=True
    )
    assert list(fig.data[0].text[0]) == ["x", ""] and list(fig.data[1].text[0]) == ["", "y"]  # y greyed
    assert fig.data[0].showscale is not False and (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)
    roles = np.array([["mixed", "broad"]], dtype=object)
    fig = role_grid(
        roles,
        shown,
        ["a", "b"],
        order=("broad", "mixed"),
        cells={"broad": "B", "mixed": "M"},
        colors={"broad": "#0f0", "mixed": "#ccc"},
        title="t",
    )
    assert fig.data[0].showscale is False and list(fig.data[0].text[0]) == ["M", ""]
