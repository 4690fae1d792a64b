"""AppTests of the views that read the built-in corpus, on the bundled model: the similarity view's
nearest corpus words (checked against the corpus re-read here with the NumPy engine and plain NumPy
cosines) and the query/key space (its points recomputed here from those hidden states with
transformers' convention, q = x W^Q + b, and the plane fitted with core.measures.qk_space, which
tests/core/test_qk_space.py checks against AttentionViz's construction and an eigen-decomposition)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.qk_space import qk_space
from core.models.bert import BertNumpy
from core.models.bundled import bundled_model_dir
from dashboard.charts.explore import escape_label
from dashboard.content.atlas import corpus
from tests.dashboard.harness import assert_no_crash, page_script, plotly_array
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("explore")
MONEY = "The bank approved the loan."
LINE = re.compile(r"^(\d+)\. \*\*(\d\.\d{3})\*\* · (.*)$")


@pytest.fixture(scope="module")
def reread():
    """Every corpus sentence through the bundled model again: (engine, results)."""
    engine = BertNumpy.from_pretrained(bundled_model_dir())
    return engine, [engine.run(s) for s in corpus()]


def open_page(**params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    assert not at.error
    return at


def listed(at: AppTest) -> list[tuple[float, str]]:
    (block,) = [m.value for m in at.markdown if m.value.startswith("1. **")]
    found = [LINE.match(line) for line in block.splitlines()]
    assert all(found) and [int(m[1]) for m in found] == list(range(1, len(found) + 1))
    return [(float(m[2]), m[3]) for m in found]


def expected_nearest(reread, text: str, word: str, layer: int, skip: str | None = None):
    """(cosine, sentence) of every corpus word, nearest first, recomputed with plain NumPy."""
    engine, results = reread
    mine = engine.run(text)
    token = mine.tokens.index(word)
    query = mine.hidden_states[layer, token].astype(np.float64)
    rows = []
    for sentence, result in zip(corpus(), results, strict=True):
        if sentence == skip:
            continue
        ids = result.word_ids
        for w in sorted(
            {i for i, s in zip(ids, result.special_mask, strict=True) if i is not None and not s}
        ):
            pieces = [t for t, i in enumerate(ids) if i == w]
            v = result.hidden_states[layer, pieces].astype(np.float64).mean(axis=0)
            rows.append((float(v @ query / np.linalg.norm(v) / np.linalg.norm(query)), sentence))
    return sorted(rows, key=lambda r: -r[0])


def assert_same_nearest(shown, expected) -> None:
    """The page's ten against the recomputed ranking: the same cosines in order, and each line's
    sentence one whose word has that cosine (near-ties may swap places: the page stores float16)."""
    assert len(shown) == 10
    np.testing.assert_allclose([c for c, _ in shown], [c for c, _ in expected[:10]], atol=2e-3)
    for cosine, line in shown:
        sentence = line.replace("**", "").replace("\\", "")  # the sentence, its word in bold
        assert any(s == sentence and abs(c - cosine) <= 2e-3 for c, s in expected[:20]), line


@pytest.mark.parametrize("layer", [0, 6])
def test_nearest_corpus_words(reread, layer):
    at = open_page(view="similarity", text=MONEY, layer=str(layer), focus="bank")
    shown = listed(at)
    assert_same_nearest(shown, expected_nearest(reread, MONEY, "bank", layer))
    assert all("**bank**" in line.lower() for _, line in shown)
    assert any("10 of the 10 are “bank” itself" in m.value for m in at.markdown)


def test_a_corpus_sentence_leaves_its_own_words_out(reread):
    own = "The bank raised its interest rates again this month."
    assert own in corpus()
    at = open_page(view="similarity", text=own, layer="6", focus="bank")
    shown = listed(at)
    assert all(own not in line.replace("**", "").replace("\\", "") for _, line in shown)
    assert_same_nearest(shown, expected_nearest(reread, own, "bank", 6, skip=own))
    assert any("its own words are left out" in c.value for c in at.caption)


def test_query_key_space(reread):
    engine, results = reread
    layer, head = 2, 4
    at = open_page(view="qk", example="trophy-large", layer=str(layer), head=str(head))
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "explore_qk_chart" in c.proto.id]
    corpus_q, corpus_k, own_q, own_k = spec["data"]
    w = engine.layer_weights(layer)
    cols = slice(head * w.d_k, (head + 1) * w.d_k)
    x = np.concatenate([r.hidden_states[layer] for r in results]).astype(np.float64)
    queries, keys = x @ w.w_q[:, cols] + w.b_q[cols], x @ w.w_k[:, cols] + w.b_k[cols]
    space = qk_space(queries, keys)
    for trace, points in zip((corpus_q, corpus_k), space.place(queries, keys), strict=True):
        got = np.stack([plotly_array(trace["x"]), plotly_array(trace["y"])], axis=1)
        scale = np.abs(points).max()
        np.testing.assert_allclose(got, points, atol=2e-2 * scale)  # the page keeps float16 states
    tokens = [t for r in results for t in r.tokens]
    assert [c[0] for c in corpus_q["customdata"]] == [escape_label(t) for t in tokens]  # "%" as "&#37;"
    assert corpus_k["customdata"][5][1] == corpus()[0]  # hover: the token's sentence
    sentence = engine.run("The trophy wouldn't fit in the suitcase because it was too large.")
    mine = sentence.hidden_states[layer].astype(np.float64)
    for trace, points in zip(
        (own_q, own_k),
        space.place(mine @ w.w_q[:, cols] + w.b_q[cols], mine @ w.w_k[:, cols] + w.b_k[cols]),
        strict=True,
    ):
        got = np.stack([plotly_array(trace["x"]), plotly_array(trace["y"])], axis=1)
        np.testing.assert_allclose(got, points, atol=2e-2 * np.abs(points).max())
        assert list(trace["text"]) == [
            escape_label(t) for t in sentence.tokens
        ]  # the sentence's tokens labelled
    assert (
        spec["layout"]["title"]["text"]
        == f"Layer {layer + 1}, head {head + 1}: queries and keys of {len(tokens)} corpus tokens"
    )
    share = space.explained
    assert spec["layout"]["xaxis"]["title"]["text"] == f"principal direction 1 ({share[0]:.0%} of the spread)"
    assert any("centred" in c.value and "mean norm" in c.value for c in at.caption)  # the page says so
