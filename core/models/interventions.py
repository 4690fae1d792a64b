"""What an engine's `run` may be asked to change, checked once for every engine: the heads to ablate
(check_heads) and the activations to patch in (Patch, check_patch).

Every engine (core/models/bert.py, gpt2.py, llama.py and the torch references pretrained.py and
pretrained_decoder.py) reads `ablate` and `patch` in its forward pass; this is where they are
checked against the model, so the engines refuse the same inputs with the same message. What an
ablation does to the output is measured in core/measures/ablation.py, what a patch restores in
core/measures/patching.py.

Letters: T positions of the forward pass, D width, d_k one head's width.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Patch", "check_heads", "check_patch"]


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


@dataclass(frozen=True)
class Patch:
    """Activations a forward pass uses instead of the ones it computes (activation patching): the
    caller takes them from another run. A patch of layer l changes nothing before layer l."""

    # (layer, head) -> (T, d_k): the head's weighted sum (its slice of the input to W^O) at every
    # position; to patch one position, pass the run's own values everywhere but that row
    heads: Mapping[tuple[int, int], np.ndarray] = field(default_factory=dict)
    # layer -> (T, D): the hidden state entering that layer (causal tracing swaps one position's row)
    residual: Mapping[int, np.ndarray] = field(default_factory=dict)

    @property
    def first_layer(self) -> int | None:
        """The first layer the patch changes, or None for an empty patch."""
        layers = [layer for layer, _ in self.heads] + list(self.residual)
        return min(layers) if layers else None

    def heads_of(self, layer: int) -> dict[int, np.ndarray]:
        """{head: (T, d_k)} for one layer's patched heads."""
        return {head: value for (at, head), value in self.heads.items() if at == layer}

    def rows_from(self, start: int) -> Patch:
        """This patch for a run of the positions start.. only (the earlier ones come from a KV cache)."""
        heads = {pair: value[start:] for pair, value in self.heads.items()}
        return Patch(heads, {layer: value[start:] for layer, value in self.residual.items()})

    def summary(self) -> dict[str, list]:
        """What is patched, for a result's meta: the heads' (layer, head) and the residuals' layers."""
        return {"heads": sorted(self.heads), "residual": sorted(self.residual)}


def _array(value, shape: tuple[int, int], what: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"the patch for {what} is not an array of numbers") from None
    if array.shape != shape:
        raise ValueError(f"the patch for {what} is shaped {array.shape}; this run needs {shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"the patch for {what} holds values that are not numbers (NaN or infinity)")
    return array


def check_patch(
    patch: Patch | None, n_layers: int, n_heads: int, shapes: tuple[int, int, int], first: int = 0
) -> Patch | None:
    """The patch with float32 arrays of the right shapes, or None for no patch (or an empty one).
    shapes: (T, d_k, D) of this run; first: the first layer the forward pass runs (a restart).
    ValueError naming the first head, layer or array that does not fit the model and this run."""
    if patch is None:
        return None
    if not isinstance(patch, Patch):
        raise TypeError(f"patch must be a core.models.interventions.Patch, got {type(patch).__name__}")
    n_tokens, d_head, width = shapes
    heads = {}
    for pair, value in patch.heads.items():
        (layer, head), *_ = check_heads([pair], n_layers, n_heads)
        heads[layer, head] = _array(value, (n_tokens, d_head), f"head ({layer}, {head})")
    residual = {}
    for layer, value in patch.residual.items():
        if not (isinstance(layer, int | np.integer) and 0 <= layer < n_layers):
            raise ValueError(
                f"a residual patch names a layer in 0..{n_layers - 1} (0-indexed), got {layer!r}"
            )
        residual[int(layer)] = _array(value, (n_tokens, width), f"the residual entering layer {layer}")
    checked = Patch(heads, residual) if heads or residual else None
    if checked is not None and checked.first_layer < first:
        raise ValueError(f"the patch changes layer {checked.first_layer}, before the first one run ({first})")
    return checked
