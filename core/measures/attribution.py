"""Which tokens matter to the sentence embedding, measured by leaving each one out, beside what
attention would say.

Leave-one-out: for each token j that is not [CLS] or [SEP], its id is dropped from the input (the
rest, [CLS] and [SEP] included, kept in order), the model runs again, and j's importance is how far
the model's output moves (core/measures/ablation.py: an encoder's embedding, 1 − cos; a decoder's
next-token probabilities, total variation). Li, Monroe and Jurafsky (2016), "Understanding Neural
Networks through Representation Erasure".

What attention would say, one value per token, each the mean of a column (for a decoder, the last
row's value: the output measured is the prediction made at the last position):
- attention: the weight each token receives in the last layer, averaged over heads and queries;
- rollout: the last layer's rollout (core/measures/flow.py, Abnar and Zuidema 2020), averaged over rows;
- norms: ‖α f(x)‖ in the last layer (core/measures/flow.py, Kobayashi et al. 2020), over heads and rows.
Spearman's ρ of each against leave-one-out, over the scored tokens, says how far the two rankings
agree: Jain and Wallace (2019), "Attention is not Explanation"; Wiegreffe and Pinter (2019),
"Attention is not not Explanation".

Letters: L layers, H heads, T tokens, D hidden size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.measures.ablation import Progress, model_output, next_token_probs, output_effect, total_variation
from core.measures.flow import attention_norms, attention_rollout, value_output_vectors
from core.measures.sweep import batched, in_batches
from core.models.architectures import is_decoder
from core.models.errors import ModelError

__all__ = ["MEASURES", "Attribution", "attention_columns", "attribution", "leave_one_out", "spearman"]

MEASURES = ("attention", "rollout", "norms")  # what attention would say, in the page's order


def leave_one_out(engine, result, progress: Progress | None = None) -> np.ndarray:
    """(T,) float64: how far the output moves without token j (output_effect); NaN at special tokens.
    progress(done, total) is called as the runs finish."""
    scored = np.flatnonzero(~np.asarray(result.special_mask, dtype=bool))
    scores = np.full(result.n_tokens, np.nan)
    if batched(engine):
        for done, (j, score) in enumerate(_decoder_runs(engine, result, scored), start=1):
            scores[j] = score
            if progress is not None:
                progress(done, len(scored))
        return scores
    reference = model_output(engine, result.hidden_states[-1])
    ids, types = np.asarray(result.input_ids), result.token_type_ids
    types = np.zeros_like(ids) if types is None else np.asarray(types)
    for done, j in enumerate(scored, start=1):
        keep = np.arange(result.n_tokens) != j
        hidden = engine.hidden_states(ids[keep], types[keep])  # (L + 1, T - 1, D)
        scores[j] = output_effect(engine, model_output(engine, hidden[-1]), reference)
        if progress is not None:
            progress(done, len(scored))
    return scores


def _decoder_runs(engine, result, scored: np.ndarray):
    """(j, total variation without token j) for each j of `scored`, on a NumPy decoder: the runs, all
    T - 1 tokens long at positions 0 .. T - 2, go through the blocks together, (B, T - 1, D), in
    batches of about BATCH_ROWS rows (core/measures/sweep.py)."""
    reference = model_output(engine, result.hidden_states[-1])
    ids, positions = np.asarray(result.input_ids), np.arange(result.n_tokens)
    for batch in in_batches(scored, result.n_tokens - 1):
        kept = [ids[positions != j] for j in batch]
        for run in kept:
            engine.check_ids(run, 0)
        x = np.stack([engine.embed(run) for run in kept])  # (B, T - 1, D)
        final = engine.layers_from(0, x).hidden_states[-1, :, -1]  # (B, D): each run's last position
        for j, probs in zip(batch, next_token_probs(engine, final), strict=True):
            yield j, total_variation(probs, reference)


def attention_columns(result, layer_weights=None, *, last_row=False) -> dict[str, np.ndarray]:
    """{"attention", "rollout", "norms"} -> (T,) float64 column means, NaN at special tokens.
    layer_weights: the engine's layer_weights(L - 1) for the norms; without it "norms" is absent.
    last_row: read only the last query's row (a decoder, whose output is made there)."""
    rows = slice(-1, None) if last_row else slice(None)
    last = np.asarray(result.attentions[-1], dtype=np.float64)[:, rows]  # (H, T or 1, T)
    columns = {
        "attention": last.mean(axis=(0, 1)),
        "rollout": attention_rollout(result.attentions)[-1, rows].astype(np.float64).mean(axis=0),
    }
    if layer_weights is not None:
        f = value_output_vectors(result.hidden_states[-2], layer_weights, result.n_heads)  # (H, T, D)
        norms = attention_norms(np.asarray(result.attentions[-1], dtype=np.float64), f)  # (H, T, T)
        columns["norms"] = norms[:, rows].mean(axis=(0, 1))
    special = np.asarray(result.special_mask, dtype=bool)
    return {name: np.where(special, np.nan, values) for name, values in columns.items()}


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 0, ties sharing the mean of the ranks they span."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x))
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(inverse, weights=ranks) / counts)[inverse]


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's ρ over the positions where both are finite (Pearson's r of the ranks, ties
    averaged); None when fewer than 3 such positions or either side is constant there."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    both = np.isfinite(a) & np.isfinite(b)
    if both.sum() < 3:
        return None
    ra, rb = _ranks(a[both]), _ranks(b[both])
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return None if denominator == 0 else float((ra * rb).sum() / denominator)


@dataclass(frozen=True)
class Attribution:
    """Leave-one-out importance and attention's column means for one input, and their agreement."""

    tokens: list[str]
    loo: np.ndarray  # (T,) NaN at special tokens
    columns: dict[str, np.ndarray]  # MEASURES -> (T,), NaN at special tokens
    rho: dict[str, float | None]  # MEASURES -> Spearman's ρ against loo


def attribution(engine, result, progress: Progress | None = None) -> Attribution:
    """Leave-one-out on `engine` for `result`'s input, beside attention, rollout and norms (norms only
    when the engine can give its last layer's weights). progress: leave_one_out's."""
    try:
        weights = engine.layer_weights(result.n_layers - 1)
    except (ModelError, ValueError, AttributeError):  # no norms here (a GPT-2): the page says so
        weights = None
    loo = leave_one_out(engine, result, progress)
    columns = attention_columns(result, weights, last_row=is_decoder(engine))
    rho = {name: spearman(values, loo) for name, values in columns.items()}
    return Attribution(tokens=list(result.tokens), loo=loo, columns=columns, rho=rho)
