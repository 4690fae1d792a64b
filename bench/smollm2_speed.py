"""SmolLM2-135M-Instruct, the real small LLM that ships (core/models/smollm2.py), in NumPy beside
transformers' eager LlamaForCausalLM on the same converted weights, the same thread count.

- load, cold: the GGUF read, checked and converted into the cache (a fresh cache folder), then the
  NumPy engine built; warm: the NumPy engine from the converted folder (what every later start does),
  in a fresh process each time so nothing is shared.
- next word on 32 tokens: encode, forward, unembed the last position, softmax, top 5 (next_tokens).
- forward at 32 and 256 tokens: NumPy / torch (attentions and hidden states asked of both).
- generation per token, greedy, up to 256 tokens: with the KV cache and recomputing everything.
- held in bfloat16 (the hosted demo, core/models/bfloat16.py): next word and generation per token,
  and the resident memory of each way of holding the weights, in a fresh process.

    python -m bench --only smollm2_speed
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import Row, median_time

ROOT = Path(__file__).resolve().parents[1]
PROMPT_32 = (
    "The bank approved the loan after a long meeting with the family, and the children went down to "
    "the river bank to watch the small boats go by in the warm"
)
LOAD = (
    "import time; t = time.perf_counter(); from core.models.architectures import load_engine; "
    "load_engine('smollm2'); print(time.perf_counter() - t)"
)
# a fresh process: the engine held as asked, then its load time, resident and peak memory (MB)
HELD = (
    "import sys, time; t = time.perf_counter(); from core.models import smollm2; "
    "from core.models.llama import LlamaNumpy; "
    "e = LlamaNumpy.from_pretrained(smollm2.smollm2_model_dir(), compact=sys.argv[1] == 'bfloat16'); "
    "s = time.perf_counter() - t; status = open('/proc/self/status').read(); "
    "mb = lambda k: int(status.split(k + ':')[1].split()[0]) / 1024; print(s, mb('VmRSS'), mb('VmHWM'))"
)


def _load_seconds(cache: str) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    command = [sys.executable, "-c", LOAD]
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _held_rows() -> list[Row]:
    """How the weights are held (float32, or bfloat16 as on the hosted demo): memory and load time."""
    rows = []
    for hold in ("float32", "bfloat16"):
        command = [sys.executable, "-c", HELD, hold]
        out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
        seconds, resident, peak = map(float, out.stdout.strip().splitlines()[-1].split())
        note = f"peak while loading {peak:,.0f} MB; load {seconds:.2f} s (a fresh process, warm cache)"
        rows.append(Row(f"SmolLM2 held in {hold}: resident after loading", resident, "MB", note=note))
    return rows


def _compact_rows(folder: Path, repeats: int) -> list[Row]:
    """What holding the weights in bfloat16 costs in time (every block expanded as it is reached)."""
    from core.models.llama import LlamaNumpy

    compact = LlamaNumpy.from_pretrained(folder, compact=True)
    next_word = median_time(lambda: compact.next_tokens(PROMPT_32, 5), repeats, warmup=1)
    start = time.perf_counter()
    steps = len(compact.generate(PROMPT_32, 32).steps)
    per_token = (time.perf_counter() - start) / steps * 1e3
    return [
        Row("SmolLM2 in bfloat16 (hosted): next word on 32 tokens", next_word, "s", target=0.5),
        Row("SmolLM2 in bfloat16 (hosted): generation, 32 tokens, per token with the cache", per_token, "ms"),
    ]


def _load_rows(cache: str, repeats: int) -> list[Row]:
    cold = _load_seconds(cache)
    warm = sorted(_load_seconds(cache) for _ in range(repeats))[repeats // 2]
    return [
        Row("SmolLM2 load, cold (read the GGUF, check, convert once, build)", cold, "s"),
        Row("SmolLM2 load, warm (the converted folder, a fresh process)", warm, "s", target=3.0),
    ]


def _generation_rows(engine) -> list[Row]:
    rows = []
    for n in (32, 256):
        start = time.perf_counter()
        steps = len(engine.generate(PROMPT_32, n).steps)  # fewer if the model ends its text
        with_cache = (time.perf_counter() - start) / steps
        note = ""
        if n == 32:
            start = time.perf_counter()
            steps = len(engine.generate(PROMPT_32, n, use_cache=False).steps)
            note = f"recomputing everything: {(time.perf_counter() - start) / steps * 1e3:.0f} ms a token"
        rows.append(
            Row(
                f"SmolLM2 generation, {n} tokens: per token with the cache",
                with_cache * 1e3,
                "ms",
                target=100,
                note=note,
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    import torch
    from transformers import LlamaForCausalLM

    from bench.bert_speed import blas_threads
    from bench.gpt2_speed import forward_ratio_row
    from core.models import smollm2
    from core.models.llama import LlamaNumpy

    torch.set_num_threads(blas_threads())
    repeats = 3 if quick else 7
    with tempfile.TemporaryDirectory() as cache:
        rows = _load_rows(cache, 3 if quick else 5)
    folder = smollm2.smollm2_model_dir()
    engine = LlamaNumpy.from_pretrained(folder)
    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    assert len(engine.encode(PROMPT_32).ids) == 32
    rows.append(
        Row(
            "SmolLM2 next word on 32 tokens",
            median_time(lambda: engine.next_tokens(PROMPT_32, 5), repeats, warmup=1),
            "s",
            target=0.5,
        )
    )
    rng = np.random.default_rng(0)
    for n in (32, 256):
        ids = rng.integers(0, engine.vocab_size, size=n)
        rows.append(forward_ratio_row(f"SmolLM2 forward, {n} tokens", engine, model, ids, repeats))
    return rows + _generation_rows(engine) + _compact_rows(folder, repeats) + _held_rows()
