"""The explore page's [MASK] guesses in Chromium: a masked-LM BERT the test builds and saves itself
shows five words with probabilities for each [MASK], as text (a word is never markup); the bundled
model, which has no masked-LM head, says so in one line and names a model that has one."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn
from tests.tiny_bert import make_tiny_bert

pytestmark = pytest.mark.slow

TEXT = "the [MASK] sat on the [MASK] ."


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("browser_mlm"), masked_lm=True)


def test_guesses_for_each_mask(page, app_server, mlm_dir):
    page.goto(f"{app_server.url}/explore?" + urlencode({"model": str(mlm_dir), "text": TEXT}))
    wait_all_drawn(page, 1)
    lines = page.locator("li").filter(has_text=re.compile(r"^\[MASK\] \d"))
    expect(lines).to_have_count(2)
    for line in lines.all_inner_texts():  # "[MASK] 1: word 0.01 · word 0.01 · ..." five guesses
        assert len(re.findall(r"\d\.\d\d", line)) == 5, line
    assert_clean(page)


def test_the_bundled_model_names_one_that_can_guess(page, app_server):
    page.goto(f"{app_server.url}/explore?" + urlencode({"text": "The [MASK] sat on the mat."}))
    wait_all_drawn(page, 1)
    said = page.get_by_text("saved without BERT's masked-word head")
    expect(said).to_have_count(1)
    assert "google-bert/bert-base-uncased" in said.inner_text()
    assert_clean(page)
