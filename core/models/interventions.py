"""What an engine's `run` may be asked to change: the heads to ablate, checked once for every engine.

Both engines (core/models/bert.py, core/models/pretrained.py) read `ablate` in their forward pass;
this is where a set of heads is checked against the model, so they refuse the same inputs with the
same message. What an ablation does to the output is measured in core/measures/ablation.py.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["check_heads"]


def check_heads(heads: Iterable, n_layers: int, n_heads: int) -> frozenset[tuple[int, int]]:
    """(layer, head) pairs, 0-indexed, as a frozenset; ValueError naming the first that is not in the
    model (or not a pair of whole numbers)."""
    checked = set()
    for pair in heads or ():
        try:
            layer, head = (int(v) for v in pair)
            if (layer, head) != tuple(pair):
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(
                f"a head to ablate is a (layer, head) pair of whole numbers, got {pair!r}"
            ) from None
        if not (0 <= layer < n_layers and 0 <= head < n_heads):
            raise ValueError(
                f"head ({layer}, {head}) is not in this model: layers 0..{n_layers - 1}, "
                f"heads 0..{n_heads - 1} (0-indexed)"
            )
        checked.add((layer, head))
    return frozenset(checked)
