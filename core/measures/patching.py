"""Which components carry a word's effect to the answer: activation patching across a minimal pair.

Two sentences that tokenize to the same length and differ in a word ("... because it was too big" /
"... too small"). The base run is the CLEAN one (the first sentence); each patch copies one
component's activation from the CORRUPT run (the second) into it, and measures how much of the
difference in the model's answer that one component brings across:

    restored = (m(clean with the corrupt run's component) - m(clean)) / (m(corrupt) - m(clean))

0: the component brings nothing of the difference; 1: all of it (a component may also overshoot, or
push the other way: below 0). Components:
- patch_heads: a head's output, its weighted sum before W^O (where `ablate` cuts), at every position
  or at one position (the clean values elsewhere): an (L, H) grid;
- patch_residual: the hidden state entering a layer at one position (causal tracing): an (L, T) grid.

Metrics m, functions of a run's hidden states (L + 1, T, D) on the clean tokens:
- a decoder with two options: log p(A) - log p(B) for the next token after the text, each option
  scored by its first token (" trophy" and " suitcase": a word's later tokens are not read);
- a decoder without options: the total variation between the run's next-token distribution and the
  clean run's, so m(clean) = 0 and restored = TV(patched, clean) / TV(corrupt, clean) (it measures how
  far a patch moves the answer, in any direction);
- a BERT: the pronoun test (core/measures/referent.py): cos(focus word, target) - cos(focus word,
  rival) in the vectors after a chosen layer, the words located in the clean run's tokens.

Patching component c of layer l changes nothing before layer l, so the NumPy engines restart from the
clean run's hidden state entering layer l (layers_from); the torch references rerun. A NumPy decoder
runs layer l's patches through the later blocks together, a batch (B, T', D), of the positions from
the first differing token on, after the clean run's KV cache (core/measures/sweep.py). A patch whose
values equal the clean run's exactly (a decoder's positions before the first differing token) changes
nothing: its metric is the clean one without a run.

References: Vig et al. 2020, "Causal Mediation Analysis for Interpreting Neural NLP"; Meng et al.
2022, "Locating and Editing Factual Associations in GPT" (causal tracing); Wang et al. 2022,
"Interpretability in the Wild" (path patching); Heimersheim and Nanda 2024, "How to use and interpret
activation patching"; TransformerLens's `patching` module.

Letters: L layers, H heads, T tokens, D width, d_k one head's width, V vocabulary.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.measures.ablation import total_variation
from core.measures.analysis import piece_text, word_spans
from core.measures.choice import log_softmax, option_ids
from core.measures.referent import closeness
from core.measures.sweep import Clean, patched_runs
from core.models.architectures import is_decoder
from core.models.bert import TextError
from core.models.interventions import Patch

__all__ = ["Patching", "check_pair", "encode_pair", "next_token_shift", "option_metric", "patch_heads"]
__all__ += ["patch_residual", "pronoun_metric"]

Metric = Callable[[np.ndarray], float]  # a run's hidden states (L + 1, T, D) -> its answer, a number
Progress = Callable[[int, int], None]  # (runs done, runs in all)


@dataclass(frozen=True)
class Patching:
    """One grid of patches: both runs' metrics, each patched run's, and the fraction it restores."""

    metric_clean: float
    metric_corrupt: float
    patched: np.ndarray  # (L, H) or (L, T) float64: the metric of each patched run
    restored: np.ndarray  # (L, H) or (L, T) float64: (patched - clean) / (corrupt - clean)


# ---- the pair ------------------------------------------------------------------------------------


def check_pair(clean: Sequence, corrupt: Sequence) -> list[int]:
    """The positions where two token sequences (ids or texts) differ; ValueError when they differ in
    length (naming both lengths and the first tokens that differ) or not at all."""
    if len(clean) != len(corrupt):
        first = next((i for i, (a, b) in enumerate(zip(clean, corrupt, strict=False)) if a != b), None)
        first = min(len(clean), len(corrupt)) if first is None else first
        raise ValueError(
            f"the two sentences tokenize to different lengths ({len(clean)} and {len(corrupt)} tokens): "
            f"patching needs the same positions; they differ from token {first}: "
            f"{list(clean[first : first + 3])} / {list(corrupt[first : first + 3])}"
        )
    differ = [i for i, (a, b) in enumerate(zip(clean, corrupt, strict=True)) if a != b]
    if not differ:
        raise ValueError("nothing to restore: the two sentences are the same")
    return differ


def encode_pair(engine, clean: str, corrupt: str):
    """(clean encoding, corrupt encoding) of a NumPy engine's tokenizer, checked by check_pair on the
    tokens' texts (so a message names words, not ids)."""
    first, second = engine.encode(clean), engine.encode(corrupt)
    check_pair(first.tokens, second.tokens)
    return first, second


