"""Path patching: how much of a behaviour one head (the sender) brings along chosen paths only.

Activation patching (core/measures/patching.py) copies a head's output from the CORRUPT run into the
CLEAN one and lets it act through everything after it. Path patching keeps the paths apart (Wang et
al. 2022, section 3.1; Goldowsky-Dill et al. 2023):
- sender -> logits (`to=()`): the sender's weighted sum from the corrupt run; every attention head
  of a later layer held at its clean-run weighted sum; the MLPs and norms recomputed. What changes
  at the last position then reached it through the residual stream and the MLPs only, not through
  another head;
- sender -> receivers' queries, keys or values (`to=[(l, h), ...]`, `via="q" | "k" | "v"`): first
  the run above, which gives a residual stream in which only the sender is patched; then the clean
  run again, each receiver computing its query (key, value) from that stream entering its own layer
  (through its own norm), everything else recomputed as usual. A sender reaches only the receivers
  of later layers; one in or after the last receivers' layer reaches none: NaN.

The metric is the logit difference logit(answer) - logit(rival) at the last position (= log p(answer)
- log p(rival): the softmax normaliser cancels), averaged over the items; restored = (patched -
clean) / (corrupt - clean), as the `patch` command's.

How it is computed. With every head of a layer held, that layer attends to nothing (the engines skip
steps 2-6: core/models/llama.py, gpt2.py): positions no longer mix after the sender, and each
position's residual stream goes through the later layers on its own. So the runs carry only the
rows they need through the engines' blocks, as a batch of one-position runs (senders, n rows, 1,
D): for the logits, the last position of every item, in one pass up the layers that each sender
layer's rows join; for the receivers, sender layer by sender layer, the positions from the first
that differs between the clean and corrupt prompts (the earlier ones are the clean run's), with a
query read in the last layer needing the last row only. The second run of a q/k/v path starts at
the receivers' first layer after each prompt's clean KV cache, the runs of prompts that share a
length as one batch; path_patch_reads makes the sender's stream once for several of q, k, v.
Checked against a reference written with transformers' forward hooks
(tests/core/test_path_patching.py); docs/path_patching.md.

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.

Letters: L layers, H heads, N items, T tokens, T' positions from the first difference, D width, d
one head's width, R rows (sender heads x items x positions), B runs at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.models.interventions import READ_KINDS, Patch, check_heads

__all__ = ["PathItem", "PathPatching", "path_patch", "path_patch_reads"]

Progress = Callable[[int, int], None]  # (senders done, senders in all)
RUN_ROWS = 1024  # at most about this many rows (runs x T') in one batch of second runs


@dataclass(frozen=True)
class PathItem:
    """One prompt pair, as token ids in the model's tokenizer."""

    clean: Sequence[int]  # e.g. "When Mary and John went to the store, John gave a drink to"
    corrupt: Sequence[int]  # the same length (e.g. three other names: ABC)
    answer: int  # the token the clean prompt should give (the indirect object, " Mary")
    rival: int  # the token it is compared with (the subject, " John")


@dataclass(frozen=True)
class PathPatching:
    """Both runs' metrics and, per sender, the patched metric and the fraction it restores."""

    metric_clean: float  # mean over items of logit(answer) - logit(rival) at the last position
    metric_corrupt: float  # the same, corrupt run
    patched: np.ndarray  # (L, H) float64: the mean metric with each sender patched along the paths
    restored: np.ndarray  # (L, H) float64: (patched - clean) / (corrupt - clean); NaN: not measured


@dataclass(frozen=True)
class _Run:
    """One item's clean and corrupt runs: what every path of it starts from."""

    item: PathItem
    hidden: np.ndarray  # (L + 1, T, D) the clean run's block inputs, the last after the final norm
    clean: np.ndarray  # (L, H, T, d) the clean run's weighted sums
    corrupt: np.ndarray  # (L, H, T, d) the corrupt run's
    cache: list  # the clean run's [(keys, values)] per layer, each (H_kv, T, d)
    start: int  # the first position where clean and corrupt differ
    metric_clean: float
    metric_corrupt: float


