"""AppTest of the explore page's norms (head view) and rollout view, offline: the numbers drawn equal
an explicit recomputation from the engine's own weights and result (the norms themselves are
checked against transformers in tests/core/test_flow.py), the toggles (rescale, merge, hide), the
rollout layer and row pickers, the URL round trip of measure / rescale, an engine that cannot give
each head's weights, and the page without torch."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.models.errors import ModelError
from dashboard.content import explore as content
from tests.dashboard.harness import chart_specs, plotly_array
from tests.deadline import APPTEST_DEADLINE


def _explore_page():
    from dashboard.views import explore

    explore.render()


def open_page(**params) -> AppTest:
    at = AppTest.from_function(_explore_page, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({k: str(v) for k, v in params.items()})
    at.run()
    assert_ok(at)
    return at


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def shown(at: AppTest):
    """(result, layer weights of the shown layer, layer, head) of what the page shows."""
    from dashboard.engines import compute_attention, load_engine

    key = at.session_state["explore_result_key"]
    layer, head = at.session_state["explore_layer"], at.session_state["explore_head"]
    return compute_attention(*key), load_engine(key[0], key[1]).layer_weights(layer), layer, head


def expected_norms(result, w, layer, head) -> np.ndarray:
    """(T, T) ‖α_ij f_h(x_j)‖ by hand: head h's value columns and W_O rows, layer input = hidden[layer]."""
    x = result.hidden_states[layer].astype(np.float64)
    cols = slice(head * w.d_k, (head + 1) * w.d_k)
    f = (x @ w.w_v[:, cols] + w.b_v[cols]) @ w.w_o[cols, :]  # (T, D)
    alpha = result.attentions[layer, head].astype(np.float64)
    return np.linalg.norm(alpha[:, :, None] * f[None, :, :], axis=-1), f


def head_spec(at: AppTest) -> dict:
    return chart_specs(at)[0]


def title(spec: dict) -> str:
    return spec["layout"]["title"]["text"]