# ---- the metrics ---------------------------------------------------------------------------------


def option_metric(engine, options: Sequence[str]) -> tuple[Metric, list[int]]:
    """(m, the two token ids) for a decoder: m(hidden) = log p(A) - log p(B) of the next token after
    the text, each option scored by its first token. TextError for an option with no tokens or two
    options that start with the same token."""
    if len(options) != 2:
        raise ValueError(f"give two options to compare, got {len(options)}")
    ids = []
    for text in options:
        found = option_ids(engine, text)
        if not found:
            raise TextError(f"the option {text!r} has no tokens: type a word, with its leading space")
        ids.append(found[0])
    if ids[0] == ids[1]:
        raise TextError(f"the options {options[0]!r} and {options[1]!r} start with the same token")

    def metric(hidden: np.ndarray) -> float:
        # log p(A) - log p(B) = logit(A) - logit(B): softmax's normalizer cancels, so two rows of the
        # unembedding do (a 270-run sweep on SmolLM2 would otherwise spend seconds on 49,152 logits)
        logits = np.asarray(engine.token_logits(hidden[-1, -1], ids), np.float64)  # after the last position
        return float(logits[0] - logits[1])

    return metric, ids


def next_token_shift(engine, clean_hidden: np.ndarray) -> Metric:
    """m(hidden) = TV(the run's next-token distribution, the clean run's): 0 for the clean run."""
    reference = np.exp(log_softmax(engine.unembed(clean_hidden[-1, -1])))  # (V,)

    def metric(hidden: np.ndarray) -> float:
        return total_variation(np.exp(log_softmax(engine.unembed(hidden[-1, -1]))), reference)

    return metric


def pronoun_metric(result, focus: str | int, target: str, rival: str, layer: int) -> Metric:
    """m(hidden) = cos(focus, target) - cos(focus, rival) after layer `layer` (0 = the embeddings, L
    the last), words as core/measures/referent.py makes them from `result` (the clean run: a word
    in pieces is the mean of its pieces). A word given as text is its first occurrence; the focus may
    also be a word's index (a word that occurs twice). ValueError naming a word not in the sentence."""
    spans = word_spans(result.word_ids, result.special_mask)
    words = ["".join(piece_text(t) for t in result.tokens[start:stop]).casefold() for start, stop in spans]
    if not 0 <= layer <= result.n_layers:
        raise ValueError(f"the layer must be in 0..{result.n_layers} (0: the embeddings), got {layer}")
    found = []
    if isinstance(focus, int):  # an index: no text to look up
        if not 0 <= focus < len(words):
            raise ValueError(f"the focus word's index must be in 0..{len(words) - 1}, got {focus}")
        found.append(focus)
    for what, word in (("focus", focus), ("target", target), ("rival", rival))[len(found) :]:
        if word.strip().casefold() not in words:
            raise ValueError(f"the {what} word {word!r} is not in the first sentence ({' '.join(words)})")
        found.append(words.index(word.strip().casefold()))
    focus_token = spans[found[0]][0]

    def metric(hidden: np.ndarray) -> float:
        cosine = closeness(result, focus_token, hidden[layer][None]).cosine[0]  # (W,)
        return float(cosine[found[1]] - cosine[found[2]])

    return metric


# ---- the sweeps ----------------------------------------------------------------------------------


def _components(engine, ids, types) -> tuple[np.ndarray, np.ndarray, list | None]:
    """(hidden states (L + 1, T, D), every head's weighted sum (L, H, T, d_k), a NumPy decoder's KV
    cache or None) of one run."""
    if not hasattr(engine, "layers_from"):  # a torch reference
        return engine.hidden_states(ids, types), engine.contexts(ids, types), None
    every = range(engine.n_layers)
    if is_decoder(engine):
        out = engine.forward(np.asarray(ids), trace_layers=every)
        return out.hidden_states, np.stack([out.steps[i]["context"] for i in every]), out.cache
    hidden, _, steps = engine.forward(np.asarray(ids), types, trace_layers=every)
    return hidden, np.stack([steps[i]["context"] for i in every]), None


def _states(engine, ids, types) -> tuple[np.ndarray, list | None]:
    """(hidden states (L + 1, T, D), a NumPy decoder's KV cache or None) of one run, untraced."""
    if is_decoder(engine) and hasattr(engine, "layers_from"):
        out = engine.forward(np.asarray(ids))
        return out.hidden_states, out.cache
    return engine.hidden_states(ids, types), None


