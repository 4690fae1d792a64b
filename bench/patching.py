"""Activation patching (core/measures/patching.py): the full heads grid on a 20-token minimal pair,
each head patched alone at every position, the NumPy sweep restarting at the patched layer.

- bundled BERT (6 layers x 12 heads = 72 patched runs), the pronoun test's metric after the last
  layer: target 3 s (issue 39);
- the shipped letter GPT-2 (models/letters-gpt2), a repeated sequence against one with a letter
  changed in its first copy, the next-token distribution's total variation;
- SmolLM2-135M in float32, when its GGUF is installed (30 layers x 9 heads = 270 runs), log p(" trophy")
  - log p(" suitcase"): target 10 s; and held in bfloat16 as on the hosted demo (each block's weights
  expanded to float32 when it runs).
Beside each, the positions grid (causal tracing, L x T runs), which the page computes on request.
Medians of a few sweeps, after one warm-up sweep.

    python -m bench --only patching
"""

from __future__ import annotations

import time

from bench.common import Row

BERT_PAIR = (
    "The trophy would not fit in the brown suitcase because it was too big, she said.",
    "The trophy would not fit in the brown suitcase because it was too small, she said.",
)
LETTERS_PAIR = ("pqrstuvwxy pqrstuvwx", "pqrstzvwxy pqrstuvwx")  # the first copy changed at one letter
LLM_PAIR = (
    "The trophy would not fit in the suitcase because it was too big. The big one was the",
    "The trophy would not fit in the suitcase because it was too small. The big one was the",
)


def _median_sweep(sweep, repeats: int) -> float:
    sweep()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sweep()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def _rows(label, engine, pair, metric, target, repeats) -> list[Row]:
    from bench.bert_speed import load_average
    from core.measures.patching import encode_pair, patch_heads, patch_residual

    clean, corrupt = encode_pair(engine, *pair)
    n = len(clean.ids)
    heads = _median_sweep(lambda: patch_heads(engine, clean.ids, corrupt.ids, metric), repeats)
    positions = _median_sweep(
        lambda: patch_residual(engine, clean.ids, corrupt.ids, metric), max(1, repeats // 2)
    )
    runs = engine.n_layers * engine.n_heads
    note = f"{runs} patched runs; load {load_average()}"
    return [
        Row(f"patching, heads grid, {n}-token pair: {label}", heads, "s", target=target, note=note),
        Row(
            f"patching, positions grid, {n}-token pair: {label}",
            positions,
            "s",
            note=f"{engine.n_layers} x {n} cells",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    from core.measures.patching import next_token_shift, option_metric, pronoun_metric
    from core.models import smollm2
    from core.models.architectures import load_engine
    from core.models.llama import LlamaNumpy

    repeats = 1 if quick else 5
    bert = load_engine("bundled")
    metric = pronoun_metric(bert.run(BERT_PAIR[0]), "it", "trophy", "suitcase", bert.n_layers)
    rows = _rows("bundled BERT", bert, BERT_PAIR, metric, 3.0, repeats)
    letters = load_engine("letters")
    metric = next_token_shift(letters, letters.hidden_states(letters.encode(LETTERS_PAIR[0]).ids))
    rows += _rows("letters GPT-2", letters, LETTERS_PAIR, metric, None, repeats)
    if smollm2.packaged_gguf() is None:
        return rows
    for compact, label in ((False, "float32"), (True, "bfloat16 as hosted")):
        llm = LlamaNumpy.from_pretrained(smollm2.smollm2_model_dir(), compact=compact)
        metric = option_metric(llm, [" trophy", " suitcase"])[0]
        rows += _rows(f"SmolLM2-135M, {label}", llm, LLM_PAIR, metric, 10.0, 1 if quick else 3)
    return rows