def test_norms_switch_draws_the_heads_norms(fast_apptest):
    at = open_page()  # the trophy example, head view, weights
    spec = head_spec(at)
    assert "norms" not in title(spec) and spec["data"][0]["colorbar"]["title"]["text"] == "weight"
    at.segmented_control(key="explore_measure").set_value("norms").run()
    assert_ok(at)
    spec = head_spec(at)
    assert title(spec).endswith("· norms ‖α f(x)‖")
    assert spec["data"][0]["colorbar"]["title"]["text"] == "‖α f(x)‖"
    result, w, layer, head = shown(at)
    expected, _ = expected_norms(result, w, layer, head)
    z = plotly_array(spec["data"][0]["z"])
    np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-6 * expected.max())
    assert spec["data"][0]["zmax"] == pytest.approx(float(z.max()), rel=1e-6)
    assert "Why norms differ from weights" in " ".join(m.value for m in at.markdown)
    captions = " ".join(c.value for c in at.caption)
    assert content.NORMS_CAPTION in captions and "Each row sums to 1" not in captions
    assert at.query_params["measure"] == "norms"
    # the rescale toggle: rows sum to 1, and the title and colour bar say so
    at.toggle(key="explore_rescale").set_value(True).run()
    spec = head_spec(at)
    assert "rows rescaled to sum to 1" in title(spec)
    assert spec["data"][0]["colorbar"]["title"]["text"] == content.NORMS_BAR_RESCALED
    z = plotly_array(spec["data"][0]["z"])
    np.testing.assert_allclose(z, expected / expected.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert at.query_params["rescale"] == "1"
    # back to weights: the weights, and the toggle is off-limits
    at.segmented_control(key="explore_measure").set_value("weights").run()
    z = plotly_array(head_spec(at)["data"][0]["z"])
    np.testing.assert_allclose(z, result.attentions[layer, head], atol=1e-7)
    assert at.toggle(key="explore_rescale").disabled
    assert "measure" not in at.query_params


def test_norms_with_specials_hidden_are_not_rescaled_unless_asked(fast_apptest):
    at = open_page(measure="norms", hide="1", layer="2", head="7")
    spec = head_spec(at)
    assert content.NORMS_HIDDEN_NOTE in title(spec) and "renormalised" not in title(spec)
    result, w, layer, head = shown(at)
    assert (layer, head) == (2, 7)
    expected, _ = expected_norms(result, w, layer, head)
    inner = expected[1:-1, 1:-1]  # the trophy sentence: [CLS] first, [SEP] last
    z = plotly_array(spec["data"][0]["z"])
    np.testing.assert_allclose(z, inner, rtol=1e-5, atol=1e-6 * inner.max())
    at.toggle(key="explore_rescale").set_value(True).run()
    z = plotly_array(head_spec(at)["data"][0]["z"])
    np.testing.assert_allclose(z, inner / inner.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_merged_words_take_the_norm_of_the_summed_vector(fast_apptest):
    at = open_page(example="love-nlp", measure="norms", merge="1", layer="1", head="3")
    spec = head_spec(at)
    result, w, layer, head = shown(at)
    assert list(result.tokens) == ["[CLS]", "i", "love", "nl", "##p", "[SEP]"]
    _, f = expected_norms(result, w, layer, head)
    alpha = result.attentions[layer, head].astype(np.float64)
    spans = [(0, 1), (1, 2), (2, 3), (3, 5), (5, 6)]
    expected = np.array(
        [
            [np.mean([np.linalg.norm(alpha[i, c0:c1] @ f[c0:c1]) for i in range(r0, r1)]) for c0, c1 in spans]
            for r0, r1 in spans
        ]
    )
    np.testing.assert_allclose(plotly_array(spec["data"][0]["z"]), expected, rtol=1e-5)
    assert "pieces merged into words" in title(spec)
    assert any(c.value == content.NORMS_MERGE_NOTE for c in at.caption)


def test_norms_fall_back_to_weights_when_the_engine_cannot_give_head_weights(fast_apptest, monkeypatch):
    from dashboard.views.explore import flow

    class NoHeads:
        def layer_weights(self, layer):
            raise ModelError("this model's attention weights are not laid out like BERT's")

    flow.value_vectors.clear()
    monkeypatch.setattr(flow, "load_engine", lambda *_: NoHeads())
    at = open_page(measure="norms")
    infos = " ".join(i.value for i in at.info)
    assert "not laid out like BERT's" in infos and "Showing the weights instead" in infos
    spec = head_spec(at)
    assert "norms" not in title(spec)
    result, _, layer, head = shown(at)
    np.testing.assert_allclose(plotly_array(spec["data"][0]["z"]), result.attentions[layer, head], atol=1e-7)
    flow.value_vectors.clear()


def _rollout(result, layer: int) -> np.ndarray:
    """Ã(l)…Ã(1) by explicit steps: ½·mean_h A + ½·I, rows renormalised, newest layer on the left."""
    acc = np.eye(result.n_tokens)
    for a in result.attentions[: layer + 1].astype(np.float64):
        tilde = 0.5 * a.mean(0) + 0.5 * np.eye(result.n_tokens)
        acc = (tilde / tilde.sum(-1, keepdims=True)) @ acc
    return acc


def test_rollout_view_with_layer_and_row_pickers(fast_apptest):
    at = open_page(view="rollout", layer="3")
    specs = chart_specs(at)
    assert title(specs[0]) == "Rollout up to layer 4"
    result, _, _, _ = shown(at)
    np.testing.assert_allclose(plotly_array(specs[0]["data"][0]["z"]), _rollout(result, 3), atol=1e-5)
    assert specs[0]["layout"]["xaxis"]["title"]["text"] == "to (input token)"
    assert specs[0]["layout"]["yaxis"]["title"]["text"] == "from (token after layer 4)"
    # the row of the example's focus word ("it"), as bars
    it = list(result.tokens).index("it")
    assert title(specs[1]) == "Where “it” traces back to, after layer 4"
    np.testing.assert_allclose(plotly_array(specs[1]["data"][0]["y"]), _rollout(result, 3)[it], atol=1e-5)
    assert "heads mix equally" in " ".join(m.value for m in at.markdown)
    # up to the last layer, then another row
    at.select_slider(key="explore_w_rollout_layer_6").set_value(5).run()
    assert_ok(at)
    assert at.session_state["explore_layer"] == 5 and at.query_params["layer"] == "5"
    picker = next(s for s in at.selectbox if s.label == content.ROLLOUT_ROW_LABEL)
    trophy = list(result.tokens).index("trophy")
    picker.set_value(trophy).run()
    specs = chart_specs(at)
    assert title(specs[0]) == "Rollout up to layer 6"
    np.testing.assert_allclose(plotly_array(specs[1]["data"][0]["y"]), _rollout(result, 5)[trophy], atol=1e-5)
    assert at.query_params["focus"] == "trophy" and at.query_params["view"] == "rollout"
    # the keys step layers here too
    at.button(key="explore_prev").click().run()
    assert title(chart_specs(at)[0]) == "Rollout up to layer 5"


def test_rollout_with_merge_and_hide(fast_apptest):
    at = open_page(view="rollout", layer="5", merge="1", hide="1", example="love-nlp")
    spec = chart_specs(at)[0]
    result, _, _, _ = shown(at)
    full = _rollout(result, 5)
    # words: [CLS] i love nlp [SEP] -> columns summed over pieces, rows averaged, specials dropped
    cols = np.stack([full[:, 1], full[:, 2], full[:, 3] + full[:, 4]], axis=1)  # (T, 3)
    rows = np.stack([cols[1], cols[2], (cols[3] + cols[4]) / 2])  # (3, 3)
    expected = rows / rows.sum(-1, keepdims=True)
    np.testing.assert_allclose(plotly_array(spec["data"][0]["z"]), expected, atol=1e-5)
    assert "rows renormalised" in title(spec) and "pieces merged into words" in title(spec)


@pytest.mark.parametrize(
    ("params", "measure", "rescale"),
    [
        ({"measure": "norms", "rescale": "1"}, "norms", True),
        ({"measure": "norms"}, "norms", False),
        ({"measure": "volume", "rescale": "yes"}, "weights", False),
    ],
)
def test_url_round_trip_of_measure_and_rescale(fast_apptest, params, measure, rescale):
    at = open_page(**params)
    assert at.session_state["explore_measure"] == measure
    assert at.session_state["explore_rescale"] is rescale
    assert at.query_params.get("measure", "weights") == measure
    assert at.query_params.get("rescale", "0") == ("1" if rescale else "0")
    if params["measure"] == "volume":
        assert any("measure" in i.value for i in at.info)  # the bad value is reported
    # the choice survives a visit to another view, where its widgets are not drawn
    at.segmented_control(key="explore_view").set_value("lines").run()
    at.segmented_control(key="explore_view").set_value("head").run()
    assert_ok(at)
    assert at.session_state["explore_measure"] == measure and at.session_state["explore_rescale"] is rescale


def test_norms_and_rollout_without_torch(fast_apptest, monkeypatch):
    import sys

    from dashboard import engines

    monkeypatch.setattr(engines, "torch_installed", lambda: False)
    for name in ("torch", "transformers"):  # any attempt to import them now fails
        monkeypatch.setitem(sys.modules, name, None)
    at = open_page(measure="norms", engine="numpy")
    assert title(head_spec(at)).endswith("norms ‖α f(x)‖")
    result, w, layer, head = shown(at)
    expected, _ = expected_norms(result, w, layer, head)
    np.testing.assert_allclose(plotly_array(head_spec(at)["data"][0]["z"]), expected, rtol=1e-5, atol=1e-7)
    at.segmented_control(key="explore_view").set_value("rollout").run()
    assert_ok(at)
    assert len(at.get("plotly_chart")) == 2
