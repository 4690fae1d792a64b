"""Induction heads (Olsson et al. 2022, "In-context Learning and Induction Heads"): on a sequence of
random tokens repeated twice, a head that, from a token of the second copy, attends to the token
right after that token's earlier occurrence is copying by content: it "completes the pattern".

    prefix-matching score of a head = the mean, over the positions i of the second copy, of its
    attention from i to i - n + 1 (n the length of one copy: position i - n holds the same token as
    i, and i - n + 1 is what came next there)

The model's loss on the second copy against the first shows the behaviour the heads make: a model
with induction heads predicts the repeated tokens far better than the fresh ones. Ablating the
heads that count as induction heads (a score of at least INDUCTION_MIN, induction_heads; the
engine's `ablate`) and measuring the second copy's loss again says how much of that they carry.
The tokens are drawn with numpy's generator from `seed`, so a link or a command line reproduces
them. As TransformerLens' induction test does, there is no start token unless the caller adds one.

The head atlas runs this test on every decoder (core/measures/atlas.py, measure_induction); its result
is kept on disk beside the atlas (load_or_measure: keyed by model key, model fingerprint, length and
seed), so the atlas of a user's sentence does not run it again in each new server process.

Letters: L layers, H heads, n one copy's length, T = 2 n positions, V vocabulary.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.measures.cache_files import cache_dir, write_npz_atomically

LOG = logging.getLogger(__name__)

__all__ = [
    "INDUCTION_MIN",
    "Induction",
    "copy_losses",
    "induction",
    "induction_heads",
    "induction_path",
    "load_or_measure",
    "prefix_matching_scores",
    "repeated_random_tokens",
]

_LOSS_ROWS = 16  # rows of logits turned into losses at a time
# A head counts as an induction head when its prefix-matching score is at least this: 0.4 of its
# weight where copying needs it (a head that spreads its weight evenly scores about 1/position).
# Every page that names induction heads, or switches them off, names them by this one rule.
INDUCTION_MIN = 0.4


@dataclass(frozen=True)
class Induction:
    length: int  # n, one copy's length
    seed: int
    token_ids: np.ndarray  # (2 n,) the sequence: n random tokens, then the same n again
    scores: np.ndarray  # (L, H) prefix-matching score of each head
    loss_first: float  # mean cross-entropy (nats) predicting tokens 2..n of the first copy
    loss_repeat: float  # the same over tokens 2..n of the second copy
    ablated: tuple[tuple[int, int], ...] = ()  # heads cut while measuring (0-indexed)


def repeated_random_tokens(vocab_size: int, length: int, seed: int, avoid: Iterable[int] = ()) -> np.ndarray:
    """(2 length,) ids: `length` tokens drawn uniformly (without the ids in `avoid`), then again."""
    if length < 2:
        raise ValueError(f"a copy needs at least 2 tokens, got {length}")
    allowed = np.setdiff1d(np.arange(vocab_size), np.fromiter(avoid, dtype=np.int64))
    first = np.random.default_rng(seed).choice(allowed, size=length)
    return np.concatenate([first, first])


def prefix_matching_scores(attentions: np.ndarray, length: int) -> np.ndarray:
    """(L, H, 2n, 2n) attentions -> (L, H): each head's mean weight from position i of the second
    copy to position i - n + 1."""
    queries = np.arange(length, 2 * length)  # every position of the second copy
    return attentions[:, :, queries, queries - length + 1].mean(axis=-1)


def induction_heads(
    scores: np.ndarray, least: float = INDUCTION_MIN, most: int | None = None, layers: range | None = None
) -> tuple[tuple[int, int], ...]:
    """(layer, head) pairs of the (L, H) scores at least `least`, highest first (ties: lower layer,
    then head), at most `most` of them, only in `layers` when given (0-indexed)."""
    rows = range(scores.shape[0]) if layers is None else layers
    order = np.argsort(-scores, axis=None, kind="stable")
    found = []
    for flat in order:
        layer, head = (int(v) for v in np.unravel_index(flat, scores.shape))
        if scores[layer, head] < least or (most is not None and len(found) == most):
            break
        if layer in rows:
            found.append((layer, head))
    return tuple(found)


def copy_losses(logits: np.ndarray, token_ids: np.ndarray, length: int) -> tuple[float, float]:
    """(T, V) logits (position t predicts token t + 1) -> mean cross-entropy over tokens 2..n of
    each copy: the first copy's (positions 0 .. n-2 predict 1 .. n-1) and the second's (n .. 2n-2).
    In float64, a few rows at a time: all of them would be 80 MB at SmolLM2's 49,152 tokens."""
    targets = np.asarray(token_ids)[1:]  # at t, token t + 1
    losses = np.empty(len(targets))
    for start in range(0, len(targets), _LOSS_ROWS):
        stop = min(start + _LOSS_ROWS, len(targets))
        rows = np.array(logits[start:stop], dtype=np.float64)  # a copy: the caller's logits stay as they are
        rows -= rows.max(-1, keepdims=True)
        log_total = np.log(np.exp(rows).sum(-1))  # log softmax = rows - log_total
        losses[start:stop] = log_total - rows[np.arange(stop - start), targets[start:stop]]
    return float(losses[: length - 1].mean()), float(losses[length : 2 * length - 1].mean())


