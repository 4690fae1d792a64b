"""AppTest of the explore page, offline (HF_HUB_OFFLINE=1 from conftest): every view and toggle, the
URL round trip, the examples, the one-click head openers, and every bad model input."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.io
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.charts.explore import head_heatmap, unique_labels
from dashboard.charts.lines import lines_figure, select_lines
from dashboard.charts.thumbnails import model_grid_figure, thumbnail_geometry, thumbnail_grid_png
from dashboard.content.explore import EXAMPLES
from dashboard.widgets import md
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_bert import make_tiny_bert


def shown_result(at):
    """The result the explore page is showing (the shared cache holds it; the session, its key)."""
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def _explore_page():
    from dashboard.views import explore

    explore.render()


def open_page(**params) -> AppTest:
    at = AppTest.from_function(_explore_page, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({k: str(v) for k, v in params.items()})
    return at.run()


def charts(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [(spec["layout"].get("title") or {}).get("text", "") for spec in charts(at)]


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def assert_healthy(at: AppTest, min_charts: int = 1) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) >= min_charts


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("page_tiny"), hidden_size=16, num_heads=2, num_layers=2)


@pytest.fixture(scope="module")
def seq2seq_dir(tmp_path_factory):
    """An encoder-decoder's config (T5): refused by architecture, before any weights are read."""
    path = tmp_path_factory.mktemp("t5")
    (path / "config.json").write_text(json.dumps({"model_type": "t5", "is_encoder_decoder": True}))
    return path


@pytest.fixture(scope="module")
def pickle_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("pickled")
    (path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    (path / "pytorch_model.bin").write_bytes(b"\x80\x04")
    return path


def test_default_view_opens_the_head_linking_it_to_trophy():
    at = open_page()
    assert_healthy(at)
    assert not at.error
    assert at.session_state["explore_text"] == EXAMPLES["trophy-large"].text
    assert at.segmented_control(key="explore_view").value == "head"
    spec = charts(at)[0]
    assert spec["data"][0]["type"] == "heatmap"
    assert "from (query)" in spec["data"][0]["hovertemplate"] and "weight" in spec["data"][0]["hovertemplate"]
    assert spec["layout"]["shapes"], "the it → trophy cell is outlined"
    # the URL says what is shown, 0-indexed
    params = at.query_params
    assert params["example"] == "trophy-large" and params["view"] == "head"
    assert params["focus"] == "it" and params["target"] == "trophy"  # words, not positions
    assert int(params["layer"]) == at.session_state["explore_layer"]


def test_every_view_and_toggle_renders():
    at = open_page()
    for view, n_charts in (("lines", 1), ("model", 1), ("focus", 2), ("head", 1)):
        at.segmented_control(key="explore_view").set_value(view).run()
        assert_healthy(at, n_charts)
        for merge, hide in ((True, False), (True, True), (False, True), (False, False)):
            at.toggle(key="explore_merge").set_value(merge)
            at.toggle(key="explore_hide").set_value(hide).run()
            assert_healthy(at, n_charts)
            assert not at.error
            if view in ("head", "lines"):
                title = titles(at)[0]
                assert ("renormalised" in title) == hide and ("merged" in title) == merge


def test_model_view_is_one_image_and_opens_a_head():
    at = open_page(view="model")
    assert_healthy(at)
    spec = charts(at)[0]
    assert spec["data"][0]["type"] == "image" and spec["data"][0]["source"].startswith(
        "data:image/png;base64,"
    )
    assert len(json.dumps(spec)) < 300_000
    layer_box = next(s for s in at.selectbox if s.key.startswith("explore_w_model_layer_"))
    head_box = next(s for s in at.selectbox if s.key.startswith("explore_w_model_head_"))
    layer_box.set_value(1)
    head_box.set_value(4)
    at.run()
    at.button(key="explore_open_head").click().run()
    assert_healthy(at)
    assert at.segmented_control(key="explore_view").value == "head"
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (1, 4)
    assert titles(at)[0].startswith("Layer 2, head 5")


def test_find_the_head_ranks_and_opens_the_top_head():
    at = open_page(view="focus")
    assert_healthy(at, 2)
    assert any("Find the head" in m.value for m in at.markdown)
    label = at.button(key="explore_top_2").label  # "2. layer 5, head 4: 0.45"
    layer, head = (int(n) for n in re.match(r"2\. layer (\d+), head (\d+):", label).groups())
    at.button(key="explore_top_2").click().run()
    assert_healthy(at)
    assert at.segmented_control(key="explore_view").value == "head"
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (layer - 1, head - 1)
    assert titles(at)[0].startswith(f"Layer {layer}, head {head}")


def test_lines_view_token_direction_threshold_and_all_heads():
    at = open_page(view="lines", example="cat-mat")
    assert_healthy(at)
    token_box = next(s for s in at.selectbox if s.key.startswith("explore_w_lines_token_"))
    token_box.set_value(2).run()
    at.radio(key="explore_lines_direction").set_value("to").run()
    at.toggle(key="explore_lines_all_heads").set_value(True).run()
    at.slider(key="explore_lines_min_short").set_value(0.2).run()
    assert_healthy(at)
    spec = charts(at)[0]
    assert {t.get("visible", True) for t in spec["data"] if t.get("mode") == "lines"} == {True}


def test_query_params_restore_the_state():
    params = {"text": "The cat sat on the mat.", "view": "lines", "layer": "2", "merge": "1", "hide": "1"}
    at = open_page(**params)
    assert_healthy(at)
    assert at.text_area(key="explore_text").value == "The cat sat on the mat."
    assert at.segmented_control(key="explore_view").value == "lines"
    assert at.toggle(key="explore_merge").value and at.toggle(key="explore_hide").value
    assert at.session_state["explore_layer"] == 2
    assert titles(at)[0].startswith("Layer 3")
    for name, value in params.items():
        assert at.query_params[name] == value


def test_an_example_link_preselects_its_tokens():
    at = open_page(example="bank-river", view="focus")
    assert_healthy(at, 2)
    assert at.text_area(key="explore_text").value == EXAMPLES["bank-river"].text
    focus = next(s for s in at.selectbox if s.key.startswith("explore_w_focus_"))
    target = next(s for s in at.selectbox if s.key.startswith("explore_w_target_"))
    tokens = shown_result(at).tokens
    assert tokens[focus.value] == "bank" and tokens[target.value] == "river"


def test_choosing_an_example_changes_text_and_tokens():
    at = open_page(view="focus")
    at.pills(key="explore_example").set_value("love-nlp").run()
    assert_healthy(at, 2)
    assert at.text_area(key="explore_text").value == "I love NLP"
    assert any("nl + ##p" in c.value for c in at.caption)
    at.text_area(key="explore_text").input("A sentence of my own.").run()
    assert_healthy(at, 2)
    assert at.pills(key="explore_example").value is None
    assert at.query_params["text"] == "A sentence of my own." and "example" not in at.query_params


def test_bad_url_values_fall_back_with_a_note():
    at = open_page(view="bogus", layer="x", example="nope", head="77")
    assert_healthy(at)
    assert len(at.info) >= 3
    assert at.segmented_control(key="explore_view").value == "head"


def test_long_text_is_truncated_with_a_notice():
    at = open_page(text="word " * 600, view="model")
    assert_healthy(at)
    assert any("512" in w.value and "602" in w.value for w in at.warning)


def test_empty_text_asks_for_a_sentence():
    at = open_page()
    at.text_area(key="explore_text").input("").run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)


