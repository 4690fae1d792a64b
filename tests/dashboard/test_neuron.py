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

from core.models.errors import ModelError
from dashboard.views.explore.neuron import OPEN_KEY
from tests.dashboard.harness import NAMED_TEXTS, assert_no_crash, messages, plotly_array, utf8_safe
from tests.deadline import APPTEST_DEADLINE

TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


def _explore_page():
    from dashboard.views import explore

    explore.render()


def open_neuron(**params) -> AppTest:
    """The explore page's head view with the neuron section open (as after a click on the map)."""
    at = AppTest.from_function(_explore_page, default_timeout=APPTEST_DEADLINE)
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
    from core.measures import neuron as core_neuron
    from dashboard.views.explore import neuron

    calls = []
    monkeypatch.setattr(
        neuron, "cell_arithmetic", lambda *a, **k: calls.append(a) or core_neuron.cell_arithmetic(*a, **k)
    )
    at = AppTest.from_function(_explore_page, default_timeout=APPTEST_DEADLINE).run()
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
    note = next(c.value for c in at.caption if "every piece apart, with" in c.value)
    assert "merges pieces into words" in note
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
    note = next(c.value for c in at.caption if "every piece apart, with" in c.value)
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
    from core.models.bert import BertNumpy

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

    from core.measures import neuron as core_neuron
    from dashboard.views.explore import neuron

    def off(*args, **kwargs):
        cell = core_neuron.cell_arithmetic(*args, **kwargs)
        return dataclasses.replace(cell, weight=cell.weight + 0.002)

    monkeypatch.setattr(neuron, "cell_arithmetic", off)
    at = open_neuron()
    line = engine_line(at)
    assert "✓" not in line and "2.0e-03 away" in line
    # far above float rounding: said plainly, not blamed on rounding
    assert "does not reproduce this model's attention" in line and "rounding" not in line
    assert "relative-position scores" in line


def test_a_gap_within_float_rounding_is_called_rounding(monkeypatch):
    """A recomputed weight a few 1e-5 off, across a rounding boundary of the 4th decimal."""
    import dataclasses

    from core.measures import neuron as core_neuron
    from dashboard.views.explore import neuron

    def near(*args, **kwargs):
        cell = core_neuron.cell_arithmetic(*args, **kwargs)
        r = round(cell.weight, 4)  # move just past the nearer boundary r ± 0.00005
        weight = r + 0.000055 if cell.weight > r else r - 0.000055
        return dataclasses.replace(cell, weight=weight)

    monkeypatch.setattr(neuron, "cell_arithmetic", near)
    at = open_neuron()
    line = engine_line(at)
    assert "✓" not in line and "(float rounding between engines)" in line
    assert "does not reproduce" not in line
    gap = float(re.search(r"([0-9.]+e-0[0-9]) away", line).group(1))
    assert 0 < gap <= 1e-4


def test_a_relative_position_model_is_named_before_the_steps(monkeypatch):
    """A torch model whose config says position_embedding_type relative_key: the section says up front
    that q · k alone leaves out its relative-position scores, and a gap is put down to them."""
    import dataclasses

    from core.measures import neuron as core_neuron
    from core.models.registry import BUNDLED_KEY
    from dashboard.engines import load_engine
    from dashboard.views.explore import neuron

    config = load_engine(BUNDLED_KEY, "torch").model.config  # the cached engine the page uses
    monkeypatch.setattr(config, "position_embedding_type", "relative_key_query", raising=False)
    at = open_neuron(engine="torch")
    note = next(i.value for i in at.info if "position_embedding_type" in i.value)
    assert "relative\\_key\\_query" in note and "relative-position scores" in note
    # transformers 5 computes BERT's attention from q · k alone: the two still agree here
    assert "✓" in engine_line(at)

    def off(*args, **kwargs):
        cell = core_neuron.cell_arithmetic(*args, **kwargs)
        return dataclasses.replace(cell, weight=cell.weight + 0.03)

    monkeypatch.setattr(neuron, "cell_arithmetic", off)
    at = open_neuron(engine="torch")
    line = engine_line(at)
    assert "does not reproduce this model's attention" in line and "relative\\_key\\_query" in line


