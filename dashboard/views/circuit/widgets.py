"""The circuit page's controls and tables: the view switch, the prompt and head pickers, the link that
opens the picked head on explore, the table of the circuit's heads (each with the figure that put it
in its class and its own link), and the file's record. Each picker writes the page's canonical
session keys (links.py), so the link follows."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.content import circuit as text
from dashboard.presenter import presenting
from dashboard.views.circuit import findings, links
from dashboard.views.circuit.data import Circuit, Head
from dashboard.widgets import md

PICK_KEY = "circuit_pick"  # the head picker's widget: "layer.head", 0-indexed
PROMPT_CHARS = 90  # a prompt in the picker is cut to this many characters
# the heads' table, the link in view at any width
COLUMNS = ("class", "layer", "head", "explore", "restored", "what put it there", "its other figures")


def view_ui() -> str:
    ss = st.session_state
    if ss.get("circuit_view") not in text.VIEWS:
        ss["circuit_view"] = "graph"
    return (
        st.segmented_control(
            "View", list(text.VIEWS), format_func=text.VIEWS.get, key="circuit_view", required=True,
            help=text.VIEW_HELP,
        )
        or "graph"
    )  # fmt: skip


def default_head(circuit: Circuit) -> Head:
    """The head shown first: the name mover with the largest direct effect (any head of the circuit
    when it has no name mover; layer 1 head 1 when it has none at all)."""
    movers = circuit.classes.get("name_mover") or tuple(h for _, h in circuit.heads())
    if not movers:
        return (0, 0)
    return max(
        movers, key=lambda h: abs(float(circuit.direct[h])) if circuit.direct[h] == circuit.direct[h] else 0
    )


def picked(circuit: Circuit) -> Head:
    """The canonical picked head (links.py's keys), the default one when the link names none."""
    ss = st.session_state
    layer, head = ss.get("circuit_layer"), ss.get("circuit_head")
    if layer is None or head is None:
        layer, head = default_head(circuit)
        ss["circuit_layer"], ss["circuit_head"] = layer, head
    return int(layer), int(head)


def _set_pick() -> None:
    raw = str(st.session_state.get(PICK_KEY, ""))
    layer, _, head = raw.partition(".")
    if layer.isdigit() and head.isdigit():
        st.session_state["circuit_layer"], st.session_state["circuit_head"] = int(layer), int(head)


def on_graph_select() -> None:
    """Callback: a click on a node picks its head (the point's customdata is [layer, head])."""
    event = st.session_state.get("circuit_graph")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, dict):  # a typed array may arrive as {"0": l, "1": h}
            data = [data.get("0"), data.get("1")]
        if isinstance(data, list) and len(data) == 2 and all(isinstance(v, int | float) for v in data):
            st.session_state["circuit_layer"], st.session_state["circuit_head"] = int(data[0]), int(data[1])
            return


def _head_name(circuit: Circuit, head: Head) -> str:
    name = circuit.class_of(*head)
    where = f"Layer {head[0] + 1}, head {head[1] + 1}"
    if name is None:
        return where
    return f"{where} · {text.CLASSES[name].one if name in text.CLASSES else name.replace('_', ' ')}"


def pick_ui(circuit: Circuit) -> tuple[int, Head]:
    """The prompt explore opens with and the head: the circuit's heads first, then every other."""
    ss = st.session_state
    head = picked(circuit)
    ours = [h for _, h in circuit.heads()]
    rest = [(l, h) for l in range(circuit.shape[0]) for h in range(circuit.shape[1]) if (l, h) not in ours]  # noqa: E741
    options = [f"{l}.{h}" for l, h in dict.fromkeys(ours + rest)]  # noqa: E741
    ss[PICK_KEY] = f"{head[0]}.{head[1]}"
    prompts = list(range(len(circuit.prompts)))
    left, right = st.columns(2)
    with left:
        index = st.selectbox(
            text.PROMPT_LABEL, prompts, key="circuit_prompt", help=text.PROMPT_HELP,
            format_func=lambda i: _cut(circuit.prompts[i].text),
        )  # fmt: skip
    with right:
        st.selectbox(
            text.HEAD_LABEL, options, key=PICK_KEY, on_change=_set_pick, help=text.HEAD_HELP,
            format_func=lambda o: _head_name(circuit, tuple(int(v) for v in o.split("."))),
        )  # fmt: skip
    return int(index or 0), head


