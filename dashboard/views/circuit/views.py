"""The circuit page's views, one figure each with what it shows said in words beside it: the graph,
the path-patching grids (direct, via queries, keys or values), the logit differences, and the classes
beside GPT-2 small's. Every chart goes through dashboard.widgets.chart (its text alternative and its
numbers as a table); every statement is computed from the circuit (findings.py)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard import screen
from dashboard.charts import circuit as charts
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content import circuit as text
from dashboard.presenter import presenting
from dashboard.views.circuit import findings
from dashboard.views.circuit.data import Circuit, Head, receivers_class
from dashboard.views.circuit.widgets import on_graph_select
from dashboard.widgets import chart, chart_filename, md

DIRECT_ONLY = "direct_only"  # the graph's group of heads the name-mover tests left out
# Which classes each view's grid puts heads in (its statements and its boxed cells).
VIEW_CLASSES = {
    "direct": ("name_mover", "negative_name_mover"),
    "q": ("s_inhibition",),
    "kv": ("induction", "duplicate_token"),
    "prev": ("previous_token",),
}


def look() -> charts.Look:
    if presenting():
        return charts.PRESENTER_LOOK
    return charts.PHONE_LOOK if screen.width_class() == "phone" else charts.PAGE_LOOK


def styles(circuit: Circuit) -> dict[str, charts.Style]:
    out = {}
    for name, heads in circuit.classes.items():
        info = text.CLASSES.get(name, text.OTHER)
        label = info.label if name in text.CLASSES else name.replace("_", " ")
        out[name] = charts.Style(f"{label} ({len(heads)})", info.color, info.symbol)
    n = len(findings.direct_only(circuit))
    info = text.DIRECT_ONLY
    out[DIRECT_ONLY] = charts.Style(f"{info.label} ({n})", info.color, info.symbol, minor=True)
    return out


def _nodes(circuit: Circuit) -> dict[str, list[charts.Node]]:
    """The circuit's heads by class, then the heads with a direct effect the tests left out."""
    nodes: dict[str, list[charts.Node]] = {}
    for name, head in circuit.heads():
        info = text.CLASSES.get(name, text.OTHER)
        found = findings.describe_evidence(findings.evidence(circuit, name, head))
        hover = f"Layer {head[0] + 1}, head {head[1] + 1}: {info.one}\n{found}"
        nodes.setdefault(name, []).append(charts.Node(head, hover))
    for x in findings.direct_only(circuit):
        verb = text.VERB_UP if x.figure >= 0 else text.VERB_DOWN
        why = "; ".join(x.failed)
        where = f"Layer {x.head[0] + 1}, head {x.head[1] + 1}: not in the circuit"
        hover = f"{where}\n{verb} {findings.share(x.figure)} directly; {why}"
        nodes.setdefault(DIRECT_ONLY, []).append(charts.Node(x.head, hover))
    return nodes


def _links(circuit: Circuit) -> list[charts.Link]:
    links = [charts.Link(e.sender, e.receiver, e.value) for e in findings.edges(circuit)]
    return links + [charts.Link(x.head, None, x.figure, faint=True) for x in findings.direct_only(circuit)]


def graph_alt(circuit: Circuit) -> str:
    """The graph's statement for a screen reader: how many heads of each class, and the edges."""
    counts = "; ".join(findings.class_count(circuit, n) for n in circuit.classes)
    return (
        f"The circuit's heads by class: {counts}. Edges run from each head to the heads whose input it feeds."
    )


def graph_view(circuit: Circuit, head: Head, beside=None) -> None:
    """The graph, with the task, the classes, the heads left out and faithfulness beside it; then
    `beside()` (presenter mode: the picked head and its link) under them."""
    left, right = st.columns([3, 2], gap="medium")
    fig = charts.circuit_graph(
        circuit.shape, _nodes(circuit), styles(circuit), _links(circuit),
        title=f"The IOI circuit in {findings.model_name(circuit)}",
        subtitle="layer 1 at the top, the answer at the bottom",
        logits_label=text.LOGITS, picked=head, look=look(),
    )  # fmt: skip
    with left:
        name = chart_filename("circuit", circuit.model, "graph")
        chart(
            fig,
            "circuit_graph",
            name,
            alt=graph_alt(circuit),
            on_select=on_graph_select,
            selection_mode="points",
        )
    with right:
        st.markdown(findings.task_line(circuit))
        short = presenting()  # a projector: a line per class, each head's figure
        lines = [
            (findings.class_short if short else findings.class_line)(circuit, n) for n in circuit.classes
        ]
        st.markdown("\n".join(f"- {line}" for line in lines))
        left_out = findings.left_out_short if short else findings.left_out_line
        for line in (left_out(circuit), findings.faithful_line(circuit)):
            if line:
                st.markdown(line)
        if beside is not None:
            beside()


def part_ui() -> str:
    """The k + v view's grid: the sum (what decides the class), keys alone or values alone."""
    ss = st.session_state
    if ss.get("circuit_part") not in text.PARTS:
        ss["circuit_part"] = "kv"
    part = st.segmented_control(
        text.PART_LABEL, list(text.PARTS), format_func=text.PARTS.get, key="circuit_part", required=True
    )
    return part or "kv"


