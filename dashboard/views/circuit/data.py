"""The circuit's file read and checked: the JSON `python -m core circuit` writes (the contract in
ARCHITECTURE.md: model, task, prompts, logit_diff_clean, logit_diff_corrupt, direct [L][H], classes,
faithfulness; "evidence" and "record" beside them) as one `Circuit`, or a `CircuitFileError` that
says in a few words what is wrong. No streamlit here: the page says it.

The path-patching grids are read from the evidence's "paths" (core/measures/circuit.py: by name,
"direct", "q", "k", "v", "kv", "previous_k", each {"via", "to": the receivers, "restored" [L][H]});
a file that keeps them elsewhere has them found wherever an object holds a "restored" grid and a "via"
of "q", "k" or "v". Each head's figures (the one that put it in its class first) come from the
evidence's "heads". Letters: L layers, H heads per layer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dashboard.content.circuit import CLASSES

Head = tuple[int, int]  # (layer, head), 0-indexed
MAX_BYTES = 20_000_000  # the file is a few hundred kilobytes; anything far larger is not ours
MAX_DEPTH = 6  # how deep the evidence is searched for grids
VIAS = ("q", "k", "v")
Figures = dict[str, float]  # a head's measured figures by name; "figure": the one that decided its class


class CircuitFileError(ValueError):
    """The file is missing a part the page needs, or holds it in another shape."""


@dataclass(frozen=True)
class Prompt:
    text: str
    io: str  # the indirect object, as the model reads it (with its leading space)
    s: str  # the subject
    corrupt: str


@dataclass(frozen=True)
class Grid:
    """One path-patching sweep: each sender's restored fraction along paths to `to`'s q, k or v."""

    name: str  # "direct", "q", "k", "v", "kv" (k + v), "previous_k"
    via: str | None  # "q" | "k" | "v" | "k+v"; None: the logits
    to: tuple[Head, ...]  # the receivers; () for the logits, or when the file does not name them
    restored: np.ndarray  # (L, H), NaN for senders that cannot reach the receivers


@dataclass(frozen=True)
class LeftOut:
    """A head a path figure singled out that the class tests left out (evidence "left_out")."""

    head: Head
    figure: float  # its path figure (a direct effect for "direct_only")
    failed: tuple[str, ...]  # the tests it failed, in the search's words


@dataclass(frozen=True)
class Circuit:
    model: str
    task: str
    prompts: tuple[Prompt, ...]
    clean: float  # mean logit(IO) - logit(S) at the last position, prompts as written
    corrupt: float  # the same with three other names (ABC)
    direct: np.ndarray  # (L, H) restored fraction along the path to the logits
    classes: dict[str, tuple[Head, ...]]  # CLASSES' order first, then any other the file has
    faithfulness: float | None  # the circuit alone keeps this share of the logit difference
    grids: Mapping[str, Grid] = field(default_factory=dict)  # by name
    circuit_diff: float | None = None  # the circuit alone's logit difference, when the file says
    figures: Mapping[str, Mapping[Head, Figures]] = field(default_factory=dict)  # class -> head -> figures
    skipped: Mapping[str, str] = field(default_factory=dict)  # a step that could not run, and why
    thresholds: Mapping[str, float] = field(default_factory=dict)
    left_out: Mapping[str, tuple[LeftOut, ...]] = field(default_factory=dict)  # "direct_only", ...
    record: Mapping = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return self.direct.shape  # type: ignore[return-value]

    def class_of(self, layer: int, head: int) -> str | None:
        return next((name for name, heads in self.classes.items() if (layer, head) in heads), None)

    def heads(self) -> list[tuple[str, Head]]:
        """Every head of the circuit with its class, class by class."""
        return [(name, head) for name, heads in self.classes.items() for head in heads]

    def grid(self, name: str) -> Grid | None:
        if name == "direct":
            return self.grids.get("direct") or Grid("direct", None, (), self.direct)
        if name == "kv" and "kv" not in self.grids and {"k", "v"} <= set(self.grids):
            k, v = self.grids["k"], self.grids["v"]  # a file with no sum: the search's own figure
            return Grid("kv", "k+v", k.to, k.restored + v.restored)
        return self.grids.get(name)


# ---- reading -----------------------------------------------------------------------------------------


def read_file(path: Path) -> Circuit:
    """The circuit in `path`; FileNotFoundError when there is none, CircuitFileError when it is unusable."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise CircuitFileError(f"it is {size:,} bytes, far larger than a circuit's file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise CircuitFileError("it is not valid JSON") from err
    return parse(data)


