"""Writers of an AttentionResult, shared by the CLI (core/__main__.py) and the dashboard's downloads,
and of what the model does with it: the ablation grid and the leave-one-out attribution.

JSON: {"model": str, "engine": str, "tokens": [str], "attentions": [L][H][T][T]} (ARCHITECTURE.md),
weights rounded to 8 decimals. CSV: one row per weight (layer, head, from, to, weight). NPZ: the
result's arrays. `matrix_csv` writes one matrix on screen with its rows and columns labelled.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

import numpy as np

JSON_DECIMALS = 8  # abs error 5e-9: below float32's resolution near 1, and keeps files half the size


def to_json(result) -> str:
    payload = {
        "model": result.model,
        "engine": result.engine,
        "tokens": list(result.tokens),
        "attentions": np.round(result.attentions.astype(np.float64), JSON_DECIMALS).tolist(),
    }
    return json.dumps(payload, ensure_ascii=False)


def to_csv(result) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["layer", "head", "from_index", "from_token", "to_index", "to_token", "weight"])
    n_layers, n_heads, t, _ = result.attentions.shape
    tokens = list(result.tokens)
    targets = list(enumerate(tokens))
    for layer in range(n_layers):
        for head in range(n_heads):
            rows = result.attentions[layer, head]
            for i in range(t):
                weights = [format(w, ".8g") for w in rows[i].tolist()]
                writer.writerows(
                    (layer, head, i, tokens[i], j, token, w)
                    for (j, token), w in zip(targets, weights, strict=True)
                )
    return buffer.getvalue()


def to_npz(result) -> bytes:
    buffer = io.BytesIO()
    word_ids = np.array([-1 if w is None else w for w in result.word_ids], dtype=np.int64)
    token_types = (
        result.token_type_ids if result.token_type_ids is not None else np.zeros(len(word_ids), np.int64)
    )
    np.savez(
        buffer,
        tokens=np.array(result.tokens, dtype=str),
        attentions=result.attentions,
        hidden_states=result.hidden_states,
        special_mask=np.asarray(result.special_mask, dtype=bool),
        word_ids=word_ids,
        token_type_ids=np.asarray(token_types, dtype=np.int64),
        model=np.array(result.model),
        engine=np.array(result.engine),
    )
    return buffer.getvalue()


def matrix_csv(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], corner: str = "") -> str:
    """One 2-D matrix as CSV: a header of column labels (after `corner`), then a labelled row each."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([corner, *cols])
    for label, row in zip(rows, np.asarray(values, dtype=np.float64).tolist(), strict=True):
        writer.writerow([label, *(format(v, ".8g") for v in row)])
    return buffer.getvalue()


def _rounded(values) -> list:
    """float64 values rounded for JSON, NaN as null."""
    return [
        None if not np.isfinite(v) else round(float(v), JSON_DECIMALS) for v in np.asarray(values).ravel()
    ]


def ablation_json(result, effects: np.ndarray) -> str:
    """{"model", "engine", "tokens", "effect": [L][H]} (core.measures.ablation.head_effects' grid)."""
    grid = [_rounded(row) for row in np.asarray(effects)]
    payload = {"model": result.model, "engine": result.engine, "tokens": list(result.tokens), "effect": grid}
    return json.dumps(payload, ensure_ascii=False)


def ablation_csv(result, effects: np.ndarray) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["layer", "head", "effect"])
    for (layer, head), effect in np.ndenumerate(np.asarray(effects)):
        writer.writerow([layer, head, format(effect, ".8g")])
    return buffer.getvalue()


def attribution_json(result, found) -> str:
    """{"model", "engine", "tokens", "loo", "attention", "rollout", "norms", "spearman"}: null at
    [CLS] and [SEP] (and for a measure the engine cannot give)."""
    payload = {"model": result.model, "engine": result.engine, "tokens": list(result.tokens)}
    payload["loo"] = _rounded(found.loo)
    for name in ("attention", "rollout", "norms"):
        values = found.columns.get(name)
        payload[name] = [None] * len(result.tokens) if values is None else _rounded(values)
    payload["spearman"] = {
        name: None if found.rho.get(name) is None else round(found.rho[name], 6)
        for name in ("attention", "rollout", "norms")
    }
    return json.dumps(payload, ensure_ascii=False)


