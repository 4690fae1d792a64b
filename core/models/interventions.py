"""What an engine's `run` may be asked to change, checked once for every engine: the heads to ablate
(check_heads) and the activations to patch in (Patch, check_patch), including the residual streams
some heads read their queries, keys or values from (path patching).

Every engine (core/models/bert.py, gpt2.py, llama.py and the torch references pretrained.py and
pretrained_decoder.py) reads `ablate` and `patch` in its forward pass; this is where they are
checked against the model, so the engines refuse the same inputs with the same message. What an
ablation does to the output is measured in core/measures/ablation.py, what a patch restores in
core/measures/patching.py, what a path carries in core/measures/paths.py.

A patch's arrays are one run's, (T, ...); a batch of runs x (B, T, D) may take arrays (B, T, ...),
one per run, or (T, ...), the same for every run (in general: leading axes that broadcast against
x's, e.g. (B1, B2, T, D) with arrays (B2, T, ...)).

Letters: B runs at once, T positions of the forward pass, D width, d_k one head's width.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["READ_KINDS", "Patch", "check_heads", "check_patch"]

READ_KINDS = ("q", "k", "v")  # what a head reads from the residual stream: its query, key or value


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
    # (layer, head, "q" | "k" | "v") -> (T, D): a residual stream (a block's input, before its norm)
    # from which that head alone computes its query, key or value (path patching's receivers). With
    # grouped-query attention, a key or value read changes that query head's view only, not the
    # other heads of its group. The NumPy decoders read it; the others refuse it.
    reads: Mapping[tuple[int, int, str], np.ndarray] = field(default_factory=dict)

    @property
    def first_layer(self) -> int | None:
        """The first layer the patch changes, or None for an empty patch."""
        layers = [layer for layer, _ in self.heads] + list(self.residual) + [at for at, _, _ in self.reads]
        return min(layers) if layers else None

    def heads_of(self, layer: int) -> dict[int, np.ndarray]:
        """{head: (T, d_k)} for one layer's patched heads."""
        return {head: value for (at, head), value in self.heads.items() if at == layer}

    def reads_of(self, layer: int) -> dict[tuple[int, str], np.ndarray]:
        """{(head, "q" | "k" | "v"): (T, D)} for one layer's reads."""
        return {(head, kind): value for (at, head, kind), value in self.reads.items() if at == layer}

    def rows_from(self, start: int) -> Patch:
        """This patch for a run of the positions start.. only (the earlier ones come from a KV cache)."""
        heads = {pair: value[..., start:, :] for pair, value in self.heads.items()}
        residual = {layer: value[..., start:, :] for layer, value in self.residual.items()}
        return Patch(heads, residual, {key: value[..., start:, :] for key, value in self.reads.items()})

    def summary(self) -> dict[str, list]:
        """What is patched, for a result's meta: the heads' (layer, head) and the residuals' layers
        (and the reads' (layer, head, kind), when there are any)."""
        summary = {"heads": sorted(self.heads), "residual": sorted(self.residual)}
        return summary | ({"reads": sorted(self.reads)} if self.reads else {})


def _array(value, shape: tuple[int, int], what: str, batch: tuple[int, ...] = ()) -> np.ndarray:
    """value as float32, shaped `shape` after leading axes that broadcast to `batch` (x's leading
    axes: a batch of runs)."""
    try:
        array = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"the patch for {what} is not an array of numbers") from None
    lead = array.shape[: max(0, array.ndim - len(shape))]
    fits = array.shape[len(lead) :] == shape and len(lead) <= len(batch)
    if not (fits and all(a in (1, b) for a, b in zip(lead[::-1], batch[::-1], strict=False))):
        needs = shape if not batch else f"{shape} or {(*batch, *shape)}"
        raise ValueError(f"the patch for {what} is shaped {array.shape}; this run needs {needs}")
    if not np.isfinite(array).all():
        raise ValueError(f"the patch for {what} holds values that are not numbers (NaN or infinity)")
    return array


def _reads(patch: Patch, n_layers: int, n_heads: int, shape: tuple[int, int], batch, engine: str | None):
    """The patch's reads, checked: {(layer, head, kind): (T, D) or (B, T, D)}."""
    if patch.reads and engine is not None:
        raise ValueError(
            f"{engine} cannot read a head's query, key or value from another residual stream "
            "(path patching): only the NumPy decoders (GPT-2 and the Llama family) can"
        )
    reads = {}
    for key, value in patch.reads.items():
        if not (isinstance(key, tuple) and len(key) == 3 and key[2] in READ_KINDS):
            raise ValueError(f'a read is named (layer, head, "q" | "k" | "v"), got {key!r}')
        (layer, head), *_ = check_heads([key[:2]], n_layers, n_heads)
        what = f"the {key[2]} read of head ({layer}, {head})"
        reads[layer, head, key[2]] = _array(value, shape, what, batch)
    return reads


def check_patch(
    patch: Patch | None,
    n_layers: int,
    n_heads: int,
    shapes: tuple[int, int, int],
    first: int = 0,
    *,
    batch: tuple[int, ...] = (),
    no_reads: str | None = "this engine",
) -> Patch | None:
    """The patch with float32 arrays of the right shapes, or None for no patch (or an empty one).
    shapes: (T, d_k, D) of this run; first: the first layer the forward pass runs (a restart);
    batch: x's leading axes, (B,) for a batch of runs (B, T, D), whose arrays may each be (B, T, ...)
    or (T, ...);
    no_reads: the engine's name when it cannot read heads' q/k/v from a patch (None: it can).
    ValueError naming the first head, layer or array that does not fit the model and this run."""
    if patch is None:
        return None
    if not isinstance(patch, Patch):
        raise TypeError(f"patch must be a core.models.interventions.Patch, got {type(patch).__name__}")
    n_tokens, d_head, width = shapes
    heads = {}
    for pair, value in patch.heads.items():
        (layer, head), *_ = check_heads([pair], n_layers, n_heads)
        heads[layer, head] = _array(value, (n_tokens, d_head), f"head ({layer}, {head})", batch)
    residual = {}
    for layer, value in patch.residual.items():
        if not (isinstance(layer, int | np.integer) and 0 <= layer < n_layers):
            raise ValueError(
                f"a residual patch names a layer in 0..{n_layers - 1} (0-indexed), got {layer!r}"
            )
        what = f"the residual entering layer {layer}"
        residual[int(layer)] = _array(value, (n_tokens, width), what, batch)
    reads = _reads(patch, n_layers, n_heads, (n_tokens, width), batch, no_reads)
    checked = Patch(heads, residual, reads) if heads or residual or reads else None
    if checked is not None and checked.first_layer < first:
        raise ValueError(f"the patch changes layer {checked.first_layer}, before the first one run ({first})")
    return checked