# ---- checks and the two runs ---------------------------------------------------------------------


def _check(engine, items, to, via, senders) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(receivers, senders), checked; ValueError with what to do otherwise."""
    from core.models.architectures import is_decoder

    if not (is_decoder(engine) and hasattr(engine, "layers_from")):
        raise ValueError(
            "path patching runs on a NumPy decoder (GPT-2 or the Llama family): "
            f"{getattr(engine, 'name', 'this model')} is not one (a BERT's heads see both sides)"
        )
    if not items:
        raise ValueError("path patching needs at least one prompt pair")
    for n, item in enumerate(items):
        if len(item.clean) != len(item.corrupt):
            raise ValueError(
                f"item {n}: clean and corrupt differ in length ({len(item.clean)}, {len(item.corrupt)})"
            )
        if list(item.clean) == list(item.corrupt):
            raise ValueError(f"item {n}: clean and corrupt are the same tokens: nothing to patch")
        if item.answer == item.rival:
            raise ValueError(f"item {n}: the answer and the rival are the same token")
        for ids in (item.clean, item.corrupt, [item.answer, item.rival]):
            engine.check_ids(np.asarray(ids), 0)  # whole numbers in the vocabulary, within the context
    if bool(to) != (via is not None):
        raise ValueError(
            'give receivers and what they read together (to=[(layer, head)], via="q", "k" or "v")'
        )
    if via is not None and via not in READ_KINDS:
        raise ValueError(f'via is "q", "k" or "v" (what the receivers read), got {via!r}')
    receivers = sorted(check_heads(to, engine.n_layers, engine.n_heads))
    every = [(layer, head) for layer in range(engine.n_layers) for head in range(engine.n_heads)]
    chosen = every if senders is None else sorted(check_heads(senders, engine.n_layers, engine.n_heads))
    return receivers, chosen


def _runs(engine, items: Sequence[PathItem]) -> list[_Run]:
    """Every item's clean and corrupt runs, traced; items of one length run as one batch."""
    runs = [None] * len(items)
    every = range(engine.n_layers)
    lengths = sorted({len(item.clean) for item in items})
    for length in lengths:
        at = [n for n, item in enumerate(items) if len(item.clean) == length]
        ids = [items[n].clean for n in at] + [items[n].corrupt for n in at]
        x = np.stack([engine.embed(np.asarray(one)) for one in ids])  # (2N', T, D)
        out = engine.layers_from(0, x, trace_layers=every)
        hidden = np.swapaxes(out.hidden_states, 0, 1)  # (2N', L + 1, T, D)
        ctx = np.stack([out.steps[i]["context"] for i in every], axis=1)  # (2N', L, H, T, d)
        for k, n in enumerate(at):
            item = items[n]
            start = next(t for t, (a, b) in enumerate(zip(item.clean, item.corrupt, strict=True)) if a != b)
            cache = [(keys[k], values[k]) for keys, values in out.cache]
            metrics = [float(_metric(engine, hidden[j, -1, -1], item)) for j in (k, len(at) + k)]
            runs[n] = _Run(item, hidden[k], ctx[k], ctx[len(at) + k], cache, start, *metrics)
    return runs


def _metric(engine, final: np.ndarray, item: PathItem) -> np.ndarray:
    """logit(answer) - logit(rival) of rows (..., D) after the final norm."""
    logits = np.asarray(engine.token_logits(final, [item.answer, item.rival]), np.float64)
    return logits[..., 0] - logits[..., 1]


# ---- the paths -----------------------------------------------------------------------------------


