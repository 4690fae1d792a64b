"""What the page says about the circuit, computed from its file (never typed in): the task's logit
differences, each class with its strongest head and the measurement that put it there, the edges
between classes with their path-patching effect, faithfulness, and where SmolLM2's circuit differs
from GPT-2 small's published one (Wang et al. 2022, arXiv 2211.00593). No streamlit here.

Text comes from dashboard/content/circuit.py; layers and heads are written from 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dashboard.content import circuit as text
from dashboard.views.circuit.data import Circuit, Head, receivers_class
from dashboard.widgets import md

# The grid that decides each class (core/measures/circuit_classes.py): the name movers' direct path
# to the logits, the S-inhibition heads' path to the name movers' queries, and so on down.
DECIDING = {
    "name_mover": "direct",
    "negative_name_mover": "direct",
    "s_inhibition": "q",
    "induction": "kv",
    "duplicate_token": "kv",
    "previous_token": "previous_k",
}
PATH_WORDS = {
    "q": "queries",
    "k": "keys",
    "v": "values",
    "kv": "keys and values (summed)",
    "previous_k": "keys",
}


@dataclass(frozen=True)
class Evidence:
    """The figure that put a head in its class: a restored fraction along one path."""

    value: float
    grid: str  # the grid's name: "direct", "q", "kv", "previous_k" ...
    to: str | None  # the receivers' class (None: the logits, or receivers the file does not name)
    receivers: tuple[Head, ...]  # () for the logits


@dataclass(frozen=True)
class Edge:
    sender: Head
    receiver: Head | None  # None: the logits
    value: float
    grid: str


def shown(head: Head) -> str:
    return f"layer {head[0] + 1} head {head[1] + 1}"


def share(value: float) -> str:
    return f"{abs(value):.0%}"


def evidence(circuit: Circuit, name: str, head: Head) -> Evidence | None:
    """The head's deciding figure: the file's own ("figure" in its evidence), else read from the class's
    deciding grid; None when the file has neither."""
    grid_name = DECIDING.get(name, "direct")
    grid = circuit.grid(grid_name)
    figures = circuit.figures.get(name, {}).get(head, {})
    value = figures.get("figure")
    if value is None and grid is not None:
        value = float(grid.restored[head])
    if value is None or not math.isfinite(value):
        return None
    receivers = grid.to if grid is not None else ()
    to = receivers_class(circuit, grid) if grid is not None and receivers else None
    return Evidence(float(value), grid_name, to, receivers)


def edges(circuit: Circuit) -> list[Edge]:
    """From each head of the circuit to the heads whose q, k or v its deciding path ends at (the logits
    for the name movers), weighted by its figure: who feeds whom, and how much."""
    out = []
    for name, head in circuit.heads():
        found = evidence(circuit, name, head)
        if found is None:
            continue
        if found.grid == "direct":
            out.append(Edge(head, None, found.value, found.grid))
            continue
        out += [Edge(head, r, found.value, found.grid) for r in found.receivers if r[0] > head[0]]
    return out


def describe_evidence(found: Evidence | None, bold: bool = False) -> str:
    """ "restores 61% of the logit difference along its direct path to the logits" (plain text, or the
    share in bold for markdown)."""
    if found is None:
        return text.NO_VALUE
    verb = text.VERB_UP if found.value >= 0 else text.VERB_DOWN
    amount = f"**{share(found.value)}**" if bold else share(found.value)
    if found.grid == "direct":
        return text.EVIDENCE_DIRECT.format(verb=verb, share=amount)
    receivers = class_label(found.to) if found.to else "next heads"
    via = PATH_WORDS.get(found.grid, found.grid)
    return text.EVIDENCE_PATH.format(verb=verb, share=amount, to=receivers, via=via)


# ---- the statements -----------------------------------------------------------------------------------


def task_line(circuit: Circuit) -> str:
    """The task in numbers: the mean logit differences, and the odds e^|diff| the clean one means."""
    ratio = math.exp(min(abs(circuit.clean), 50.0))
    odds = f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"
    said = (text.ODDS_IO if circuit.clean >= 0 else text.ODDS_S).format(odds=odds)
    return text.TASK_LINE.format(
        n=len(circuit.prompts), clean=circuit.clean, corrupt=circuit.corrupt, odds=said
    )


def class_label(name: str, n: int = 2) -> str:
    """The class's name, plural unless n is 1."""
    if name not in text.CLASSES:
        return name.replace("_", " ")
    return text.CLASSES[name].one if n == 1 else text.CLASSES[name].label