def grid_view(circuit: Circuit, view: str) -> None:
    """One path-patching grid and, beside it, the classes it put heads in (and the k + v view's switch)."""
    left, right = st.columns([3, 2], gap="medium")
    with right:
        name = part_ui() if view == "kv" else text.VIEW_GRIDS[view]
    grid = circuit.grid(name)
    said = [findings.class_line(circuit, n) for n in VIEW_CLASSES[view]]
    with right:
        st.markdown("\n".join(f"- {line}" for line in said))
        # a projector: the largest left out, with why; the page: the three largest
        if view == "direct" and (line := findings.left_out_line(circuit, shown=1 if presenting() else 3)):
            st.markdown(line)
    if grid is None or not np.isfinite(grid.restored).any():
        left.info(text.GRID_MISSING)
        return
    right.caption(text.GRID_CAPTION)
    to = receivers_class(circuit, grid)
    title = text.GRID_TITLES[name].format(to=findings.class_label(to) if to else "next heads")
    classed = [h for n in VIEW_CLASSES[view] for h in circuit.classes.get(n, ())]
    present = presenting()
    fig = charts.path_grid(
        grid.restored, title=title, axes=text.GRID_AXES, bar_title=text.GRID_BAR, outlined=classed,
        sizing=PRESENTER if present else PAGE, max_height=740 if present else 720,
    )  # fmt: skip
    with left:
        chart(fig, f"circuit_grid_{name}", chart_filename("circuit", circuit.model, name), alt=" ".join(said))


def logit_view(circuit: Circuit) -> None:
    labels, values = ["prompts as written", "three other names"], [circuit.clean, circuit.corrupt]
    circuit_diff = circuit.circuit_diff
    if circuit_diff is None and circuit.faithfulness is not None:
        circuit_diff = circuit.faithfulness * circuit.clean  # the share is of the full model's difference
    if circuit_diff is not None:
        labels.append("the circuit alone")
        values.append(circuit_diff)
    fig = charts.logit_bars(labels, values, title="Mean logit difference, logit(IO) − logit(S)", look=look())
    left, right = st.columns([3, 2], gap="medium")
    with left:
        chart(
            fig,
            "circuit_logit",
            chart_filename("circuit", circuit.model, "logit"),
            alt=findings.task_line(circuit),
        )
    with right:
        st.markdown(findings.task_line(circuit))
        first = circuit.prompts[0]
        example = {name: md(getattr(first, name).strip()) for name in ("text", "io", "s", "corrupt")}
        st.markdown(text.EXAMPLE_LINE.format(**example))
        if line := findings.faithful_line(circuit):
            st.markdown(line)


def gpt2_view(circuit: Circuit) -> None:
    names = [n for n in text.CLASSES if text.GPT2_CLASSES.get(n) or circuit.classes.get(n)]
    depths = {
        text.GPT2_NAME: {n: findings.depth(text.GPT2_CLASSES.get(n, ()), text.GPT2_SHAPE[0]) for n in names},
        findings.model_name(circuit): {
            n: findings.depth(circuit.classes.get(n, ()), circuit.shape[0]) for n in names
        },
    }
    style = {
        n: charts.Style(text.CLASSES[n].label, text.CLASSES[n].color, text.CLASSES[n].symbol) for n in names
    }
    title = f"Where each class sits: {text.GPT2_NAME} (filled), {findings.model_name(circuit)} (open)"
    fig = charts.depth_strip(names, depths, style, title=title, look=look())
    short = presenting()  # a projector: the differences alone (the chart has each class's depths)
    differences = findings.gpt2_differences(circuit, short=short)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        name = chart_filename("circuit", circuit.model, "gpt2")
        chart(fig, "circuit_gpt2", name, alt=" ".join(findings.gpt2_differences(circuit)))
    with right:
        if not short:
            st.markdown("\n".join(f"- {line}" for line in findings.gpt2_lines(circuit)))
        st.markdown("\n".join(f"- {line}" for line in differences))


def draw(circuit: Circuit, view: str, head: Head, beside=None) -> None:
    if view == "graph":
        graph_view(circuit, head, beside)
    elif view in VIEW_CLASSES:
        grid_view(circuit, view)
    elif view == "logit":
        logit_view(circuit)
    else:
        gpt2_view(circuit)


def own_grid(direct: np.ndarray, circuit: Circuit, key: str) -> None:
    """The direct effect on the user's own sentence (path patching to the logits, one prompt), and the
    circuit's name movers on it beside their effect on the task's prompts."""
    fig = charts.path_grid(direct, title=text.OWN_TITLE_GRID, axes=text.GRID_AXES, bar_title=text.GRID_BAR)
    top = np.unravel_index(np.nanargmax(np.abs(np.where(np.isfinite(direct), direct, 0))), direct.shape)
    verb = text.VERB_UP if direct[top] >= 0 else text.VERB_DOWN
    said = [
        text.OWN_LARGEST.format(
            layer=top[0] + 1, head=top[1] + 1, verb=verb, share=findings.share(direct[top])
        )
    ]
    movers = circuit.classes.get("name_mover", ()) if direct.shape == circuit.shape else ()
    if movers:
        pairs = ", ".join(
            f"L{h[0] + 1} H{h[1] + 1} {direct[h]:+.0%} ({circuit.direct[h]:+.0%})" for h in movers
        )
        said.append(text.OWN_MOVERS.format(heads=pairs))
    chart(fig, key, chart_filename("circuit", "own", "direct"), alt=" ".join(said))
    st.markdown(" ".join(said))