def _head_norm_row(at, layer, head, i):
    """Query i's row of ‖α_im f_h(x_m)‖ and ‖f_h(x_j)‖, with f_h computed here head by head from the
    engine's weights (an explicit slice of W_V and W_O, not core.measures.flow)."""
    from dashboard.engines import load_engine

    result = shown_result(at)
    key, engine = at.session_state["explore_result_key"][:2]
    w = load_engine(key, engine).layer_weights(layer)
    cols = slice(head * w.d_k, (head + 1) * w.d_k)
    x = result.hidden_states[layer].astype(np.float64)
    f = (x @ w.w_v[:, cols].astype(np.float64) + w.b_v[cols]) @ w.w_o[cols].astype(np.float64)  # (T, D)
    lengths = np.sqrt((f**2).sum(axis=1))
    return result.attentions[layer, head, i].astype(np.float64) * lengths, lengths


def norm_line(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**The map's norm**"))


@pytest.mark.parametrize("rescale", [False, True])
def test_with_norms_on_the_map_the_section_explains_alpha_and_the_norm(rescale):
    params = {"measure": "norms", **({"rescale": 1} if rescale else {})}
    at = open_neuron(**params)
    result = shown_result(at)
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    i, j = pickers(at)
    i, j = i.value, j.value
    alpha = result.attentions[layer, head, i, j]
    # the weight is called the head's weight α, not the map's cell
    line = engine_line(at)
    assert "(the map above)" not in line and "hover the map for its norm" in line and "✓" in line
    assert next(m.value for m in at.markdown if "computed again" in m.value).startswith(
        "The map above shows norms ‖α f(x)‖; here is the head's weight α behind its row “it”"
    )
    assert shown_weight(at) == (f"{alpha:.4f}",) * 2
    # the norm line: α × ‖f_h(x_j)‖ = the map's cell, with the numbers
    row, lengths = _head_norm_row(at, layer, head, i)
    line = norm_line(at)
    numbers = re.search(r"= ([0-9.]+) \\times ([0-9.]+) = ([0-9.]+)\$(?:.*= ([0-9.]+)\$)?", line).groups()
    assert numbers[:3] == (f"{alpha:.4f}", f"{lengths[j]:.4f}", f"{row[j]:.4f}")
    spec = head_chart_spec(at)
    cell = float(plotly_array(spec["data"][0]["z"])[i][j])  # the map's own value
    if rescale:
        expected = row[j] / row.sum()
        assert f"{row.sum():.4f}" in line and numbers[3] == f"{expected:.4f}"
        assert abs(cell - expected) < 1e-4 and abs(cell - 0.0) > 1e-3
    else:
        assert numbers[3] is None and "rescaled" not in line
        assert abs(cell - row[j]) < 1e-3 * max(1.0, row[j])
    # the click hover says what a click explains on a map of norms
    assert "the weight α behind this norm" in spec["data"][1]["hovertemplate"]
    assert "where this weight comes from" not in spec["data"][1]["hovertemplate"]


def test_with_weights_on_the_map_there_is_no_norm_line():
    at = open_neuron()
    assert "(the map above)" in engine_line(at)
    assert not any(m.value.startswith("**The map's norm**") for m in at.markdown)
    assert "click: where this weight comes from" in head_chart_spec(at)["data"][1]["hovertemplate"]


def test_one_learn_url_for_the_page_and_the_neuron_view():
    """links.learn_url: the explore page's link (text only) and the neuron view's (layer, head, step),
    as they were written before; the text cut to the learn page's 2000 characters."""
    from dashboard.views.explore.links import LEARN_TEXT_CHARS, learn_url

    text = 'A & B (c) [d] #e "f" <b>x</b> 50% ok?'
    assert learn_url(text) == f"learn?example=bert&text={quote(text, safe='')}"
    assert learn_url(text, 3, 7, 3) == f"learn?example=bert&text={quote(text, safe='')}&layer=3&head=7&step=3"
    assert learn_url(text, 0, 0, 3).endswith("&layer=0&head=0&step=3")  # layer 0 is not "no layer"
    long = "ab " * 1000
    assert learn_url(long) == f"learn?example=bert&text={quote(long[:LEARN_TEXT_CHARS], safe='')}"
    assert LEARN_TEXT_CHARS == 2000


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
