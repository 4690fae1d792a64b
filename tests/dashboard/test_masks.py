"""The explore page's guesses for [MASK]: a masked-LM BERT's five words per [MASK] with their probabilities,
equal to core.models.masked_lm's (checked against transformers in tests/core/test_masked_lm.py); the bundled
model's one line naming a model that can guess; nothing when the text has no [MASK]."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.models.bert import BertNumpy
from core.models.masked_lm import fill_masks
from dashboard.widgets import md
from tests.dashboard.harness import assert_no_crash, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_bert import make_tiny_bert

SCRIPT = page_script("explore")
TEXT = "the [MASK] sat on the [MASK] ."


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("page_mlm"), masked_lm=True)


def open_page(**params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    assert not at.error
    return at


def shown(at: AppTest) -> str:
    return " ".join(str(m.value) for kind in ("markdown", "caption") for m in at.get(kind))


def test_guesses_for_each_mask(mlm_dir):
    at = open_page(model=str(mlm_dir), text=TEXT)
    engine = BertNumpy.from_pretrained(mlm_dir)
    fills = fill_masks(engine, engine.run(TEXT), 5)
    assert len(fills) == 2
    text = shown(at)
    for n, fill in enumerate(fills, start=1):
        token, p = fill.predictions[0]
        assert f"**\\[MASK\\] {n}**: **{md(token)}** {p:.2f}" in text


def test_the_bundled_model_says_it_cannot_guess():
    text = shown(open_page(text="The [MASK] sat on the mat."))
    assert "saved without BERT's masked-word head" in text and "`google-bert/bert-base-uncased`" in text


def test_no_mask_no_line():
    assert "masked-word head" not in shown(open_page(text="The cat sat on the mat."))
