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
from dashboard.charts.patching import DECIMALS as SHOWN_DECIMALS
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


def shown(restored: np.ndarray) -> np.ndarray:
    """The grid as its cells print it (SHOWN_DECIMALS): heads are counted on what a reader can check."""
    return np.round(np.asarray(restored, np.float64), SHOWN_DECIMALS)


def beyond(values: Sequence[float]) -> str:
    """One plain line for each stated share past the ends of the scale: over 100% (an overshoot)
    and below 0; empty when every value lies between."""
    lines = [text.OVERSHOOT] if any(v > 1 for v in values) else []
    return " ".join(lines + ([text.BELOW_ZERO] if any(v < 0 for v in values) else []))


def heads_statement(restored: np.ndarray, link: Link | None) -> str:
    """The heads grid in words: the heads that carry the difference (or that none alone does), those
    that push the other way (both counted by CARRIES on the grid as printed), what the head with the
    clearest focus → target attention restores, and what a share past 100% or below 0 means."""
    grid = np.asarray(restored, np.float64)
    stated = []
    if found := carriers(shown(grid)):
        ls, layers = _layers([c.layer for c in found])
        top = grid[found[0].layer, found[0].index]
        said = text.CARRIED.format(
            n=len(found), **_plural(len(found)), least=CARRIES, ls=ls, layers=layers,
            layer=found[0].layer + 1, head=found[0].index + 1, top=top,
        )  # fmt: skip
    else:
        layer, head = np.unravel_index(int(np.argmax(grid)), grid.shape)
        top = grid[layer, head]
        said = text.SPREAD.format(least=CARRIES, layer=layer + 1, head=head + 1, top=top)
    stated.append(top)
    if against := carriers(-shown(grid)):
        low = grid[against[0].layer, against[0].index]
        said += " " + text.PUSH_BACK.format(
            n=len(against), **_plural(len(against)), least=CARRIES,
            layer=against[0].layer + 1, head=against[0].index + 1, low=low,
        )  # fmt: skip
        stated.append(low)
    if link is not None:
        restored_there = float(grid[link.layer, link.head])
        words = {"focus": md(link.focus), "target": md(link.target)}
        verdict = text.LINK_CARRIES if restored_there >= CARRIES else text.LINK_WEAK.format(**words)
        said += " " + text.LINK.format(
            **words, layer=link.layer + 1, head=link.head + 1, weight=link.weight,
            restored=restored_there, verdict=verdict,
        )  # fmt: skip
        stated.append(restored_there)
    return " ".join(filter(None, (said, beyond(stated))))


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
    parts, stated = [], []
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
        stated += [stretch.low, stretch.high]
    return " ".join(filter(None, (text.TRACE.format(parts="; ".join(parts)), beyond(stated))))
