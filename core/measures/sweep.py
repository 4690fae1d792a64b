"""Many runs of one input, each changing one component of layer l: the sweep behind activation
patching (core/measures/patching.py) and head ablation (core/measures/ablation.py: ablating a head
is patching its weighted sum with zeros).

A change to layer l changes nothing before layer l, so every run restarts from the clean run's hidden
state entering layer l (`layers_from`); the torch references rerun everything. On a NumPy decoder a
layer's runs then go through the later blocks together, one batch (B, T', D): each block's weights
are fetched once for the B runs, and `linear` multiplies the B·T' rows as one matrix (on SmolLM2's
patching grid, 27.7 s one run at a time, 4-6 s batched: bench/README.md, "Activation patching").
Block l itself runs once per run, each with its own change. A causal model's runs that change
nothing before position s compute only the positions from s on, after the clean run's KV cache
(shared by the B runs); a run that changes every position (an ablation) starts at 0, with no past.

Letters: L layers, T tokens, T' the positions a run computes, D width, B runs at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from core.models.architectures import is_decoder
from core.models.interventions import Patch

__all__ = ["BATCH_ROWS", "Clean", "batched", "in_batches", "patched_runs"]

BATCH_ROWS = 256  # at most about this many rows (runs x T') through a NumPy decoder's blocks at once


@dataclass(frozen=True)
class Clean:
    """The clean run every changed run restarts from: its tokens, its hidden states (L + 1, T, D) and,
    when its runs start at a position s > 0, its KV cache. A causal model's positions before s are the
    same in the clean run and in every changed one, so those runs compute only the positions from s
    on, the earlier ones read from the cache."""

    ids: Sequence[int]
    types: list[int] | None
    hidden: np.ndarray
    cache: list | None = None  # [(keys, values)] per layer, each (H_kv, T, d_k)
    start: int = 0


def batched(engine) -> bool:
    """Whether the engine runs a sweep's runs as batches: a NumPy decoder (its blocks broadcast over B)."""
    return is_decoder(engine) and hasattr(engine, "layers_from")


def in_batches(items: Sequence, rows_each: int) -> Iterator[Sequence]:
    """items in consecutive batches of about BATCH_ROWS rows, each item rows_each rows (a long text:
    fewer at once, for memory)."""
    size = max(1, BATCH_ROWS // max(1, rows_each))
    for at in range(0, len(items), size):
        yield items[at : at + size]


def patched_hidden(engine, clean: Clean, patch: Patch) -> np.ndarray:
    """(L + 1, T, D) of the clean run with `patch`: the NumPy engines restart at its layer."""
    if not hasattr(engine, "layers_from"):
        return engine.hidden_states(clean.ids, clean.types, patch=patch)
    first = patch.first_layer
    out = engine.layers_from(first, clean.hidden[first], patch=patch)
    return np.concatenate([clean.hidden[:first], out.hidden_states if is_decoder(engine) else out[0]])


def _batch(engine, clean: Clean, layer: int, patches: Sequence[Patch]) -> Iterator[np.ndarray]:
    """Each patch's (L + 1, T, D), for B patches of `layer` on a NumPy decoder: block `layer` once per
    patch (each its own patch), then the B runs through the later blocks together, (B, T', D)."""
    s = clean.start
    past = None if s == 0 else [(keys[:, :s], values[:, :s]) for keys, values in clean.cache]
    x = clean.hidden[layer, s:]
    starts = [engine.layers_from(layer, x, past=past, patch=p.rows_from(s), stop=layer + 1) for p in patches]
    starts = np.stack([out.hidden_states for out in starts])  # (B, 2, T', D): block `layer`'s in and out
    later = np.empty((len(patches), 0, *x.shape), x.dtype)
    if layer + 1 < engine.n_layers:  # at the last layer, its output is already after the final norm
        later = np.swapaxes(
            engine.layers_from(layer + 1, starts[:, 1].copy(), past=past).hidden_states[1:], 0, 1
        )
    for start, rest in zip(starts, later, strict=True):
        hidden = clean.hidden.copy()
        hidden[layer:, s:] = np.concatenate([start, rest])
        yield hidden


def patched_runs(engine, clean: Clean, layer: int, patches: Sequence[Patch]) -> Iterator[np.ndarray]:
    """Each patch's (L + 1, T, D), in order, all of them patches of `layer`: a NumPy decoder's in
    batches of about BATCH_ROWS rows (B runs of T' positions), the others' one at a time."""
    if not batched(engine):
        yield from (patched_hidden(engine, clean, patch) for patch in patches)
        return
    for batch in in_batches(patches, len(clean.ids) - clean.start):
        yield from _batch(engine, clean, layer, batch)