def _held_rows(engine, runs: Sequence[_Run], layer: int, heads, picks, stop: int, start=None):
    """The residual stream, row by row, with one sender of `layer` patched (from the corrupt run) and
    every head of the layers after it held at the clean run's weighted sum, entering layers
    layer..stop (the last: after the final norm when stop = L): (stop - layer + 1, k, n, D), for
    each of the k sender heads the n rows: each run's positions `picks[i]`, run after run. Every head
    of every layer from `layer` on is held (the sender's neighbours at their clean sums, which is
    what they compute), so the engine attends to nothing and each row goes through the blocks on
    its own: the rows are given as a batch of n one-position runs, (k, n, 1, D), the later layers'
    held sums (n, 1, d) shared by the k senders (so W^O multiplies them once). start: (k, n, D), a
    stream entering `layer` to go on from (the senders patched in an earlier layer)."""
    pairs = list(zip(runs, picks, strict=True))
    clean = np.concatenate([run.clean[layer:stop][:, :, at] for run, at in pairs], axis=2)
    n, k = clean.shape[2], len(heads)  # clean (stop - layer, H, n, d)
    held = {}
    for later, head in np.ndindex(clean.shape[:2]):
        value = clean[later, head, :, None]  # (n, 1, d): the same for every sender
        if start is None and later == 0 and head in heads:
            value = np.repeat(value[None], k, axis=0)  # (k, n, 1, d)
            value[list(heads).index(head)] = _rows_of(pairs, lambda run, h=head: run.corrupt[layer, h])[
                :, None
            ]
        held[layer + later, head] = value
    if start is None:  # the clean stream, the senders patched in this layer
        start = np.broadcast_to(_rows_of(pairs, lambda run: run.hidden[layer]), (k, n, engine.width))
    out = engine.layers_from(layer, start[:, :, None], stop=stop, patch=Patch(heads=held))
    return out.hidden_states[..., 0, :]  # (stop - layer + 1, k, n, D)


def _rows_of(pairs, array_of) -> np.ndarray:
    """(n, ...): the rows `at` of array_of(run) (T, ...), for each (run, at) of pairs, run after run."""
    return np.concatenate([array_of(run)[at] for run, at in pairs])


