"""What compare's patching grids say, in sentences computed from them (core/measures/patch_summary.py
finds the numbers; dashboard/content/patching.py holds the wording). No Streamlit: plain functions of
the grids, so the tests can check every sentence against the numbers it states.

Layers and heads are 0-indexed in arguments and written from 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.measures.patch_summary import CARRIES, carriers, stretches
from dashboard.content import patching as text
from dashboard.widgets import md


@dataclass(frozen=True)
class Link:
    """The head whose attention from the focus word to the target is largest, and its weight."""

    focus: str
    target: str
    layer: int
    head: int
    weight: float


def _plural(n: int) -> dict:
    return {"s": "" if n == 1 else "s", "verb": "s" if n == 1 else ""}


def _layers(layers: Sequence[int]) -> tuple[str, str]:
    """("s" or "", "3–5" or "4"), written from 1."""
    low, high = min(layers) + 1, max(layers) + 1
    return ("", str(low)) if low == high else ("s", f"{low}–{high}")


def heads_statement(restored: np.ndarray, link: Link | None) -> str:
    """The heads grid in words: the heads that carry the difference (or that none alone does), those
    that push the other way, and what the head with the clearest focus → target attention restores."""
    grid = np.asarray(restored, np.float64)
    found = carriers(grid)
    if found:
        ls, layers = _layers([c.layer for c in found])
        top = found[0]
        said = text.CARRIED.format(
            n=len(found), **_plural(len(found)), least=CARRIES, ls=ls, layers=layers,
            layer=top.layer + 1, head=top.index + 1, top=top.restored,
        )  # fmt: skip
    else:
        layer, head = np.unravel_index(int(np.argmax(grid)), grid.shape)
        said = text.SPREAD.format(least=CARRIES, layer=layer + 1, head=head + 1, top=grid[layer, head])
    if against := carriers(-grid):
        low = against[0]
        said += " " + text.PUSH_BACK.format(
            n=len(against),
            s="" if len(against) == 1 else "s",
            push="pushes" if len(against) == 1 else "push",
            layer=low.layer + 1,
            head=low.index + 1,
            low=-low.restored,
        )
    if link is not None:
        restored_there = float(grid[link.layer, link.head])
        words = {"focus": md(link.focus), "target": md(link.target)}
        verdict = text.LINK_CARRIES if restored_there >= CARRIES else text.LINK_WEAK.format(**words)
        said += " " + text.LINK.format(
            **words, layer=link.layer + 1, head=link.head + 1, weight=link.weight,
            restored=restored_there, verdict=verdict,
        )  # fmt: skip
    return said


def values_statement(clean: float, corrupt: float, means: tuple[str, str] | None) -> str:
    """Both runs' answers, and whether it flips between them; `means` says what a positive and a
    negative value mean ("“it” is nearer “trophy”"), None for a metric with no sides."""
    said = text.VALUES.format(clean=clean, corrupt=corrupt, change=corrupt - clean)
    if means is None or clean == 0 or corrupt == 0:
        return said
    one, two = (means[0] if value > 0 else means[1] for value in (clean, corrupt))
    return said + " " + (text.NO_FLIP.format(one=one) if one == two else text.FLIPS.format(one=one, two=two))


def row_label(row: int) -> str:
    """A positions grid's row: the hidden state entering layer row + 1."""
    return text.EMBEDDINGS if row == 0 else text.AFTER_LAYER.format(n=row)


def trace_statement(restored: np.ndarray, tokens: Sequence[str]) -> str:
    """The positions grid in words: layer by layer, the token whose hidden state restores most."""
    parts = []
    for stretch in stretches(restored):
        rows = row_label(stretch.first)
        if stretch.last != stretch.first:
            rows += " to " + row_label(stretch.last)
        parts.append(
            text.TRACE_PART.format(
                layers=rows,
                token=md(tokens[stretch.position].strip()),
                low=stretch.low,
                high=stretch.high,
            )
        )
    return text.TRACE.format(parts="; ".join(parts))
