"""AppTest of the explore page's ablation and attribution views and of the pronoun test, offline on
the bundled model: the numbers drawn equal the engine's, recomputed here by full reruns (the core
is checked against transformers in tests/core/test_ablation.py and test_attribution.py); the set
control's four ways of choosing heads and their link; a tampered link; hosted mode's count; and the
pronoun test's statement on explore and compare."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.ablation import embedding_effect, sentence_embedding
from core.measures.attribution import spearman
from core.measures.referent import closeness
from dashboard.hosted import HOSTED
from tests.dashboard.harness import assert_no_crash, messages, page_script, plotly_array
from tests.deadline import APPTEST_DEADLINE

EXPLORE, COMPARE = page_script("explore"), page_script("compare")
TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


def open_page(script: str = EXPLORE, **params: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    assert not at.error, messages(at)
    return at


def spec(at: AppTest, key: str) -> dict:
    (found,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if key in c.proto.id]
    return found


def shown(at: AppTest):
    """(engine, result) of what the page shows."""
    from dashboard.engines import compute_attention, load_engine

    key = at.session_state["explore_result_key"]
    return load_engine(key[0], key[1]), compute_attention(*key)


def said(at: AppTest) -> str:
    return " ".join(str(m.value) for kind in ("markdown", "caption", "info", "warning") for m in at.get(kind))


def effect_by_full_run(engine, result, heads) -> float:
    ablated = engine.run(TROPHY, ablate=heads).hidden_states[-1]
    return embedding_effect(sentence_embedding(ablated), sentence_embedding(result.hidden_states[-1]))


# ---- ablation ----------------------------------------------------------------------------------


def test_grid_and_top_list_are_each_heads_effect():
    at = open_page(view="ablation", focus="it", target="trophy")
    engine, result = shown(at)
    grid = plotly_array(spec(at, "explore_ablation_grid")["data"][0]["z"]).reshape(6, 12)
    for layer, head in [(0, 0), (3, 7), (5, 5), (5, 10)]:
        expected = effect_by_full_run(engine, result, {(layer, head)})
        assert grid[layer, head] == pytest.approx(expected, abs=2e-6)
    order = np.argsort(-grid, axis=None, kind="stable")[:10]
    labels = [b.label for b in at.button if b.key and b.key.startswith("explore_ablate_top_")]
    assert len(labels) == 10
    for rank, (flat, label) in enumerate(zip(order, labels, strict=True), start=1):
        layer, head = np.unravel_index(flat, grid.shape)
        assert label == f"{rank}. layer {layer + 1}, head {head + 1}: {grid[layer, head]:.3f}"
    at.button(key="explore_ablate_top_1").click().run()  # opens the head view on that head
    layer, head = np.unravel_index(order[0], grid.shape)
    assert at.session_state["explore_view"] == "head"
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (layer, head)


def test_the_set_control_ablates_what_it_names_and_the_link_keeps_it():
    at = open_page(view="ablation", focus="it", target="trophy")
    engine, result = shown(at)
    from dashboard.views.explore.results import link_ranking, shown_token_view

    view = shown_token_view(result, False, False)
    it, trophy = (view.item_of_token(result.tokens.index(w)) for w in ("it", "trophy"))
    find = sorted((x.layer, x.head) for x in link_ranking(result, view, it, trophy)[:5])
    assert at.session_state["explore_ablate"] == tuple(find)  # the default: top 5 of find the head
    assert at.query_params["ablate"] == ",".join(f"{layer}.{head}" for layer, head in find)
    effect = effect_by_full_run(engine, result, set(find))
    assert f"1 − cos = {effect:.4f}" in said(at)
    # the focus word's bars: cosine to every other word, before and after, from the ablated run
    bars = spec(at, "explore_ablation_bars")["data"]
    ablated = engine.run(TROPHY, ablate=set(find))
    it_token = result.tokens.index("it")
    before, after = closeness(result, it_token), closeness(ablated, it_token)
    words = [w for w in range(len(before.words)) if w != before.focus]
    np.testing.assert_allclose(plotly_array(bars[0]["y"]), before.cosine[-1, words], atol=1e-6)
    np.testing.assert_allclose(plotly_array(bars[1]["y"]), after.cosine[-1, words], atol=2e-6)
    nearest = after.words[after.nearest()]
    assert f"it is still “{nearest}”" in said(at) or f"it becomes “{nearest}”" in said(at)

    at.segmented_control(key="explore_w_ablate_preset").set_value("layer").run()
    layer = at.session_state["explore_ablate"][0][0]
    assert at.session_state["explore_ablate"] == tuple((layer, h) for h in range(12))
    at.segmented_control(key="explore_w_ablate_preset").set_value("grid").run()
    grid = plotly_array(spec(at, "explore_ablation_grid")["data"][0]["z"]).reshape(6, 12)
    top5 = {tuple(int(i) for i in np.unravel_index(f, grid.shape)) for f in np.argsort(-grid, axis=None)[:5]}
    assert set(at.session_state["explore_ablate"]) == top5
    at.segmented_control(key="explore_w_ablate_preset").set_value("hand").run()
    (hand,) = [m for m in at.multiselect if "Heads to switch off" in m.label]
    hand.set_value([2 * 12 + 3]).run()  # layer 3, head 4 (0-indexed 2.3)
    assert at.session_state["explore_ablate"] == ((2, 3),) and at.query_params["ablate"] == "2.3"
    again = open_page(view="ablation", ablate="2.3", text=TROPHY)  # the link opens the same set
    assert again.session_state["explore_ablate"] == ((2, 3),)
    assert f"1 − cos = {effect_by_full_run(engine, result, {(2, 3)}):.4f}" in said(again)


def test_a_tampered_link_is_noted_and_the_view_still_works():
    at = open_page(view="ablation", ablate="99,-1,2.3,7.0,<b>1</b>")
    text = said(at)
    assert "layers 1–6 and heads 1–12" in text and "0.0 to 5.11" in text
    assert "<b>" not in text  # never echoed as markup
    assert at.session_state["explore_ablate"] == ((2, 3),)
    assert len(at.get("plotly_chart")) == 2


def test_hosted_mode_counts_the_grid_as_one_new_text(monkeypatch):
    from dashboard import hosted

    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    monkeypatch.setattr(hosted, "_clock", lambda: 1000.0)
    at = open_page(view="ablation", text="The cat sat on the mat.")
    assert len(at.session_state["hosted_text_times"]) == 2  # the sentence, and its grid
    at.run()
    assert len(at.session_state["hosted_text_times"]) == 2  # shown again: not counted again
    # room for one more new text: the sentence's; its grid is one too many
    at.session_state["hosted_text_times"] = [1000.0] * (HOSTED.max_texts_per_minute - 1)
    at.text_area(key="explore_text").set_value("The dog sat on the rug.").run()
    assert_no_crash(at)
    assert "new texts a minute" in said(at) and not at.get("plotly_chart")  # the grid is refused


# ---- attribution --------------------------------------------------------------------------------


def test_attribution_bars_are_leave_one_out_and_the_columns():
    at = open_page(view="attribution", text=TROPHY)
    engine, result = shown(at)
    scored = ~result.special_mask
    data = spec(at, "explore_attribution_bars")["data"]
    assert len(data) == 4
    reference = sentence_embedding(result.hidden_states[-1])
    loo = []
    for j in np.flatnonzero(scored):  # by full reruns without token j
        keep = np.arange(result.n_tokens) != j
        hidden = engine.hidden_states(result.input_ids[keep], result.token_type_ids[keep])
        loo.append(embedding_effect(sentence_embedding(hidden[-1]), reference))
    np.testing.assert_allclose(plotly_array(data[0]["y"]), loo, atol=1e-6)
    attention = result.attentions[-1].astype(np.float64).mean(axis=(0, 1))[scored]
    np.testing.assert_allclose(plotly_array(data[1]["y"]), attention, atol=1e-6)
    rho = spearman(attention, np.array(loo))
    assert f"attention **{rho:.2f}**" in said(at)
    assert "Attention is not Explanation" in said(at) and "Wiegreffe and Pinter (2019)" in said(at)


def test_attribution_of_a_sentence_with_one_token_is_explained():
    at = open_page(view="attribution", text="Hi")
    assert "Spearman's ρ is not defined" in said(at)
    assert len(at.get("plotly_chart")) == 1


# ---- the pronoun test ------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "referent"), [("large", "trophy"), ("small", "suitcase")])
def test_pronoun_test_on_the_focus_view(size, referent):
    at = open_page(view="focus", example=f"trophy-{size}")
    _, result = shown(at)
    close = closeness(result, result.tokens.index("it"))
    nearest = close.words[close.nearest()]
    text = said(at)
    assert f"closest to **“{nearest}”** (cos {close.cosine[-1, close.nearest()]:.2f})" in text
    assert ("so, by this test, does" in text) == (nearest == referent)
    lines = spec(at, "explore_pronoun")["data"]
    assert lines[0]["name"] == nearest
    np.testing.assert_allclose(plotly_array(lines[0]["y"]), close.cosine[:, close.nearest()], atol=1e-6)
    assert "Across the pair" in text


def test_pronoun_test_on_the_compare_page():
    at = open_page(COMPARE)
    charts = [c for c in at.get("plotly_chart") if "compare_pronoun" in c.proto.id]
    assert len(charts) == 2
    assert "A reader takes “it” to mean “trophy”" in said(at)
    assert "A reader takes “it” to mean “suitcase”" in said(at)
    assert "Across the pair" in said(at)


def test_attribution_of_a_long_text_asks_for_a_shorter_one():
    from dashboard.views.explore.attribution import MAX_TOKENS

    at = open_page(view="attribution", text="word " * MAX_TOKENS)
    assert f"texts of up to {MAX_TOKENS} tokens; this one has {MAX_TOKENS + 2}" in said(at)
    assert not at.get("plotly_chart")
    at.text_area(key="explore_text").set_value("word " * (MAX_TOKENS - 2)).run()
    assert len(at.get("plotly_chart")) == 1