def _logits_sweep(engine, runs: Sequence[_Run], chosen, progress: Progress | None) -> np.ndarray:
    """(L, H): each sender's mean metric along its paths to the logits (NaN: not a sender). One pass
    up the layers on the runs' last rows: the senders of layer l join the batch there, (G, N, 1, D)
    with G the sender heads so far, and the earlier ones go on beside them (as many rows in all as
    one pass per sender layer, in far fewer and larger matrix products)."""
    n_layers, n_heads = engine.n_layers, engine.n_heads
    pairs = [(run, [len(run.item.clean) - 1]) for run in runs]
    sizes = np.cumsum([sum(at == layer for at, _ in chosen) for layer in range(n_layers)])  # G per layer
    work, order, x = np.cumsum(sizes), [], None
    for layer in range(min(at for at, _ in chosen), n_layers):
        heads = [head for at, head in chosen if at == layer]
        ctx = _rows_of(pairs, lambda run, i=layer: np.swapaxes(run.clean[i], 0, 1))  # (N, H, d)
        held = {(layer, head): ctx[:, head, None] for head in range(n_heads)}  # (N, 1, d) each
        if heads:  # these senders' rows join: the clean stream, each with its head from corrupt
            new = _rows_of(pairs, lambda run, i=layer: run.hidden[i])  # (N, D)
            new = np.broadcast_to(new, (len(heads), *new.shape))
            x = new if x is None else np.concatenate([x, new])  # (G, N, D)
            corrupt = _rows_of(pairs, lambda run, i=layer: np.swapaxes(run.corrupt[i], 0, 1))
            for b, head in enumerate(heads):
                value = np.repeat(held[layer, head][None], len(x), axis=0)  # (G, N, 1, d)
                value[len(x) - len(heads) + b] = corrupt[:, head, None]
                held[layer, head] = value
            order += [(layer, head) for head in heads]
        out = engine.layers_from(layer, x[:, :, None], stop=layer + 1, patch=Patch(heads=held))
        x = out.hidden_states[-1, :, :, 0]  # (G, N, D): after the final norm at the last layer
        if progress is not None:
            progress(int(len(chosen) * work[layer] // work[-1]), len(chosen))
    metrics = np.stack([_metric(engine, x[:, n], run.item) for n, run in enumerate(runs)], axis=1)
    patched = np.full((n_layers, n_heads), np.nan)
    for (layer, head), row in zip(order, metrics, strict=True):  # row (N,)
        patched[layer, head] = row.mean()
    return patched


def _streams(engine, runs, layer: int, heads, reach, vias) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """({receiver layer: (k, n, D)} the stream each receiver reads, rows as _held_rows's for the
    positions from each run's first difference on; the offsets of the runs' rows). A query read in
    the last layer changes that layer's output at its own position only, and only the last
    position's output reaches the logits: there the last rows alone go on from the layers that need
    every row (the others read the clean stream, which changes nothing that is read)."""
    picks = [np.arange(run.start, len(run.item.clean)) for run in runs]
    offsets = np.cumsum([0] + [len(at) for at in picks])
    top, ends = max(at for at, _ in reach), offsets[1:] - 1
    last_only = set(vias) == {"q"} and top == engine.n_layers - 1
    whole = max((at for at, _ in reach if not (last_only and at == top)), default=layer)
    streams, start = {}, None
    if whole > layer:
        rows = _held_rows(engine, runs, layer, heads, picks, whole)  # (whole - layer + 1, k, n, D)
        streams = {at: rows[at - layer] for at, _ in reach if at <= whole}
        start = rows[-1][:, ends]  # (k, N, D): each run's last row
    if top > whole:
        lasts = [[len(run.item.clean) - 1] for run in runs]
        tail = _held_rows(engine, runs, max(whole, layer), heads, lasts, top, start)[-1]  # (k, N, D)
        clean = _rows_of(list(zip(runs, picks, strict=True)), lambda run: run.hidden[top])  # (n, D)
        stream = np.repeat(clean[None], len(heads), axis=0)  # (k, n, D): only the last rows are read
        stream[:, ends] = tail
        streams[top] = stream
    return streams, offsets


def _to_receivers(engine, runs, layer: int, heads: Sequence[int], receivers, vias) -> dict[str, np.ndarray]:
    """{via: (k, N)}: each sender head's metric on each run, the path ending at the receivers' q, k
    or v (those of layers after the sender's: the caller gives at least one). The stream patched by
    the sender is made once for every via."""
    reach = [(at, head) for at, head in receivers if at > layer]
    streams, offsets = _streams(engine, runs, layer, heads, reach, vias)
    metrics = {via: np.empty((len(heads), len(runs))) for via in vias}
    groups: dict[tuple[int, int], list[int]] = {}  # runs that share T and T' run as one batch
    for n, run in enumerate(runs):
        groups.setdefault((len(run.item.clean), run.start), []).append(n)
    for (length, start), members in groups.items():
        size = max(1, RUN_ROWS // (len(heads) * (length - start)))
        for at in range(0, len(members), size):
            batch = members[at : at + size]
            mine = [{r: one[:, offsets[n] : offsets[n + 1]] for r, one in streams.items()} for n in batch]
            for via in vias:
                metrics[via][:, batch] = _second_runs(engine, [runs[n] for n in batch], mine, reach, via)
    return metrics


def _second_runs(engine, runs: Sequence[_Run], streams, reach, via: str) -> np.ndarray:
    """(k, n): the clean runs again, from the receivers' first layer, each receiver's q (k, v) read
    from the stream the sender patched (streams[j]: {receiver layer: (k, T', D)}); runs that share
    T and the first differing position s, as one batch (n k runs) after their clean KV caches up to
    s."""
    first, k, s = min(at for at, _ in reach), len(next(iter(streams[0].values()))), runs[0].start
    x = np.concatenate([np.repeat(run.hidden[None, first, s:], k, axis=0) for run in runs])  # (n k, T', D)
    reads = {(at, head, via): np.concatenate([one[at] for one in streams]) for at, head in reach}
    past = None
    if s:  # each run's cache repeated for its k runs: (n k, H_kv, s, d) per layer
        past = [
            tuple(np.repeat(np.stack([run.cache[i][j][:, :s] for run in runs]), k, axis=0) for j in (0, 1))
            for i in range(len(runs[0].cache))
        ]
    out = engine.layers_from(first, x, past=past, patch=Patch(reads=reads))
    final = out.hidden_states[-1, :, -1].reshape(len(runs), k, -1)  # (n, k, D)
    return np.stack([_metric(engine, final[j], run.item) for j, run in enumerate(runs)], axis=1)


def _chunks(runs: Sequence[_Run], rows_each, heads: int, limit: int = 1024):
    """runs in consecutive chunks of at most about `limit` rows (heads x the runs' rows)."""
    chunk, rows = [], 0
    for run in runs:
        if chunk and rows + heads * rows_each(run) > limit:
            yield chunk
            chunk, rows = [], 0
        chunk.append(run)
        rows += heads * rows_each(run)
    yield chunk


def path_patch(
    engine,
    items: Sequence[PathItem],
    *,
    to: Sequence[tuple[int, int]] = (),
    via: str | None = None,
    senders: Sequence[tuple[int, int]] | None = None,
    progress: Progress | None = None,
) -> PathPatching:
    """Each sender head patched from the corrupt prompts into the clean ones along the paths to the
    logits (to=()) or to the receivers' queries, keys or values (to, via), alone; the metric averaged
    over the items. senders: (layer, head) pairs, 0-indexed (None: every head); a head not measured
    (not a sender, or unable to reach a receiver) is NaN. progress(senders done, senders in all)."""
    return _grids(engine, items, to, (via,), senders, progress)[via]


def path_patch_reads(
    engine,
    items: Sequence[PathItem],
    *,
    to: Sequence[tuple[int, int]],
    vias: Sequence[str] = READ_KINDS,
    senders: Sequence[tuple[int, int]] | None = None,
    progress: Progress | None = None,
) -> dict[str, PathPatching]:
    """{via: path_patch(engine, items, to=to, via=via, senders=senders)} for several of "q", "k", "v"
    at once: the stream each sender patches is made once for all of them (about half of a sweep)."""
    if not to:
        raise ValueError("path_patch_reads needs receivers (to=[(layer, head)]); the logits: path_patch")
    return _grids(engine, items, to, tuple(vias), senders, progress)


def _grids(engine, items, to, vias, senders, progress) -> dict:
    """{via: PathPatching} (via None: the logits)."""
    for via in vias:
        receivers, chosen = _check(engine, items, to, via, senders)
    runs = _runs(engine, items)
    m_clean = float(np.mean([run.metric_clean for run in runs]))
    m_corrupt = float(np.mean([run.metric_corrupt for run in runs]))
    if m_clean == m_corrupt:
        raise ValueError(f"nothing to restore: clean and corrupt give the same metric ({m_clean:.6g})")
    if receivers:
        patched = _receivers_sweep(engine, runs, chosen, receivers, vias, progress)
    else:
        patched = {None: _logits_sweep(engine, runs, chosen, progress)}
    spread = m_corrupt - m_clean
    return {
        via: PathPatching(m_clean, m_corrupt, grid, (grid - m_clean) / spread)
        for via, grid in patched.items()
    }


def _receivers_sweep(engine, runs, chosen, receivers, vias, progress) -> dict[str, np.ndarray]:
    """{via: (L, H)}: each sender's mean metric along its paths to the receivers (NaN: not a sender,
    or one that reaches no receiver), sender layer by sender layer."""
    reach = max(at for at, _ in receivers)  # a sender of an earlier layer reaches a receiver
    patched, done = {via: np.full((engine.n_layers, engine.n_heads), np.nan) for via in vias}, 0
    for layer in sorted({at for at, _ in chosen}):
        heads = [head for at, head in chosen if at == layer]
        sums = {via: np.zeros(len(heads)) for via in vias}
        for chunk in _chunks(runs, lambda run: len(run.item.clean) - run.start, len(heads)):
            if layer >= reach:
                break
            found = _to_receivers(engine, chunk, layer, heads, receivers, vias)
            for via in vias:
                sums[via] += found[via].sum(axis=1)
                patched[via][layer, heads] = sums[via] / len(runs)
        done += len(heads)
        if progress is not None:
            progress(done, len(chosen))
    return patched
