"""The NumPy BERT engine against transformers: speed ratios, and what serving it costs.

Ratios (issue 13): BertNumpy.run(text) / PretrainedModel.run(text) (transformers' BertModel with
eager attention, attentions and hidden states returned), the tokenizer included on both sides, on the
bundled all-MiniLM-L6-v2 and the same text cut to 17, 32, 128 and 512 tokens, with the same thread
count (torch is set to the cores OpenBLAS uses by default). The engines alternate in blocks of calls
with a pause before each block: after a call, each side's idle BLAS threads keep spinning for a while
(OpenBLAS's up to ~0.1 s) and would slow the other side's next call. The first call of a block warms
up and is not timed. The ratio is of the medians; the note also gives the ratio of the fastest calls.

Serving: a fresh Python process imports the engine, loads the bundled model as the app does
(core.models.registry' checks included) and computes one sentence. "ready" is the time from the end of the
imports to the first result; peak RSS is the process's high-water mark (VmHWM). The torch engine is
measured the same way (torch and transformers imported first), for comparison.

    python -m bench --only bert_speed
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (17, 32, 128, 512)
RATIO_TARGET = 1.25  # the bound on NumPy / torch
TEXT = (
    "The trophy would not fit in the brown suitcase because it was too big. The animal didn't cross the "
    "street because it was too tired. I went to the bank to deposit money, then sat on the river bank. "
    "Attention lets every token look at every other token and decide how much of it to take in. "
)
SENTENCE = "The trophy would not fit in the brown suitcase because it was too big."


def load_average() -> str:
    """The 1-minute load average, so a table measured on a busy machine says so."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def blas_threads() -> int:
    """The threads OpenBLAS uses by default: OPENBLAS_NUM_THREADS, else one per core it may run on."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return int(os.environ.get("OPENBLAS_NUM_THREADS") or cores)


def text_of(engine, n_tokens: int) -> str:
    """The bench's text cut after a whole word so that it makes n_tokens tokens ([CLS] and [SEP]
    counted), or, for the longest, cut by the tokenizer itself."""
    long_text = TEXT * (1 + n_tokens // 50)
    enc = engine.encode(long_text)
    if len(enc.ids) <= n_tokens:
        return long_text
    for end in range(n_tokens - 2, 0, -1):
        text = long_text[: enc.offsets[end][1]]
        if len(engine.encode(text).ids) == n_tokens:
            return text
    raise ValueError(f"no cut of the bench's text makes {n_tokens} tokens")


def time_once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternate(calls: dict, blocks: int, per_block: int, pause: float = 0.3) -> dict[str, list[float]]:
    """Times of each call, alternating blocks: a pause, one untimed warm-up call, per_block timed."""
    times = {label: [] for label in calls}
    for _ in range(blocks):
        for label, fn in calls.items():
            time.sleep(pause)
            fn()
            times[label].extend(time_once(fn) for _ in range(per_block))
    return times


def ratio_rows(quick: bool) -> list[Row]:
    import torch

    from core.models.bert import BertNumpy
    from core.models.pretrained import load_pretrained

    threads = blas_threads()
    torch.set_num_threads(threads)
    numpy_engine = BertNumpy.from_pretrained()
    torch_engine = load_pretrained("bundled")
    rows = []
    for n_tokens in LENGTHS:
        text = text_of(numpy_engine, n_tokens)
        assert numpy_engine.run(text).n_tokens == torch_engine.run(text).n_tokens == n_tokens
        blocks, per_block = (2, 3) if quick else ((8, 6) if n_tokens < 512 else (6, 3))
        times = alternate(
            {"numpy": lambda t=text: numpy_engine.run(t), "torch": lambda t=text: torch_engine.run(t)},
            blocks,
            per_block,
        )
        t_numpy, t_torch = statistics.median(times["numpy"]), statistics.median(times["torch"])
        fastest = min(times["numpy"]) / min(times["torch"])
        rows.append(
            Row(
                f"NumPy BERT run(text) / torch eager run(text), {n_tokens} tokens",
                t_numpy / t_torch,
                "x",
                target=RATIO_TARGET,
                note=(
                    f"{1e3 * t_numpy:.1f} vs {1e3 * t_torch:.1f} ms, median of {len(times['numpy'])}; "
                    f"fastest calls: {fastest:.2f}x; {threads} threads each; load {load_average()}"
                ),
            )
        )
    return rows


# ---- serving, in a fresh process -----------------------------------------------------------------

_SERVE_NUMPY = """
import json, sys, time
start = time.perf_counter()
from core.models.bert import load_numpy
imported = time.perf_counter()
result = load_numpy("bundled").run(SENTENCE)
ready = time.perf_counter()
print(json.dumps({"import_s": imported - start, "ready_s": ready - imported, "peak_rss_mb": peak_rss_mb(),
    "torch_imported": "torch" in sys.modules, "tokens": result.n_tokens}))
"""

_SERVE_TORCH = """
import json, sys, time
start = time.perf_counter()
import torch, transformers
from core.models.pretrained import load_pretrained
imported = time.perf_counter()
result = load_pretrained("bundled").run(SENTENCE)
ready = time.perf_counter()
print(json.dumps({"import_s": imported - start, "ready_s": ready - imported, "peak_rss_mb": peak_rss_mb(),
    "torch_imported": "torch" in sys.modules, "tokens": result.n_tokens}))
"""

# ru_maxrss would not do: Linux carries it over fork + exec, so a child started by this (large)
# process would report the parent's size. VmHWM belongs to the new program's own memory map.
_PEAK_RSS = """
def peak_rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""


def serve(script: str) -> dict:
    code = f"SENTENCE = {SENTENCE!r}\n{_PEAK_RSS}\n{script}"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"serving benchmark failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def serving_rows(quick: bool) -> list[Row]:
    runs = 1 if quick else 3
    rows = []
    for label, script, rss_bound, ready_bound in (
        ("NumPy engine", _SERVE_NUMPY, 250.0, 0.5),
        ("torch engine", _SERVE_TORCH, None, None),
    ):
        results = [serve(script) for _ in range(runs)]
        imports = statistics.median(r["import_s"] for r in results)
        torch_note = "torch imported" if results[0]["torch_imported"] else "torch never imported"
        rows += [
            Row(
                f"{label} serving: peak RSS, load + one sentence",
                statistics.median(r["peak_rss_mb"] for r in results),
                "MB",
                target=rss_bound,
                note=torch_note,
            ),
            Row(
                f"{label} serving: ready after imports",
                statistics.median(r["ready_s"] for r in results),
                "s",
                target=ready_bound,
                note=f"imports took {imports:.2f} s; median of {runs} fresh processes",
            ),
        ]
    return rows


def run(quick: bool = False) -> list[Row]:
    return ratio_rows(quick) + serving_rows(quick)


if __name__ == "__main__":
    from bench.common import format_table

    print(format_table(run(quick="--quick" in sys.argv)))
