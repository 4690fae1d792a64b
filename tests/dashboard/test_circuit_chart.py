"""The circuit page's figure builders (dashboard/charts/circuit.py), without Streamlit: the graph puts
layer 1 at the top and the logits below the last layer, one trace per class with its own colour and
marker shape (the cue that needs no colour) named in the legend, every head's [layer, head] for a
click, an edge per link as wide as its effect (dashed when it works against the answer), the other
heads and the edges as drawing that the text alternative leaves out; a path grid leaves the cells
that cannot reach their receivers blank; user-facing labels are escaped. The inputs are random
arrays: these tests are about drawing, not about any model's circuit."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard import chart_text
from dashboard.charts import circuit as charts
from dashboard.content.circuit import CLASSES

SHAPE = (6, 4)
STYLES = {name: charts.Style(f"{info.label} (n)", info.color, info.symbol) for name, info in CLASSES.items()}


def _graph(picked=None, look=charts.PAGE_LOOK, title="A circuit"):
    nodes = {
        "name_mover": [charts.Node((5, 1), "Layer 6, head 2: name mover"), charts.Node((4, 3), "L5 H4")],
        "s_inhibition": [charts.Node((3, 0), "Layer 4, head 1")],
        "induction": [charts.Node((1, 2), "<b>Layer 2</b>")],
    }
    links = [
        charts.Link((5, 1), None, 0.6),
        charts.Link((4, 3), None, -0.2),
        charts.Link((3, 0), (5, 1), 0.3),
        charts.Link((1, 2), (3, 0), 0.05),
    ]
    fig = charts.circuit_graph(
        SHAPE, nodes, STYLES, links, title=title, logits_label="logits", picked=picked, look=look
    )
    return fig, nodes, links


def _data_traces(fig):
    return [t for t in fig.data if t.xaxis in (None, "x")]


def test_the_graph_puts_layer_one_on_top_and_each_class_in_its_own_trace():
    fig, nodes, _ = _graph()
    y_range = fig.layout.yaxis.range
    assert y_range[0] > y_range[1], "the layer axis runs downwards: layer 1 at the top"
    assert "from 1" in fig.layout.yaxis.title.text and "from 1" in fig.layout.xaxis.title.text
    traces = _data_traces(fig)
    assert [t.name for t in traces] == [STYLES[n].label for n in nodes]
    for trace, (name, group) in zip(traces, nodes.items(), strict=True):
        assert trace.marker.symbol == STYLES[name].symbol and trace.marker.color == STYLES[name].color
        assert [list(c) for c in trace.customdata] == [list(n.head) for n in group]
        assert list(trace.y) == [n.head[0] + 1 for n in group]  # shown from 1
        assert list(trace.x) == [n.head[1] + 1 for n in group]
    assert len({t.marker.symbol for t in traces}) == len(traces), "a shape per class, not only a colour"
    assert len({info.symbol for info in CLASSES.values()}) == len(CLASSES)


def test_an_edge_per_link_as_wide_as_its_effect_and_dashed_when_it_works_against_the_answer():
    fig, _, links = _graph()
    shapes = [s for s in fig.layout.shapes if s.type == "path"]
    assert len(shapes) == len(links)
    by_width = sorted(shapes, key=lambda s: s.line.width)
    assert by_width[-1].line.width == pytest.approx(charts.MAX_EDGE_PX)  # the strongest link
    dashed = [s for s in shapes if s.line.dash == "dash"]
    assert len(dashed) == 1 and dashed[0].line.color == charts.EDGE_DOWN  # the one negative link
    # the logits' node sits below the last layer, where the direct links end
    logits_y = fig.layout.annotations[0].y
    assert logits_y > SHAPE[0] and any(s.path.endswith(f",{logits_y}") for s in shapes)


def test_the_picked_head_is_ringed_and_the_drawing_stays_out_of_the_text_alternative():
    fig, nodes, _ = _graph(picked=(3, 0))
    rings = [t for t in fig.data if t.marker.symbol == "circle-open"]
    assert len(rings) == 1 and (rings[0].y[0], rings[0].x[0]) == (4, 1)
    said = chart_text.describe(fig, "The finding.")
    assert said.startswith("Chart: A circuit.") and said.endswith("The finding.")
    for name in nodes:
        assert STYLES[name].label in said
    tables = chart_text.tables(fig)
    # the classes' heads only: the faint grid of other heads and the logits' node are drawing
    assert sum(len(table) for _, table in tables) == sum(len(group) for group in nodes.values())


def test_labels_are_escaped_and_a_phone_drops_the_node_labels():
    fig, _, _ = _graph(title="<script>x</script>")
    assert "<script>" not in fig.layout.title.text
    hover = " ".join(h for t in _data_traces(fig) for h in t.hovertext)
    assert "<b>Layer 2</b>" not in hover and "&lt;b&gt;" in hover
    phone, _, _ = _graph(look=charts.PHONE_LOOK)
    assert all(t.mode == "markers" for t in _data_traces(phone))


def test_a_path_grid_leaves_the_cells_that_cannot_reach_blank():
    rng = np.random.default_rng(0)
    restored = rng.normal(0, 0.8, SHAPE)
    restored[3:] = np.nan  # senders at or after the receivers' layer
    fig = charts.path_grid(
        restored, title="grid", axes=("layer (from 1)", "head (from 1)"), bar_title="restored"
    )
    trace = fig.data[0]
    text = np.asarray(trace.text)
    assert (text[3:] == "").all() and all(t for t in text[:3].ravel())
    bound = max(charts.MIN_BOUND, float(np.abs(restored[:3]).max()))
    assert trace.zmax == pytest.approx(bound) and trace.zmin == pytest.approx(-bound)
    assert "nan" not in chart_text.describe(fig).lower()


def test_the_depth_strip_and_the_logit_bars_carry_their_numbers():
    depths = {
        "GPT-2 small": {"name_mover": np.array([0.8, 0.9]), "induction": np.array([0.5])},
        "ours": {"name_mover": np.array([0.75]), "induction": np.array([])},
    }
    fig = charts.depth_strip(["name_mover", "induction"], depths, STYLES, title="depth")
    assert [t.name for t in fig.data] == ["GPT-2 small", "ours"]
    assert list(fig.data[0].x) == [80.0, 90.0, 50.0] and list(fig.data[1].x) == [75.0]
    assert fig.data[0].marker.symbol != fig.data[1].marker.symbol  # the models told apart without colour
    bars = charts.logit_bars(["clean", "corrupt"], [3.2, -0.4], title="diff")
    assert list(bars.data[0].y) == [3.2, -0.4] and list(bars.data[0].text) == ["+3.20", "-0.40"]
    assert bars.layout.yaxis.range[0] < -0.4