def class_count(circuit: Circuit, name: str) -> str:
    """ "3 name movers", "1 induction head", "no S-inhibition heads" """
    n = len(circuit.classes.get(name, ()))
    return f"{n or 'no'} {class_label(name, n)}"


def class_line(circuit: Circuit, name: str) -> str:
    label = class_label(name)
    heads = circuit.classes.get(name, ())
    if not heads:
        skipped = next((why for stage, why in circuit.skipped.items() if stage == DECIDING.get(name)), None)
        return text.NO_CLASS.format(label=label) + (f" ({skipped})" if skipped else "")
    listed = ", ".join(f"L{h[0] + 1} H{h[1] + 1}" for h in heads)
    line = text.CLASS_LINE.format(count=len(heads), label=class_label(name, len(heads)), heads=listed)
    scored = [(h, evidence(circuit, name, h)) for h in heads]
    scored = [(h, e) for h, e in scored if e is not None]
    if scored:
        head, best = max(scored, key=lambda pair: abs(pair[1].value))
        what = describe_evidence(best, bold=True)
        line += text.STRONGEST.format(layer=head[0] + 1, head=head[1] + 1, what=what)
    return line


def direct_only(circuit: Circuit) -> list:
    """The heads with a direct effect past the threshold that the name-mover tests left out and no other
    class took, largest effect first."""
    placed = {h for _, h in circuit.heads()}
    found = [x for x in circuit.left_out.get("direct_only", ()) if x.head not in placed]
    return sorted(found, key=lambda x: -abs(x.figure))


def class_short(circuit: Circuit, name: str, shown: int = 4) -> str:
    """A projector's line: "**2 name movers**: L24 H1 45%, L24 H3 12%" (each head's figure)."""
    heads = circuit.classes.get(name, ())
    if not heads:
        return text.NO_CLASS.format(label=class_label(name))
    parts = []
    for head in heads[:shown]:
        found = evidence(circuit, name, head)
        figure = "" if found is None else f" {'−' if found.value < 0 else ''}{share(found.value)}"
        parts.append(f"L{head[0] + 1} H{head[1] + 1}{figure}")
    more = text.SHORT_MORE.format(n=len(heads) - shown) if len(heads) > shown else ""
    label = class_label(name, len(heads))
    return text.CLASS_SHORT.format(count=len(heads), label=label, heads=", ".join(parts) + more)


def left_out_short(circuit: Circuit) -> str | None:
    found = direct_only(circuit)
    if not found:
        return None
    top = found[0]
    verb = text.VERB_UP if top.figure >= 0 else text.VERB_DOWN
    return text.LEFT_OUT_SHORT.format(
        n=len(found), layer=top.head[0] + 1, head=top.head[1] + 1, verb=verb, share=share(top.figure)
    )


def left_out_line(circuit: Circuit, shown: int = 3) -> str | None:
    """The heads with a direct effect the name-mover tests left out, largest first, with why."""
    found = direct_only(circuit)
    if not found:
        return None
    heads = ", ".join(
        text.LEFT_OUT_HEAD.format(
            layer=x.head[0] + 1, head=x.head[1] + 1, verb=text.VERB_UP if x.figure >= 0 else text.VERB_DOWN,
            share=share(x.figure), failed=md("; ".join(x.failed)) or "the tests",
        )
        for x in found[:shown]
    )  # fmt: skip
    more = text.LEFT_OUT_MORE.format(n=len(found) - shown) if len(found) > shown else ""
    return text.LEFT_OUT_LINE.format(heads=heads, more=more)


def faithful_line(circuit: Circuit) -> str | None:
    if circuit.faithfulness is None:
        return None
    n_in = len({h for _, h in circuit.heads()})
    n_out = int(np.prod(circuit.shape)) - n_in
    nats = ""
    if circuit.circuit_diff is not None:
        nats = text.FAITHFUL_NATS.format(circuit=circuit.circuit_diff, clean=circuit.clean)
    return text.FAITHFUL_LINE.format(n_in=n_in, n_out=n_out, share=f"{circuit.faithfulness:.0%}", nats=nats)


# ---- beside GPT-2 small ------------------------------------------------------------------------------


def depth(heads: tuple[Head, ...] | list[Head], n_layers: int) -> np.ndarray:
    """How far down the model each head sits: layer ℓ (from 1) of L as ℓ / L."""
    return np.array([(h[0] + 1) / n_layers for h in heads], dtype=np.float64)