def parse(data: object) -> Circuit:
    """A circuit from the decoded JSON, checked part by part."""
    if not isinstance(data, Mapping):
        raise CircuitFileError("it is not a JSON object")
    direct = _grid(data.get("direct"), "direct")
    shape = direct.shape
    evidence = data.get("evidence") if isinstance(data.get("evidence"), Mapping) else {}
    record = data.get("record") if isinstance(data.get("record"), Mapping) else {}
    return Circuit(
        model=_text(data.get("model"), "model"),
        task=_text(data.get("task"), "task"),
        prompts=_prompts(data.get("prompts")),
        clean=_number(data.get("logit_diff_clean"), "logit_diff_clean"),
        corrupt=_number(data.get("logit_diff_corrupt"), "logit_diff_corrupt"),
        direct=direct,
        classes=_classes(data.get("classes"), shape),
        faithfulness=_optional_number(data.get("faithfulness")),
        grids={n: g for n, g in find_grids(evidence).items() if g.restored.shape == shape},
        circuit_diff=_optional_number(_first_key(evidence, ("logit_diff_circuit", "circuit_logit_diff"))),
        figures=_figures(evidence.get("heads"), shape),
        skipped={str(k): str(v) for k, v in (evidence.get("skipped") or {}).items()}
        if isinstance(evidence.get("skipped"), Mapping)
        else {},
        thresholds={
            str(k): float(v)
            for k, v in (evidence.get("thresholds") or {}).items()
            if _optional_number(v) is not None
        }
        if isinstance(evidence.get("thresholds"), Mapping)
        else {},
        left_out=_left_out(evidence.get("left_out"), shape),
        record=record,
    )


def _text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CircuitFileError(f"its `{name}` is not a name")
    return value


def _number(value: object, name: str) -> float:
    number = _optional_number(value)
    if number is None:
        raise CircuitFileError(f"its `{name}` is not a number")
    return number


def _optional_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _grid(value: object, name: str) -> np.ndarray:
    """A layers x heads grid of numbers (null for a head with no value) as float64, NaN for null."""
    try:
        rows = [[np.nan if v is None else v for v in row] for row in value]  # type: ignore[union-attr]
        grid = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise CircuitFileError(f"its `{name}` is not a grid of numbers, layers by heads") from err
    if grid.ndim != 2 or 0 in grid.shape:
        raise CircuitFileError(f"its `{name}` is not a grid of numbers, layers by heads")
    return grid


def _prompts(value: object) -> tuple[Prompt, ...]:
    if not isinstance(value, list) or not value:
        raise CircuitFileError("it has no prompts")
    prompts = []
    for item in value:
        fields = [item.get(k) if isinstance(item, Mapping) else None for k in ("text", "io", "s", "corrupt")]
        if not all(isinstance(f, str) for f in fields):
            raise CircuitFileError("a prompt lacks its text, names or corrupted text")
        prompts.append(Prompt(*fields))
    return tuple(prompts)


def _heads(value: object, shape: tuple[int, int], name: str) -> tuple[Head, ...]:
    """[[layer, head], ...] inside the model's shape, in the file's order, no repeats."""
    if not isinstance(value, list):
        raise CircuitFileError(f"its class `{name}` is not a list of heads")
    heads: list[Head] = []
    for pair in value:
        ok = isinstance(pair, list | tuple) and len(pair) == 2
        ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
        if not ok or not (0 <= pair[0] < shape[0] and 0 <= pair[1] < shape[1]):
            raise CircuitFileError(f"its class `{name}` names a head the model does not have")
        if (pair[0], pair[1]) not in heads:
            heads.append((pair[0], pair[1]))
    return tuple(heads)


