"""AppTest of the neuron view under explore's head map (where one weight comes from): the default
cell, the pickers, the numbers against the result the page shows, the link to the learn page, the
click targets on the map, merged words, the page without torch, and an engine without per-head
weights. A click on the map itself is tested in a real browser (tests/e2e/test_neuron_browser.py)."""

from __future__ import annotations

import json
import re
import sys
from urllib.parse import parse_qs, quote, urlparse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.models import ModelError
from dashboard.views.explore.neuron import OPEN_KEY
from tests.dashboard.harness import NAMED_TEXTS, assert_no_crash, messages, plotly_array, utf8_safe

TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


def _explore_page():
    from dashboard.views import explore

    explore.render()


def open_neuron(**params) -> AppTest:
    """The explore page's head view with the neuron section open (as after a click on the map)."""
    at = AppTest.from_function(_explore_page, default_timeout=120)
    at.query_params.update({k: str(v) for k, v in params.items()})
    at.session_state[OPEN_KEY] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_result(at):
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def pickers(at: AppTest):
    """The query (i) and key (j) token pickers."""
    boxes = {box.key.split("_")[2]: box for box in at.selectbox if box.key.startswith("explore_neuron_")}
    return boxes["i"], boxes["j"]


def engine_line(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("The engine's weight"))


def shown_weight(at: AppTest) -> tuple[str, str]:
    """(the recomputed weight at the end of step 5's formula, the engine's weight beside it)."""
    softmax = at.latex[-1].value.strip().strip("$").strip()
    recomputed = re.search(r"= (\(?-?[0-9.]+\)?)$", softmax).group(1)
    engine = re.search(r"\*\*([0-9.]+)\*\*", engine_line(at)).group(1)
    return recomputed, engine


def learn_url(at: AppTest) -> str:
    line = next(m.value for m in at.markdown if m.value.startswith("Every step of this layer"))
    return re.search(r"\]\((learn\?[^)]*)\)", line).group(1)