def load_other(at: AppTest, choice: str) -> AppTest:
    at.selectbox(key="explore_model_choice").set_value("__other__").run()
    at.text_input(key="explore_model_custom").input(choice)
    next(b for b in at.button if b.label == "Load").click().run()
    return at


@pytest.mark.parametrize(
    ("choice", "says"),
    [
        ("../etc", "“..”"),
        ("https://huggingface.co/bert-base-uncased", "web addresses"),
        ("/no/such/folder", "does not exist"),
        ("nobody-here/no-such-model", "cannot reach the Hugging Face Hub"),
        ("**bold** [x](javascript:alert(1))", "neither a Hub id"),
    ],
)
def test_bad_model_input_shows_an_error_and_keeps_the_model(choice, says):
    at = load_other(open_page(), choice)
    assert_healthy(at)
    assert len(at.error) == 1
    shown = unescape(at.error[0].value)
    assert says in shown and "Still showing all-MiniLM" in shown
    assert "**bold**" not in at.error[0].value  # user text is escaped, never rendered as markdown
    at.segmented_control(key="explore_view").set_value("focus").run()
    assert_healthy(at, 2)


def test_other_architectures_and_pickled_and_file_paths_are_refused(seq2seq_dir, pickle_dir, tmp_path):
    afile = tmp_path / "model.txt"
    afile.write_text("x")
    at = open_page()
    for choice, says in (
        (seq2seq_dir, "an encoder-decoder"),
        (pickle_dir, "safetensors"),
        (afile, "not a directory"),
    ):
        load_other(at, str(choice))
        assert_healthy(at)
        assert any(says in unescape(e.value) for e in at.error), [e.value for e in at.error]


