"""AppTest of the explore page's similarity view on the bundled model: the map is the cosine of the
vectors after the chosen layer (recomputed here with plain NumPy; core/measures/similarity.py is checked
against transformers in tests/core/test_similarity.py), merged words average their pieces, the row's
bars leave the focus word out, and `layer` runs from 0 (the embeddings) to L in links."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.harness import assert_no_crash, page_script, plotly_array
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("explore")
TEXT = "I love NLP and the river bank."


def open_page(**params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"view": "similarity", "text": TEXT, **params})
    at.run()
    assert_no_crash(at)
    assert not at.error
    return at


def spec(at: AppTest, key: str) -> dict:
    (found,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if key in c.proto.id]
    return found


def shown_result(at):
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def plain_cosines(vectors: np.ndarray) -> np.ndarray:
    v = vectors.astype(np.float64)
    norms = np.linalg.norm(v, axis=1)
    return (v @ v.T) / norms[:, None] / norms[None, :]


@pytest.mark.parametrize("layer", [0, 3, 6])
def test_the_map_is_the_cosine_after_the_layer(layer):
    at = open_page(layer=str(layer))
    assert not at.info  # 6 is this model's last layer: a valid link here
    result = shown_result(at)
    z = plotly_array(spec(at, "explore_similarity_chart")["data"][0]["z"])
    n = result.n_tokens
    np.testing.assert_allclose(z.reshape(n, n), plain_cosines(result.hidden_states[layer]), atol=1e-6)
    title = spec(at, "explore_similarity_chart")["layout"]["title"]["text"]
    assert title.endswith("at the embeddings" if layer == 0 else f"after layer {layer}")


def test_merged_words_average_their_pieces_and_the_bars_skip_the_focus():
    at = open_page(layer="6", merge="1", focus="nlp")
    result = shown_result(at)
    start = result.tokens.index("nl")
    assert result.tokens[start + 1] == "##p"
    last = result.hidden_states[6].astype(np.float64)
    merged = np.concatenate([last[:start], last[start : start + 2].mean(0, keepdims=True), last[start + 2 :]])
    expected = plain_cosines(merged)
    w = len(merged)
    z = plotly_array(spec(at, "explore_similarity_chart")["data"][0]["z"]).reshape(w, w)
    np.testing.assert_allclose(z, expected, atol=1e-6)
    bars = spec(at, "explore_similarity_row")["data"][0]
    focus = start  # the merged word's item: every item before it is one token
    others = [i for i in range(w) if i != focus]
    np.testing.assert_allclose(plotly_array(bars["y"]), expected[focus, others], atol=1e-6)
    assert "nlp" not in list(bars["x"])


def test_a_layer_past_the_last_is_noted():
    at = open_page(layer="7")
    assert any("`layer` value 7" in i.value and "0–6 in links" in i.value for i in at.info)
    assert at.session_state["explore_layer"] == 6  # the nearest: the last layer's output