def induction(engine, length: int = 50, seed: int = 0, ablate: Iterable[tuple[int, int]] = ()) -> Induction:
    """Run a decoder engine (forward, unembed) on 2 x `length` repeated random tokens; every head's
    prefix-matching score and the loss on each copy, with `ablate`'s heads cut."""
    if 2 * length > engine.max_tokens:
        raise ValueError(f"two copies of {length} tokens pass the model's {engine.max_tokens}-token context")
    ids = repeated_random_tokens(engine.config.vocab_size, length, seed)
    ablate = tuple(sorted(ablate))
    out = engine.forward(ids, ablate=ablate)
    logits = engine.unembed(out.hidden_states[-1])  # (T, V)
    first, repeat = copy_losses(logits, ids, length)
    return Induction(length, seed, ids, prefix_matching_scores(out.attentions, length), first, repeat, ablate)


# ---- the disk cache (the atlas's test: no heads ablated) ----------------------------------------


def induction_path(
    model: str, length: int, seed: int, *, fingerprint: str, directory: Path | None = None
) -> Path:
    key = f"induction v1\n{model}\n{fingerprint}\n{length}\n{seed}".encode("utf-8", "surrogatepass")
    return (directory or cache_dir()) / f"induction-{hashlib.sha256(key).hexdigest()[:32]}.npz"


def load_or_measure(
    engine, model: str, length: int, seed: int, *, fingerprint: str, directory: Path | None = None
) -> Induction:
    """induction(engine, length, seed) from the disk cache, or measured now and saved. A file that
    cannot be read, or that is not this test's, is ignored (logged) and measured again."""
    path = induction_path(model, length, seed, fingerprint=fingerprint, directory=directory)
    found = _read(path, length, seed) if path.is_file() else None
    if found is None:
        found = induction(engine, length, seed)
        arrays = {"token_ids": found.token_ids, "scores": found.scores}
        losses = {"loss_first": found.loss_first, "loss_repeat": found.loss_repeat}
        write_npz_atomically(path, {**arrays, **losses})
    return found


def _read(path: Path, length: int, seed: int) -> Induction | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            ids, scores = np.array(data["token_ids"]), np.array(data["scores"], dtype=np.float64)
            losses = float(data["loss_first"]), float(data["loss_repeat"])
        if ids.shape != (2 * length,) or scores.ndim != 2:
            raise ValueError("damaged arrays")
        if not (np.isfinite(scores).all() and np.isfinite(losses).all()):
            raise ValueError("not finite")
        return Induction(length, seed, ids, scores, *losses)
    except Exception as err:  # a damaged file of any kind
        LOG.warning("ignoring the induction test %s (%s: %s); measuring again", path, type(err).__name__, err)
        return None