def head_chart_spec(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_the_trophy_example_opens_on_it_to_trophy_with_the_engines_weight():
    at = open_neuron()
    result = shown_result(at)
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    i, j = pickers(at)
    assert (i.value, j.value) == (result.tokens.index("it"), result.tokens.index("trophy"))
    assert i.format_func(i.value) == f"it  (#{i.value + 1})"  # positions shown from 1
    label = next(e.label for e in at.expander if e.label.startswith("Where this weight"))
    assert label == f"Where this weight comes from (layer {layer + 1}, head {head + 1}: “it” → “trophy”)"
    expected = f"{result.attentions[layer, head, i.value, j.value]:.4f}"
    assert shown_weight(at) == (expected, expected)
    assert "✓" in engine_line(at)
    # steps 2 to 5, numbered as on the learn page, with the formulas' numbers
    steps = [m.value for m in at.markdown if re.match(r"\*\*[2-5] · ", m.value)]
    assert [s[2] for s in steps] == ["2", "3", "4", "5"]
    assert len(at.latex) == 4 and "d_k = 32" in at.latex[0].value
    assert "5.6569" in at.latex[2].value  # √32
    # the section's two charts below the head map: q, k and q × k; the row before and after softmax
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(specs) == 3 and specs[1]["data"][1]["type"] == "bar" and len(specs[2]["data"]) == 2


def test_the_section_computes_nothing_while_closed(monkeypatch):
    from core import neuron as core_neuron
    from dashboard.views.explore import neuron

    calls = []
    monkeypatch.setattr(
        neuron, "cell_arithmetic", lambda *a, **k: calls.append(a) or core_neuron.cell_arithmetic(*a, **k)
    )
    at = AppTest.from_function(_explore_page, default_timeout=120).run()
    assert not at.exception
    assert any(e.label.startswith("Where this weight comes from") for e in at.expander)
    assert calls == [] and len(at.get("plotly_chart")) == 1
    at.session_state[OPEN_KEY] = True
    at.run()
    assert len(calls) == 1 and len(at.get("plotly_chart")) == 3


def test_pickers_change_the_cell_and_the_map_marks_it():
    at = open_neuron()
    result = shown_result(at)
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    suitcase = result.tokens.index("suitcase")
    i, _ = pickers(at)
    i.set_value(suitcase).run()
    assert not at.exception
    i, j = pickers(at)
    assert (i.value, j.value) == (suitcase, result.tokens.index("trophy"))
    assert at.session_state["explore_focus"] == "suitcase" and at.session_state["explore_target"] == "trophy"
    expected = f"{result.attentions[layer, head, suitcase, j.value]:.4f}"
    assert shown_weight(at) == (expected, expected)
    shape = head_chart_spec(at)["layout"]["shapes"][0]  # the red box: row = query, column = key
    assert (shape["y0"] + 0.5, shape["x0"] + 0.5) == (suitcase, j.value)
    # the key picker: [SEP], the last token
    j.set_value(result.n_tokens - 1).run()
    i, j = pickers(at)
    assert (i.value, j.value) == (suitcase, result.n_tokens - 1)
    expected = f"{result.attentions[layer, head, suitcase, result.n_tokens - 1]:.4f}"
    assert shown_weight(at) == (expected, expected)
    assert at.query_params["target"] == "[SEP]"  # the link names the cell


def test_a_typed_sentence_starts_on_its_first_word_and_largest_weight():
    at = open_neuron(text="Cats chase mice at night.", layer=2, head=4)
    result = shown_result(at)
    i, j = pickers(at)
    assert i.value == 1 and result.tokens[1] == "cats"
    assert j.value == int(np.argmax(result.attentions[2, 4, 1]))
    assert at.session_state["explore_focus"] is None  # a default, not a choice: no box on the map
    assert any(c.value.startswith("No pair is chosen yet") for c in at.caption)
    assert not head_chart_spec(at)["layout"].get("shapes")


def test_the_link_to_learn_carries_layer_head_step_and_encoded_text():
    text = 'A & B (c) [d] #e "f" <b>x</b> 50% ok?'
    at = open_neuron(text=text, layer=3, head=7)
    url = learn_url(at)
    assert url.startswith(f"learn?example=bert&text={quote(text, safe='')}&")
    for raw in ("(", ")", "[", "]", "<", '"', " ", "#"):
        assert raw not in url, raw
    params = parse_qs(urlparse(url).query)
    assert params["text"] == [text] and params["layer"] == ["3"] and params["head"] == ["7"]
    assert params["step"] == ["3"] and params["example"] == ["bert"]


def test_the_map_cells_are_click_targets():
    at = open_neuron()
    spec = head_chart_spec(at)
    heatmap, points = spec["data"]
    w = len(heatmap["x"])
    assert heatmap["type"] == "heatmap" and "weight" in heatmap["hovertemplate"]
    customdata = plotly_array(points["customdata"])  # (W², 3): row, column, the map's value
    assert points["type"] == "scatter" and customdata.shape == (w * w, 3)
    result = shown_result(at)
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    row, col, value = customdata[5 * w + 2]  # row 5, column 2
    assert (row, col) == (5, 2) and abs(value - result.attentions[layer, head, 5, 2]) < 1e-6
    assert (points["y"][5 * w + 2], points["x"][5 * w + 2]) == (heatmap["y"][5], heatmap["x"][2])
    assert "weight" in points["hovertemplate"] and spec["layout"]["clickmode"] == "event+select"
    assert at.get("plotly_chart")[0].proto.selection_mode == [0]  # points


def test_merged_words_say_so_and_work_on_word_pieces():
    text = "Tokenization of unaffable words."
    at = open_neuron(text=text, merge=1)
    result = shown_result(at)
    assert len(result.tokens) > len(text.split()) + 2  # there are word pieces to merge
    note = next(c.value for c in at.caption if "word pieces, with" in c.value)
    assert "merges word pieces" in note
    i, j = pickers(at)
    assert len(i.options) == result.n_tokens  # every token, not the merged words
    piece = next(t for t, tok in enumerate(result.tokens) if tok.startswith("##"))
    j.set_value(piece).run()
    i, j = pickers(at)
    assert j.value == piece
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    expected = f"{result.attentions[layer, head, i.value, piece]:.4f}"
    assert shown_weight(at) == (expected, expected)
    assert "~" in at.session_state["explore_target"]  # a word's later piece, named as such
    assert not at.error


def test_hidden_specials_say_the_cell_is_off_the_map():
    at = open_neuron(hide=1)
    result = shown_result(at)
    _, j = pickers(at)
    j.set_value(0).run()  # [CLS]
    note = next(c.value for c in at.caption if "word pieces, with" in c.value)
    assert "hides" in note and "not on the map" in note
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    i, _ = pickers(at)
    expected = f"{result.attentions[layer, head, i.value, 0]:.4f}"
    assert shown_weight(at) == (expected, expected)


def test_without_torch_the_numpy_engine_shows_it(monkeypatch):
    from dashboard import engines

    monkeypatch.setattr(engines, "torch_installed", lambda: False)
    for name in ("torch", "transformers"):  # any attempt to import them now fails
        monkeypatch.setitem(sys.modules, name, None)
    at = open_neuron()
    assert not at.error and at.session_state["explore_engine"] == "numpy"
    recomputed, engine = shown_weight(at)
    assert recomputed == engine


def test_an_engine_without_per_head_weights_says_why(monkeypatch):
    from core.bert import BertNumpy

    def refuse(self, layer):
        raise ModelError("this model's attention is not laid out like BERT's")

    monkeypatch.setattr(BertNumpy, "layer_weights", refuse)
    at = open_neuron()
    assert any("not laid out like BERT" in i.value for i in at.info)
    assert not at.error and not at.exception
    assert len(at.get("plotly_chart")) == 1  # the head map stays


def test_a_long_map_takes_no_clicks_and_says_to_pick():
    text = " ".join(["word"] * 70)  # 72 tokens: more cells than the map's click points allow
    at = open_neuron(text=text)
    spec = head_chart_spec(at)
    assert [trace["type"] for trace in spec["data"]] == ["heatmap"]
    assert any("takes no clicks" in m.value for m in at.markdown)
    result = shown_result(at)
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    i, j = pickers(at)
    expected = f"{result.attentions[layer, head, i.value, j.value]:.4f}"
    assert shown_weight(at) == (expected, expected)


def test_a_recomputed_weight_off_the_engines_gets_no_check_mark(monkeypatch):
    """The check mark compares the two numbers: a recomputation 0.002 off is shown as off."""
    import dataclasses

    from core import neuron as core_neuron
    from dashboard.views.explore import neuron

    def off(*args, **kwargs):
        cell = core_neuron.cell_arithmetic(*args, **kwargs)
        return dataclasses.replace(cell, weight=cell.weight + 0.002)

    monkeypatch.setattr(neuron, "cell_arithmetic", off)
    at = open_neuron()
    line = engine_line(at)
    assert "✓" not in line and "2.0e-03 away" in line


ODD_TEXTS = {
    name: text
    for name, text in NAMED_TEXTS.items()
    if utf8_safe(text) and len(text) <= 10_000  # a link carries UTF-8; the 1 MB ones take minutes here
}


@pytest.mark.parametrize("name", list(ODD_TEXTS))
def test_odd_text_with_the_section_open(name):
    """Every kind of bad text the other pages are fuzzed with, with the section open: no crash, and
    where the page shows a map, the section shows the engine's weight; token text is escaped."""
    at = open_neuron(text=ODD_TEXTS[name])
    assert_no_crash(at, name)
    assert not any("Could not recompute" in m for m in messages(at)), name
    if not at.get("plotly_chart"):
        return  # the page said why there is nothing to show (empty text, no tokens)
    recomputed, engine = shown_weight(at)
    assert recomputed == engine, name
    label = next(e.label for e in at.expander if e.label.startswith("Where this weight"))
    assert not re.search(r"(?<!\\)[*_`<>\[\]$]", label.split(":", 1)[1]), label  # all escaped


def test_the_torch_engine_shows_its_own_weight():
    """On the PyTorch reference engine the arithmetic runs on its input and weights (layer_weights,
    transposed from torch's Linear) and agrees with its attentions to the printed digits."""
    at = open_neuron(engine="torch")
    result = shown_result(at)
    assert result.engine == "torch" and at.session_state["explore_result_key"][1] == "torch"
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    i, j = pickers(at)
    expected = f"{result.attentions[layer, head, i.value, j.value]:.4f}"
    assert shown_weight(at) == (expected, expected) and "✓" in engine_line(at)