def _spread(heads, n_layers: int) -> str:
    if not heads:
        return text.GPT2_NONE
    layers = sorted({h[0] + 1 for h in heads})
    span = f"layer {layers[0]}" if len(layers) == 1 else f"layers {layers[0]}–{layers[-1]}"
    d = depth(heads, n_layers)
    return text.GPT2_COUNT.format(n=len(heads), layers=span, depth=_span(d))


def gpt2_lines(circuit: Circuit) -> list[str]:
    """Each class side by side with GPT-2 small's: how many heads, which layers, how far down."""
    n_layers = circuit.shape[0]
    lines = []
    for name, info in text.CLASSES.items():
        theirs = text.GPT2_CLASSES.get(name, ())
        ours = circuit.classes.get(name, ())
        gpt2 = _spread(theirs, text.GPT2_SHAPE[0])
        here = _spread(ours, n_layers)
        lines.append(
            text.GPT2_LINE.format(label=info.label[0].upper() + info.label[1:], gpt2=gpt2, ours=here)
        )
    return lines


def class_order(classes: dict, n_layers: int) -> list[str]:
    """Classes with heads, from the top of the model down (by their heads' mean depth)."""
    placed = {name: depth(heads, n_layers).mean() for name, heads in classes.items() if heads}
    return sorted(placed, key=lambda name: placed[name])


def gpt2_differences(circuit: Circuit, short: bool = False) -> list[str]:
    """Where SmolLM2's circuit differs: classes missing here, the order of classes down the layers, the
    classes that sit deeper or higher, the sizes (short: the order without its chain of names, no note
    on the backup name movers)."""
    said = []
    missing = [
        text.CLASSES[n].label for n in text.CLASSES if text.GPT2_CLASSES.get(n) and not circuit.classes.get(n)
    ]
    if missing:
        said.append(text.MISSING_CLASSES.format(names=", ".join(missing)))
    both = [n for n in text.CLASSES if text.GPT2_CLASSES.get(n) and circuit.classes.get(n)]
    theirs = class_order({n: text.GPT2_CLASSES[n] for n in both}, text.GPT2_SHAPE[0])
    ours = class_order({n: circuit.classes[n] for n in both}, circuit.shape[0])
    if len(both) > 1:
        words = [" → ".join(text.CLASSES[n].label for n in order) for order in (theirs, ours)]
        if theirs == ours:
            said.append(text.ORDER_SAME_SHORT if short else text.ORDER_SAME.format(order=words[1]))
        else:
            said.append(text.ORDER_DIFF.format(theirs=words[0], ours=words[1]))
    said += _depth_moves(circuit, both)
    said.append(_sizes(circuit))
    if not short:
        said.append(text.BACKUP_NOTE.format(n=len(text.GPT2_CLASSES["backup_name_mover"])))
    return said


def _depth_moves(circuit: Circuit, both: list[str]) -> list[str]:
    """Classes whose heads all sit outside the depths of GPT-2 small's heads of the class."""
    said = []
    for name in both:
        theirs = depth(text.GPT2_CLASSES[name], text.GPT2_SHAPE[0])
        ours = depth(circuit.classes[name], circuit.shape[0])
        if ours.min() > theirs.max() or ours.max() < theirs.min():
            where = "deeper" if ours.min() > theirs.max() else "higher"
            said.append(
                text.DEPTH_MOVED.format(
                    label=text.CLASSES[name].label[:1].upper() + text.CLASSES[name].label[1:], where=where,
                    ours=_span(ours), theirs=_span(theirs),
                )
            )  # fmt: skip
    return said


def _span(depths: np.ndarray) -> str:
    return f"{depths.min():.0%}" if depths.min() == depths.max() else f"{depths.min():.0%}–{depths.max():.0%}"


def _sizes(circuit: Circuit) -> str:
    """How many heads each circuit has, of how many."""
    ours = len({h for _, h in circuit.heads()})
    theirs = len({h for heads in text.GPT2_CLASSES.values() for h in heads})
    n_ours, n_theirs = int(np.prod(circuit.shape)), int(np.prod(text.GPT2_SHAPE))
    return text.SIZES.format(
        ours=ours, n_ours=n_ours, share_ours=f"{ours / n_ours:.0%}",
        theirs=theirs, n_theirs=n_theirs, share_theirs=f"{theirs / n_theirs:.0%}",
    )  # fmt: skip


def model_name(circuit: Circuit) -> str:
    """The model's name without the engine's note in brackets: "SmolLM2-135M-Instruct"."""
    return circuit.model.split(" (")[0].strip() or circuit.model