def attribution_csv(result, found) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = ("loo", "attention", "rollout", "norms")
    writer.writerow(["index", "token", *names])
    columns = [found.loo, *(found.columns.get(n, np.full(len(result.tokens), np.nan)) for n in names[1:])]
    for i, token in enumerate(result.tokens):
        writer.writerow([i, token, *("" if not np.isfinite(c[i]) else format(c[i], ".8g") for c in columns)])
    return buffer.getvalue()


def fill_json(result, fills) -> str:
    """{"model", "tokens", "masks": [{"index", "predictions": [{"token", "probability"}]}]}."""
    masks = [
        {
            "index": f.index,
            "predictions": [{"token": t, "probability": round(p, JSON_DECIMALS)} for t, p in f.predictions],
        }
        for f in fills
    ]
    payload = {"model": result.model, "tokens": list(result.tokens), "masks": masks}
    return json.dumps(payload, ensure_ascii=False)


# ---- decoders ---------------------------------------------------------------------------------------


def nextword_json(prompt: list[str], top: list[tuple[str, float]]) -> str:
    """{"tokens": [str], "next": [{"token": str, "prob": float}]}, most likely first."""
    payload = {"tokens": prompt, "next": [{"token": t, "prob": round(p, JSON_DECIMALS)} for t, p in top]}
    return json.dumps(payload, ensure_ascii=False)


def generate_json(generation) -> str:
    """{"tokens": the prompt, "generated": [str], "steps": [{"token", "top": [{"token", "prob"}],
    "kept": [{"token", "prob"}], "n_kept", "attentions": [L][H][t]}]}: step i's attentions are the
    predicting position's weights over the t tokens it saw (core/models/decoder.py's generate); kept
    is the distribution the token was drawn from after temperature, top-k and top-p, renormalised,
    most likely first (its first generate's kept_limit tokens of the n_kept; greedy: the token, 1)."""
    steps = [
        {
            "token": step.token,
            "top": [{"token": t, "prob": round(p, JSON_DECIMALS)} for t, p in step.top],
            "kept": [{"token": t, "prob": round(p, JSON_DECIMALS)} for t, p in step.kept],
            "n_kept": step.n_kept,
            "attentions": np.round(step.attentions.astype(np.float64), JSON_DECIMALS).tolist(),
        }
        for step in generation.steps
    ]
    payload = {"tokens": generation.prompt, "generated": generation.generated, "steps": steps}
    return json.dumps(payload, ensure_ascii=False)


def choose_json(prefix_tokens: list[str], options) -> str:
    """{"prefix_tokens": [str], "options": [{"text", "tokens", "logprob"}], "verdict"}
    (core/measures/choice.py)."""
    from core.measures.choice import verdict

    payload = {
        "prefix_tokens": prefix_tokens,
        "options": [
            {"text": o.text, "tokens": o.tokens, "logprob": round(o.logprob, JSON_DECIMALS)} for o in options
        ],
        "verdict": verdict(options),
    }
    return json.dumps(payload, ensure_ascii=False)


def induction_json(found) -> str:
    """{"length", "seed", "scores": [L][H], "loss_first", "loss_repeat", "ids"} (core/measures/induction.py):
    ids are the tokens it drew (both copies)."""
    payload = {
        "length": found.length,
        "seed": found.seed,
        "ids": [int(i) for i in found.token_ids],
        "scores": np.round(found.scores.astype(np.float64), JSON_DECIMALS).tolist(),
        "loss_first": round(found.loss_first, JSON_DECIMALS),
        "loss_repeat": round(found.loss_repeat, JSON_DECIMALS),
    }
    return json.dumps(payload, ensure_ascii=False)
