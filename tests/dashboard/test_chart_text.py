"""Every chart's text alternative (issue 50): the sentence read from a figure's data (hand-checked on a
heatmap, bars and lines), its numbers as tables, and a sweep over the pages and views: every chart
named by its sentence, with a "Numbers as a table" control that opens onto a real table."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import chart_access
from dashboard.chart_text import describe, from_markdown, plain, strongest_line, tables
from dashboard.charts.explore import head_heatmap
from dashboard.charts.lines import lines_figure
from dashboard.widgets import md
from tests.dashboard.harness import assert_no_crash, page_script
from tests.deadline import APPTEST_DEADLINE

WEIGHTS = np.array([[0.90, 0.10, 0.00], [0.20, 0.70, 0.10], [0.05, 0.82, 0.13]])


def test_a_heads_map_says_its_axes_and_its_strongest_weight_from_query_to_key():
    fig = head_heatmap(WEIGHTS, ["the", "<s>", "it"], title="Layer 1, head 2")
    said = describe(fig)
    assert said == (
        "Chart: Layer 1, head 2. A heatmap of 3 × 3 cells: rows from (query), columns to (key). "
        "The largest weight, 0.9, is from “the” to “the”."
    )
    [(caption, table)] = tables(fig)
    assert caption == "Rows: from (query); columns: to (key)."
    assert list(table.index) == list(table.columns) == ["the", "<s>", "it"]  # plain text, not &lt;s&gt;
    assert table.loc["it", "<s>"] == pytest.approx(0.82)


def test_a_scale_through_zero_says_its_smallest_too_and_a_statement_comes_last():
    fig = go.Figure(
        go.Heatmap(
            z=[[0.5, -1.25], [2.0, 0.0]], x=["a", "b"], y=["L1", "L2"], colorbar={"title": {"text": "effect"}}
        ),
        layout={"title": {"text": "<b>Effects</b>"}, "xaxis": {"title": {"text": "head"}}},
    )
    said = describe(fig, finding=f"**{md('it*s')}** matters most.")
    assert said == (
        "Chart: Effects. A heatmap of 2 × 2 cells: rows “L1” to “L2”, columns head. The largest effect, 2, "
        "is at row “L2”, column “a”. The smallest, -1.25, is at row “L1”, column “b”. it*s matters most."
    )


def test_bars_say_their_largest_and_smallest_and_share_one_table():
    fig = go.Figure(
        [
            go.Bar(x=[0.41, 0.02, 0.3], y=["trophy", "the", "it"], orientation="h", name="weight"),
            go.Bar(x=[0.1, 0.2, 0.3], y=["trophy", "the", "it"], orientation="h", name="norm"),
        ],
        layout={"xaxis": {"title": {"text": "weight"}}, "yaxis": {"title": {"text": "token"}}},
    )
    said = describe(fig)
    assert (
        "“weight”: 3 bars of weight by token. The largest is “trophy”, 0.41; the smallest “the”, 0.02."
        in said
    )
    assert "“norm”: 3 bars of weight by token. The largest is “it”, 0.3; the smallest “trophy”, 0.1." in said
    [(caption, table)] = tables(fig)
    assert caption == "" and list(table.columns) == ["weight", "norm"]
    assert table.loc["the"].tolist() == [0.02, 0.2]


def test_a_line_says_where_it_starts_ends_and_peaks():
    fig = go.Figure(
        go.Scatter(x=[0, 100, 200, 300], y=[2.5, 3.1, 0.4, 0.9], mode="lines", name="loss"),
        layout={"title": {"text": "Training"}, "xaxis": {"title": {"text": "step"}}},
    )
    assert describe(fig) == (
        "Chart: Training. The line goes from 2.5 at step 0 to 0.9 at step 300; highest 3.1 at step 100; "
        "lowest 0.4 at step 200."
    )
    [(_, table)] = tables(fig)
    assert table["loss"].tolist() == [2.5, 3.1, 0.4, 0.9] and list(table.index) == ["0", "100", "200", "300"]


def test_a_large_matrix_table_is_cut_and_says_so():
    fig = go.Figure(go.Heatmap(z=np.arange(50 * 60, dtype=float).reshape(50, 60)))
    [(caption, table)] = tables(fig)
    assert table.shape == (40, 40) and table.iloc[39, 39] == 39 * 60 + 39
    assert caption == "The first 40 × 40 of 50 × 60 cells."
    assert "The largest value, 2,999, is at row “50”, column “60”." in describe(fig)


def test_text_is_shown_literally_plotly_entities_and_markdown_undone_then_escaped_for_the_table():
    assert plain("<b>a</b><br>&lt;s&gt; &amp; 5&#37;") == "a <s> & 5%"
    assert from_markdown(f"**{md('[x](y) *z*')}** `q`") == "[x](y) *z* q"
    safe = chart_access.markdown_safe(tables(head_heatmap(WEIGHTS, ["*a*", "[b](c)", "<i>"]))[0][1])
    assert list(safe.index) == [md("*a*"), md("[b](c)"), md("<i>")]


def test_the_lines_view_is_a_drawing_its_finding_the_strongest_line_of_the_heads_shown():
    weights = np.zeros((2, 3, 3))
    weights[0, 2, 1], weights[1, 1, 0], weights[1, 2, 2] = 0.9, 0.6, 0.7  # head 1's 0.9 is not shown
    fig = lines_figure(weights, ["the", "cup", "it"], shown_heads=[1], title="Layer 1, head 2")
    said = describe(fig, strongest_line(weights, ["the", "cup", "it"], [1]))
    assert said.startswith(
        "Chart: Layer 1, head 2. The strongest line, weight 0.7, goes from “it” to “it” in head 2."
    )
    assert tables(fig) == []  # lines and labels on hidden axes: no numbers of their own


# ---- the pages --------------------------------------------------------------------------------------

EXPLORE_VIEWS = ["head", "lines", "model", "focus", "rollout", "similarity", "ablation", "attribution", "qk"]
PAGES = [("explore", {"view": view}) for view in EXPLORE_VIEWS] + [
    ("explore", {"view": view, "model": "letters"}) for view in ("nextword", "lens", "sinks", "induction")
]
PAGES += [
    ("learn", {}),
    ("learn", {"step": "5"}),
    ("compare", {}),
    ("atlas", {}),
    ("cost", {}),
    ("train", {}),
    ("explore", {"view": "head", "present": "1"}),  # a projector: the charts named, no control
]


@pytest.mark.parametrize(
    "module, params", PAGES, ids=[f"{m}-{'-'.join(p.values()) or 'default'}" for m, p in PAGES]
)
def test_every_chart_is_named_by_its_sentence_and_opens_onto_its_numbers(module, params, fast_apptest):
    at = AppTest.from_string(page_script(module), default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.session_state["present"] = bool(params.get("present"))  # as the app sets it from the link
    at.run()
    assert_no_crash(at, (module, params))
    charts = at.get("plotly_chart")
    for element in charts:
        assert element.proto.alt.startswith("Chart"), (module, params)
    controls = [e for e in at.get("expander") if e.label == chart_access.NUMBERS_LABEL]
    if params.get("present"):
        assert charts and not controls, (module, params)
        return
    assert len(controls) == len(charts), (module, params)
    assert not at.get("table") or module != "explore", "a closed control sends no table"
    assert charts, (module, params)
    for control in controls:
        at.session_state[control.key] = True  # every chart's control opened, as Enter on it would
    at.run()
    assert_no_crash(at, (module, params))
    opened = [c for c in at.get("expander") if c.label == chart_access.NUMBERS_LABEL]
    assert all(c.get("table") or c.get("caption") for c in opened), (module, params)
    drawing = params.get("view") == "lines"  # lines and labels on hidden axes: said to hold no numbers
    assert drawing or any(c.get("table") for c in opened), (module, params)