def _classes(value: object, shape: tuple[int, int]) -> dict[str, tuple[Head, ...]]:
    if not isinstance(value, Mapping):
        raise CircuitFileError("it has no classes of heads")
    names = [n for n in CLASSES if n in value] + [n for n in value if n not in CLASSES and isinstance(n, str)]
    return {name: _heads(value[name], shape, name) for name in names}


# ---- the evidence ------------------------------------------------------------------------------------


def _walk(value: object, depth: int = 0) -> Iterator[Mapping]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        yield value
        children = value.values()
    elif isinstance(value, list) and value and isinstance(value[0], Mapping):
        children = value
    else:
        return
    for child in children:
        yield from _walk(child, depth + 1)


def _read_grid(name: str, node: Mapping) -> Grid | None:
    via = node.get("via")
    try:
        restored = _grid(node["restored"], "restored")
        to = tuple((int(p[0]), int(p[1])) for p in node.get("to") or ())
    except (CircuitFileError, KeyError, TypeError, ValueError, IndexError):
        return None
    return Grid(name, via if isinstance(via, str) else None, to, restored)


def find_grids(evidence: object) -> dict[str, Grid]:
    """The path-patching grids by name: the evidence's "paths" when it has them, else every object
    with a "restored" grid and a "via" of q, k or v found in it (named by its via, the first of each)."""
    paths = evidence.get("paths") if isinstance(evidence, Mapping) else None
    if isinstance(paths, Mapping):
        read = {str(n): _read_grid(str(n), node) for n, node in paths.items() if isinstance(node, Mapping)}
        return {n: g for n, g in read.items() if g is not None}
    found: dict[str, Grid] = {}
    for node in _walk(evidence):
        via = node.get("via")
        if via in VIAS and via not in found and "restored" in node and (grid := _read_grid(via, node)):
            found[via] = grid
    return found


def _figures(value: object, shape: tuple[int, int]) -> dict[str, dict[Head, Figures]]:
    """The evidence's "heads": class -> [{"head": [l, h], "figure": x, name: x, ...}] as class -> head ->
    {name: x} (numbers only, the file's order kept: the deciding figure's name comes first after "figure")."""
    out: dict[str, dict[Head, Figures]] = {}
    if not isinstance(value, Mapping):
        return out
    for name, rows in value.items():
        for row in rows if isinstance(rows, list) else ():
            head = row.get("head") if isinstance(row, Mapping) else None
            if not (isinstance(head, list) and len(head) == 2 and all(isinstance(v, int) for v in head)):
                continue
            if not (0 <= head[0] < shape[0] and 0 <= head[1] < shape[1]):
                continue
            numbers = {
                str(k): float(v) for k, v in row.items() if k != "head" and _optional_number(v) is not None
            }
            out.setdefault(str(name), {})[(head[0], head[1])] = numbers
    return out


def _left_out(value: object, shape: tuple[int, int]) -> dict[str, tuple[LeftOut, ...]]:
    out: dict[str, tuple[LeftOut, ...]] = {}
    for name, rows in value.items() if isinstance(value, Mapping) else ():
        found = []
        for row in rows if isinstance(rows, list) else ():
            head, figure = (
                (row.get("head"), _optional_number(row.get("figure")))
                if isinstance(row, Mapping)
                else (None, None)
            )
            ok = isinstance(head, list) and len(head) == 2 and all(isinstance(v, int) for v in head)
            if not ok or figure is None or not (0 <= head[0] < shape[0] and 0 <= head[1] < shape[1]):
                continue
            failed = row.get("failed") if isinstance(row.get("failed"), list) else []
            found.append(LeftOut((head[0], head[1]), figure, tuple(str(f) for f in failed)))
        out[str(name)] = tuple(found)
    return out


def _first_key(evidence: object, names: tuple[str, ...]) -> object:
    for node in _walk(evidence):
        for name in names:
            if name in node:
                return node[name]
    return None


def receivers_class(circuit: Circuit, grid: Grid) -> str | None:
    """The class whose heads are the grid's receivers (most of them); None for the logits, or when the
    file does not name them."""
    best, overlap = None, 0
    for name, heads in circuit.classes.items():
        shared = len(set(heads) & set(grid.to))
        if shared > overlap:
            best, overlap = name, shared
    return best
