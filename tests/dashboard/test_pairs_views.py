"""AppTest of sentence pairs on the explore page (issue 51): `?pair=` fills sentence B's box, the
head view's figure marks the two segments, the statement and the ranking are the crossing shares
computed from the shown result, a decoder and the translator say in one line how they read a pair,
and bad B input gets a friendly line while the view stays."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.pairs import cross_shares, rank_cross, segments_from_types
from dashboard.content import pairs as text
from dashboard.views.explore.widgets import PAIR_KEY
from tests.deadline import APPTEST_DEADLINE

A = "The trophy would not fit in the suitcase."
B = "It was too big."


def _explore_page():
    from dashboard.views import explore

    explore.render()


def open_page(**params) -> AppTest:
    at = AppTest.from_function(_explore_page, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({k: str(v) for k, v in params.items()})
    return at.run()


def shown_result(at):
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def shown_text(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.caption, *at.markdown, *at.info, *at.warning])


def healthy(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart"), "the view's chart is gone"


@pytest.fixture(scope="module")
def head_page() -> AppTest:
    return open_page(text=A, pair=B, view="head", layer=3, head=11)


def test_the_link_fills_box_b_and_bert_reads_the_pair(head_page):
    at = head_page
    healthy(at)
    assert at.text_area(key=PAIR_KEY).value == B
    result = shown_result(at)
    assert result.tokens.count("[SEP]") == 2 and result.token_type_ids.max() == 1
    assert text.HOW_SEGMENTS in shown_text(at)
    assert at.query_params["pair"] == [B] or at.query_params["pair"] == B


def test_the_head_view_marks_the_two_segments(head_page):
    result = shown_result(head_page)
    b_first = int(np.argmax(result.token_type_ids))  # [CLS] A [SEP] | B [SEP]: B's first token
    heatmap = figures(head_page)[0]
    edges = [s for s in heatmap["layout"].get("shapes", []) if s.get("line", {}).get("dash") == "dash"]
    assert {s["x0"] for s in edges if s["x0"] == s["x1"]} == {b_first - 0.5}
    assert {s["y0"] for s in edges if s["y0"] == s["y1"]} == {b_first - 0.5}
    names = [a["text"] for a in heatmap["layout"].get("annotations", [])]
    assert "<b>sentence A</b>" in names and "<b>sentence B</b>" in names


def test_the_statement_and_ranking_are_the_results_crossing_shares(head_page):
    at = head_page
    result = shown_result(at)
    shares = cross_shares(result.attentions, segments_from_types(result.token_type_ids, result.special_mask))
    ranked = rank_cross(shares)
    rank = next(i for i, h in enumerate(ranked, start=1) if (h.layer, h.head) == (3, 11))
    said = shown_text(at)
    assert (
        f"layer 4, head 12, {shares.cross[3, 11]:.0%}" in said
        and f"rank {rank} of {len(ranked)} heads" in said
    )
    table = at.dataframe[0].value
    assert list(table["layer"]) == [h.layer + 1 for h in ranked[: text.RANKING_TOP]]
    assert list(table["head"]) == [h.head + 1 for h in ranked[: text.RANKING_TOP]]
    np.testing.assert_allclose(
        table[text.RANKING_COLUMNS["cross"]], [100 * h.cross for h in ranked[: text.RANKING_TOP]]
    )


def test_lines_and_model_views_mark_the_pair():
    at = open_page(text=A, pair=B, view="lines")
    healthy(at)
    shapes = figures(at)[0]["layout"].get("shapes", [])
    assert any(s.get("type") == "rect" for s in shapes)  # B's rows shaded
    at = open_page(text=A, pair=B, view="model")
    healthy(at)
    hover = [
        t for trace in figures(at)[0]["data"] for t in (trace.get("text") or trace.get("hovertext") or [])
    ]
    result = shown_result(at)
    assert sum("across the pair" in str(t) for t in hover) == result.n_layers * result.n_heads


def test_bad_sentence_b_is_said_and_the_view_stays():
    at = open_page(text=A, pair="   ", view="head")
    healthy(at)
    assert text.ONLY_SPACES in shown_text(at)
    assert shown_result(at).token_type_ids.max() == 0  # A alone
    at = open_page(text=A, pair="big " * 400, view="head")
    healthy(at)
    assert text.PAIR_CUT.format(most=text.MAX_PAIR_CHARS) in shown_text(at)
    assert len(at.text_area(key=PAIR_KEY).value) == text.MAX_PAIR_CHARS
    at.text_area(key=PAIR_KEY).set_value("  ").run()
    healthy(at)
    assert text.ONLY_SPACES in shown_text(at)


def test_another_view_says_it_reads_sentence_a_alone():
    at = open_page(text=A, pair=B, view="rollout")
    healthy(at)
    assert text.OTHER_VIEWS in shown_text(at)


def test_a_decoder_reads_the_pair_concatenated():
    at = open_page(text="abc def", pair="ghi", model="letters", view="head")
    healthy(at)
    said = shown_text(at)
    assert text.HOW_DECODER in said and "A cannot read B" in said
    result = shown_result(at)
    assert result.tokens[result.meta["pair_start"]] == "g"


def test_the_translator_says_it_reads_one_sentence():
    at = open_page(pair=B, model="translator")
    assert not at.exception
    assert text.HOW_TRANSLATOR in shown_text(at)


def _learn(**params: str) -> AppTest:
    from tests.dashboard.test_learn import SCRIPT

    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_learn_reads_the_pair_with_the_real_bert():
    at = _learn(example="bert", text=A, pair=B, step="1")
    assert at.text_input(key="learn_text_b").value == B
    pieces = " ".join(t.value for t in at.text)
    assert pieces.count("[SEP]") == 2 and "big" in pieces
    assert text.HOW_SEGMENTS in shown_text(at)
    assert at.query_params["pair"] in (B, [B])
    at = _learn(example="cat-mat", pair=B)  # the toy model reads one sentence: one line says so
    assert text.ONE_SENTENCE_MODE in shown_text(at)
