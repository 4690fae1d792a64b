"""The learn page's "real BERT" mode: the seven steps of any layer of the bundled model (chosen from 1
to L, 0-indexed in the link), drawn by the same renderer as the toy model, with the attention
weights the explore page shows (NumPy engine) and the PyTorch reference computes."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.models.bert import BertNumpy
from core.models.bundled import bundled_model_dir
from tests.dashboard.test_learn import SCRIPT, chart, texts, z
from tests.deadline import APPTEST_DEADLINE

SENTENCE = "The bank approved the loan"


@pytest.fixture(scope="module")
def engine() -> BertNumpy:
    return BertNumpy.from_pretrained(bundled_model_dir())


def open_real(**params: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "bert", "text": SENTENCE, "step": "all", **params})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_real()


def test_real_mode_draws_seven_steps(page):
    headers = [h.value for h in page.subheader]
    assert [f"Step {n}" in " ".join(headers) for n in range(1, 8)] == [True] * 7
    assert not page.error


def test_real_mode_names_the_model_and_its_shapes(page):
    said = " ".join(texts(page))
    assert "all-MiniLM-L6-v2" in said and "6-layer BERT fine-tuned for sentence embeddings" in said
    assert "d_model 384 = 12 heads × d_k 32" in said
    assert "768" not in said and "64 numbers" not in said
    assert page.segmented_control(key="learn_layer").options == [f"Layer {n}" for n in range(1, 7)]


@pytest.mark.parametrize("head", [0, 7])
def test_real_mode_numbers_are_the_models(page, engine, head):
    page.selectbox(key="learn_bert_head").set_value(head).run()
    assert not page.exception
    shown = z(chart(page, "probs"))
    result = engine.run(SENTENCE)
    np.testing.assert_allclose(shown, result.attentions[0, head], atol=1e-6)
    # the unscaled scores and the scaled ones differ by sqrt(d_k) = sqrt(32)
    np.testing.assert_allclose(z(chart(page, "scores")) / np.sqrt(32), z(chart(page, "scaled")), atol=1e-5)
    # and what transformers computes (the bridge's promise)
    from core.models.pretrained import load_pretrained

    reference = load_pretrained("bundled").run(SENTENCE)
    np.testing.assert_allclose(shown, reference.attentions[0, head], atol=1e-5)


def test_any_layer_can_be_chosen_and_is_kept_in_the_link(engine):
    at = open_real(step="5")
    at.segmented_control(key="learn_layer").set_value(3).run()
    at.selectbox(key="learn_bert_head").set_value(5).run()
    assert not at.exception
    np.testing.assert_allclose(z(chart(at, "probs")), engine.run(SENTENCE).attentions[3, 5], atol=1e-6)
    assert at.query_params["layer"] == "3" and at.query_params["head"] == "5"
    assert "layer 4, head 6" in " ".join(texts(at))


def test_a_link_opens_a_layer_and_step(engine):
    at = open_real(layer="2", step="1")
    assert at.segmented_control(key="learn_layer").value == 2
    x = z(chart(at, "x"))  # layer 3's input: layer 2's output, its first 8 dimensions
    np.testing.assert_allclose(x, engine.run(SENTENCE).hidden_states[2][:, :8], atol=1e-5)
    assert "output of layer 2" in " ".join(e.value for e in at.latex)


@pytest.mark.parametrize(
    ("params", "message"), [({"layer": "6"}, "`layer` value 6"), ({"head": "12"}, "`head` value 12")]
)
def test_a_link_past_the_last_layer_or_head_says_so(params, message):
    at = open_real(**params)
    assert message in " ".join(w.value for w in at.warning)
    assert at.get("plotly_chart")


def test_real_mode_empty_text_prompts(page):
    page.text_input(key="learn_text").set_value("   ").run()
    assert not page.exception
    assert any("Type a sentence" in i.value for i in page.info)
    page.text_input(key="learn_text").set_value(SENTENCE).run()
    assert page.get("plotly_chart")
