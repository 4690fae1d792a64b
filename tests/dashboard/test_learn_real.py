"""The learn page's "real BERT" mode: the seven steps show layer 1 of the bundled model, the same
attention weights the explore page shows (NumPy engine) and the PyTorch reference computes."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.bert import BertNumpy
from core.models import bundled_model_dir
from tests.dashboard.test_learn import SCRIPT, chart, z

SENTENCE = "The bank approved the loan"


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=120)
    at.query_params["example"] = "bert"
    at.query_params["text"] = SENTENCE
    at.query_params["step"] = "all"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_real_mode_draws_seven_steps(page):
    headers = [h.value for h in page.subheader]
    assert [f"Step {n}" in " ".join(headers) for n in range(1, 8)] == [True] * 7
    assert not page.error


@pytest.mark.parametrize("head", [0, 7])
def test_real_mode_numbers_are_the_models(page, head):
    page.selectbox(key="learn_real_head").set_value(head).run()
    assert not page.exception
    shown = z(chart(page, "real5"))
    engine = BertNumpy.from_pretrained(bundled_model_dir())
    result = engine.run(SENTENCE)
    np.testing.assert_allclose(shown, result.attentions[0, head], atol=1e-6)
    # and what transformers computes (the bridge's promise)
    from core.pretrained import load_pretrained

    reference = load_pretrained("bundled").run(SENTENCE)
    np.testing.assert_allclose(shown, reference.attentions[0, head], atol=1e-5)


def test_real_mode_empty_text_prompts(page):
    page.text_input(key="learn_text").set_value("   ").run()
    assert not page.exception
    assert any("Type a sentence" in i.value for i in page.info)
    page.text_input(key="learn_text").set_value(SENTENCE).run()
    assert page.get("plotly_chart")