def _clean_run(ids, types, corrupt_ids, hidden: np.ndarray, cache: list | None) -> Clean:
    """The clean run's Clean; with a cache, its runs start at the first position the pair differs at."""
    start = check_pair(list(ids), list(corrupt_ids))[0] if cache is not None else 0
    return Clean(ids, types, hidden, cache, start)


def _sweep(engine, clean: Clean, corrupt_hidden, metric: Metric, patches, shape, progress) -> Patching:
    """Run every (cell, Patch or None) of `patches` on the clean input; None: the clean values. The
    cells come a layer (their first index) at a time, each patch changing that layer first."""
    m_clean, m_corrupt = metric(clean.hidden), metric(corrupt_hidden)
    if m_corrupt == m_clean:
        raise ValueError(f"nothing to restore: both sentences give the metric {m_clean:.6g}")
    patched, total, done = np.full(shape, m_clean), int(np.prod(shape)), 0
    for layer, group in itertools.groupby(patches, key=lambda item: item[0][0]):
        group = list(group)
        made = [patch for _, patch in group if patch is not None]
        runs = patched_runs(engine, clean, layer, made)  # in order, as asked for
        for cell, patch in group:
            if patch is not None:
                patched[cell] = metric(next(runs))
            done += 1
            if progress is not None:
                progress(done, total)
    restored = (patched - m_clean) / (m_corrupt - m_clean)
    return Patching(m_clean, m_corrupt, patched, restored)


def _check_ids(engine, clean_ids, corrupt_ids, token_type_ids, position: int | None):
    check_pair(list(clean_ids), list(corrupt_ids))
    if position is not None and not 0 <= position < len(clean_ids):
        raise ValueError(f"the position must be in 0..{len(clean_ids) - 1} (0-indexed), got {position}")
    if is_decoder(engine):
        return None
    return [0] * len(clean_ids) if token_type_ids is None else [int(t) for t in token_type_ids]


def patch_heads(
    engine,
    clean_ids,
    corrupt_ids,
    metric: Metric,
    position: int | None = None,
    *,
    token_type_ids=None,
    progress: Progress | None = None,
) -> Patching:
    """Each head's output patched from the corrupt run into the clean one, alone, at every position
    (position None) or at `position` only: restored (L, H). token_type_ids: a BERT's, for both runs."""
    types = _check_ids(engine, clean_ids, corrupt_ids, token_type_ids, position)
    clean_hidden, clean_ctx, cache = _components(engine, clean_ids, types)  # ctx (L, H, T, d_k)
    corrupt_hidden, corrupt_ctx, _ = _components(engine, corrupt_ids, types)
    rows = slice(None) if position is None else slice(position, position + 1)

    def patches():
        for layer, head in np.ndindex(clean_ctx.shape[:2]):
            value = clean_ctx[layer, head].copy()  # (T, d_k)
            value[rows] = corrupt_ctx[layer, head, rows]
            same = np.array_equal(value, clean_ctx[layer, head])
            yield (layer, head), None if same else Patch(heads={(layer, head): value})

    clean = _clean_run(clean_ids, types, corrupt_ids, clean_hidden, cache)
    return _sweep(engine, clean, corrupt_hidden, metric, patches(), clean_ctx.shape[:2], progress)


def patch_residual(
    engine, clean_ids, corrupt_ids, metric: Metric, *, token_type_ids=None, progress: Progress | None = None
) -> Patching:
    """Causal tracing: the hidden state entering each layer at each position, patched from the corrupt
    run into the clean one, alone: restored (L, T)."""
    types = _check_ids(engine, clean_ids, corrupt_ids, token_type_ids, None)
    clean_hidden, cache = _states(engine, clean_ids, types)
    corrupt_hidden = engine.hidden_states(corrupt_ids, types)
    n_layers, n_tokens = len(clean_hidden) - 1, len(clean_ids)

    def patches():
        for layer, position in np.ndindex(n_layers, n_tokens):
            value = clean_hidden[layer].copy()  # (T, D)
            value[position] = corrupt_hidden[layer, position]
            same = np.array_equal(value, clean_hidden[layer])
            yield (layer, position), None if same else Patch(residual={layer: value})

    clean = _clean_run(clean_ids, types, corrupt_ids, clean_hidden, cache)
    return _sweep(engine, clean, corrupt_hidden, metric, patches(), (n_layers, n_tokens), progress)