def _cut(prompt: str) -> str:
    return prompt if len(prompt) <= PROMPT_CHARS else prompt[: PROMPT_CHARS - 1] + "…"


def link_ui(circuit: Circuit, prompt: int, head: Head) -> None:
    """What the picked head is (its class and the figure that put it there) and its link to explore."""
    name = circuit.class_of(*head)
    if name is not None:
        info = text.CLASSES.get(name, text.OTHER)
        found = findings.describe_evidence(findings.evidence(circuit, name, head), bold=True)
        one = info.one if name in text.CLASSES else name.replace("_", " ")
        article = "an" if one[:1] in "aeiouAEIOU" else "a"
        said = text.PICKED_SHORT if presenting() else text.PICKED  # a projector: without the class's role
        st.markdown(
            said.format(
                layer=head[0] + 1, head=head[1] + 1, a=article, one=one, does=info.does or "—", value=found
            )
        )
    st.link_button(
        text.OPEN_LABEL.format(layer=head[0] + 1, head=head[1] + 1),
        links.explore_url(circuit.prompts[prompt].text, *head),
        icon=":material/open_in_new:",
        type="primary",
    )


def heads_table_ui(circuit: Circuit, prompt: int) -> None:
    """Every head of the circuit: class, layer and head (from 1), its figure, and a link to explore."""
    rows = []
    for name, head in circuit.heads():
        found = findings.evidence(circuit, name, head)
        rows.append(
            {
                "class": text.CLASSES[name].one if name in text.CLASSES else name.replace("_", " "),
                "layer": head[0] + 1,
                "head": head[1] + 1,
                "restored": None if found is None else round(found.value, 4),
                "what put it there": findings.describe_evidence(found),
                "its other figures": _figures(circuit, name, head),
                "explore": links.explore_url(circuit.prompts[prompt].text, *head),
            }
        )
    st.subheader(text.HEADS_TITLE)
    if not rows:
        st.info(text.NO_CLASS.format(label="any class"))
        return
    config = {
        "layer": st.column_config.NumberColumn("layer", format="%d", width=52),
        "head": st.column_config.NumberColumn("head", format="%d", width=52),
        "restored": st.column_config.NumberColumn("restored", format="%.2f", width="small"),
        "explore": st.column_config.LinkColumn("explore", display_text="Open ↗", width=72),
    }
    st.dataframe(
        pd.DataFrame(rows), column_config=config, hide_index=True, key="circuit_table",
        column_order=COLUMNS,
    )  # fmt: skip


def _when(raw: object) -> str:
    """ "2026-11-29T10:40:00Z" as "2026-11-29 10:40 UTC"; anything else as it is."""
    text_ = str(raw)
    if len(text_) >= 16 and text_[10] == "T":
        return f"{text_[:10]} {text_[11:16]} UTC"
    return text_


def _figures(circuit: Circuit, name: str, head: Head) -> str:
    """The head's other measured figures, as the file has them: "END→IO 0.62 · copy score 0.90"."""
    figures = circuit.figures.get(name, {}).get(head, {})
    shown = [f"{label} {figures[key]:.2f}" for key, label in text.FIGURE_NAMES.items() if key in figures]
    return " · ".join(shown)


def record_ui(circuit: Circuit) -> None:
    """How the file was made: its command, date, time taken, version and commit (the file's record)."""
    record = circuit.record
    if not record:
        st.caption(text.RECORD_NONE)
        return
    seconds = next(
        (record[k] for k in ("seconds", "time_s", "took_s") if isinstance(record.get(k), int | float)), None
    )
    took = f" in {seconds / 60:.1f} min" if seconds is not None and seconds >= 90 else ""
    took = took or (f" in {seconds:,.0f} s" if seconds is not None else "")
    made = [f"version {record['version']}" if record.get("version") else ""]
    made.append(f"commit {str(record['commit'])[:10]}" if record.get("commit") else "")
    version = ", ".join(m for m in made if m)
    st.caption(
        text.RECORD_LINE.format(
            when=md(_when(record.get("date", "an unrecorded date"))),
            command=str(record.get("command", "python -m core circuit")).replace("`", "'"),
            took=took,
            version=f" ({md(version)})" if version else "",
        )
    )