def test_curated_hub_model_offline_keeps_the_bundled_one():
    at = open_page()
    at.selectbox(key="explore_model_choice").set_value("bert-base-uncased").run()
    assert_healthy(at)
    assert any("cannot reach the Hugging Face Hub" in unescape(e.value) for e in at.error)
    assert "model" not in at.query_params  # the URL names the model actually shown


def test_a_local_model_loads_through_the_page_and_the_url(tiny_dir):
    at = load_other(open_page(), str(tiny_dir))
    assert_healthy(at)
    assert not at.error
    assert any("2 layers × 2 heads" in c.value for c in at.sidebar.caption)
    assert at.query_params["model"] == str(tiny_dir)
    again = open_page(model=str(tiny_dir), view="model")
    assert_healthy(again)
    assert not again.error


def test_md_escapes_markdown():
    assert md("**x** [a](b) `c` $d$ :smile:") == r"\*\*x\*\* \[a\]\(b\) \`c\` \$d\$ \:smile\:"


def test_damaged_bundled_weights_are_reported_in_the_page(monkeypatch):
    from core.models import bundled
    from core.models.errors import ModelFilesError
    from dashboard import engines

    def damaged(model_dir, expected=bundled.BUNDLED_SHA256):
        raise ModelFilesError("the bundled weights file has sha256 0000…, expected 53aa…; it may be damaged")

    # a fresh process as far as the check is concerned: nothing verified or loaded yet
    monkeypatch.setattr(bundled, "_VERIFIED_BUNDLED", set())
    monkeypatch.setattr(bundled, "verify_bundled", damaged)
    monkeypatch.setattr(engines, "_LOADED", set())
    at = open_page()
    assert not at.exception
    assert any("may be damaged" in unescape(e.value) for e in at.error)
    assert any("No model is available" in i.value for i in at.info)


# ---- the figure builders, alone ------------------------------------------------------------------


def softmax_rows(shape, seed=0):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(shape, dtype=np.float32)
    e *= 3.0
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def test_token_labels_are_shown_literally():
    fig = head_heatmap(np.eye(3, dtype=np.float32), ["<b>x</b>", "%{y}", "the"])
    assert list(fig.data[0].x) == ["&lt;b&gt;x&lt;/b&gt;", "&#37;{y}", "the"]
    assert unique_labels(["the", "cat", "the"]) == ["the", "cat", "the (2)"]


def test_lines_keep_the_strongest_per_token():
    w = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.6, 0.35, 0.05]], dtype=np.float32)
    rows, cols, vals = select_lines(w, top_k=1)
    assert list(zip(rows, cols, strict=True)) == [(0, 0), (1, 2), (2, 0)]
    assert vals.tolist() == pytest.approx([0.5, 0.8, 0.6])
    rows, cols, _ = select_lines(w, min_weight=0.3)
    assert len(rows) == 5
    rows, cols, _ = select_lines(w, token=1, direction="to")
    assert set(cols) == {1} and len(rows) == 3
    fig = lines_figure(np.stack([w, w]), ["a", "b", "c"], shown_heads=[1])
    legend = [t for t in fig.data if t.showlegend]
    assert [t.name for t in legend] == ["head 1", "head 2"]
    assert legend[0].visible == "legendonly" and legend[1].visible is True


@pytest.mark.parametrize(("tokens", "budget"), [(128, 1.5e6), (512, 5e6)])
def test_model_view_payload_fits_the_budget_for_12_by_12_heads(tokens, budget):
    """Issue 3 §3: at most 1.5 MB at 128 tokens and 5 MB at 512 for a 12 × 12-head model. Random
    attention is the worst case for PNG compression; real maps compress better."""
    attn = softmax_rows((12, 12, tokens, tokens))
    png, cell, gap = thumbnail_grid_png(attn)
    hover = [f"<b>layer {i // 12 + 1}, head {i % 12 + 1}</b><br>on [CLS]/[SEP]: 45%" * 3 for i in range(144)]
    size = len(plotly.io.to_json(model_grid_figure(png, 12, 12, cell, gap, hover=hover), validate=False))
    assert size < budget / 2
    assert cell <= 96


def test_thumbnail_geometry():
    assert thumbnail_geometry(5) == (1, 10)
    assert thumbnail_geometry(64) == (1, 1)
    assert thumbnail_geometry(128) == (2, 1)
    assert thumbnail_geometry(512) == (6, 1)
