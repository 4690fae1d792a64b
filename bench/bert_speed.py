"""The NumPy BERT engine against transformers: forward-time ratios, and what serving it costs.

Ratios (issue 4, section 3): BertNumpy.forward time / transformers' BertModel forward time, with
attn_implementation="eager", output_attentions=True and output_hidden_states=True under
torch.inference_mode(); the bundled all-MiniLM-L6-v2 weights for both, the same token ids (real text
cut to the length), one sentence, the same thread count (torch is set to OpenBLAS's: 2 here; from 128
tokens the NumPy engine runs two Python threads with one BLAS thread each; up to _PARTNER_TOKENS, a
partner process takes half of every layer, one BLAS thread each), in one process.
The engines alternate in blocks of calls, so a change in the machine's load hits both alike; the
ratio is of the medians, and the note gives the ratio of the fastest calls and the load average.

Partner: one sentence with the partner process (core/bert_partner.py: each layer split by heads
between two processes) against the engine's best path in one process, 17 to 512 tokens: where
core.bert's _PARTNER_TOKENS comes from. The ratio rows wait until the partner has started, as a
session's second sentence would find it.

Kernels: the engine on the OpenBLAS kernels core/blas_kernels.py picks for this CPU (Haswell on AMD
Zen 4) against the kernels OpenBLAS picks itself (SkylakeX there), switched in one process.

Two threads: the NumPy engine's two-thread path against its one-thread path, from 64 to 512 tokens:
where core.bert's _TWO_THREADS_MIN_ROWS comes from.

Serving: a fresh Python process imports the engine, loads the bundled model the way the app does
(core.models' sha256 check included) and computes one sentence. "ready" is the time from the end of
the imports to the first result; peak RSS is the process's high-water mark (VmHWM). The torch path
is measured the same way (torch and transformers imported first), for comparison. A third run
computes a second sentence once the partner process has started and adds the partner's peak RSS.

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

import numpy as np

from bench.common import Row
from core import blas_threads

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = {17: 0.7, 32: 0.7, 128: 0.9, 512: 1.1}  # tokens -> the bound on the ratio
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


def token_ids(engine, n_tokens: int) -> np.ndarray:
    """Real text's ids cut to n_tokens: [CLS] ... [SEP]."""
    ids = engine.encode(TEXT * (1 + n_tokens // 60)).ids
    return np.array([*ids[: n_tokens - 1], ids[-1]], dtype=np.int64)


def time_once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def ratio_rows(quick: bool) -> list[Row]:
    import torch
    from transformers import BertModel

    from core.bert import BertNumpy
    from core.models import bundled_model_dir

    model_dir = bundled_model_dir()
    threads = blas_threads.get_threads() or torch.get_num_threads()
    torch.set_num_threads(threads)
    numpy_engine = BertNumpy.from_pretrained(model_dir)
    numpy_engine.wait_for_partner()  # as in a session after its first sentence
    torch_model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    rows = []
    for n_tokens, bound in LENGTHS.items():
        ids = token_ids(numpy_engine, n_tokens)
        torch_ids = torch.from_numpy(ids)[None]

        def run_numpy(ids=ids):
            numpy_engine.forward(ids)

        def run_torch(torch_ids=torch_ids):
            with torch.inference_mode():
                torch_model(input_ids=torch_ids, output_attentions=True, output_hidden_states=True)

        # Alternate blocks, not single calls: after a forward pass each engine's thread team keeps
        # spinning for a while (OpenBLAS up to ~0.1 s), which would slow the other engine's next call.
        # The pause lets those threads sleep; the first call of each block warms up (and is not timed).
        blocks, per_block = (2, 3) if quick else ((8, 6) if n_tokens < 512 else (6, 3))
        numpy_times, torch_times = [], []
        for _ in range(blocks):
            for times, fn in ((numpy_times, run_numpy), (torch_times, run_torch)):
                time.sleep(0.3)
                fn()
                times.extend(time_once(fn) for _ in range(per_block))
        repeats = blocks * per_block
        t_numpy, t_torch = statistics.median(numpy_times), statistics.median(torch_times)
        # Other processes on the machine inflate the medians (torch's more: its thread team waits for
        # a descheduled member); the ratio of the fastest runs is the quiet-machine figure.
        best = min(numpy_times) / min(torch_times)
        rows.append(
            Row(
                f"NumPy BERT forward / torch eager, {n_tokens} tokens",
                t_numpy / t_torch,
                "x",
                target=bound,
                note=(
                    f"{1e3 * t_numpy:.1f} vs {1e3 * t_torch:.1f} ms, median of {repeats}; fastest runs: "
                    f"{best:.2f}x; {threads} threads; NumPy: {numpy_path(numpy_engine, n_tokens)}, OpenBLAS "
                    f"{blas_threads.kernels()} kernels; load {load_average()}"
                ),
            )
        )
    return rows


def numpy_path(engine, n_tokens: int) -> str:
    """How the engine computes one sentence of n_tokens, for the notes."""
    from core.bert import _worth_two_threads

    if engine._for_partner(np.zeros((1, n_tokens), np.int64), None) and engine._partner_ready():
        return "layers split with the partner process"
    if _worth_two_threads(n_tokens, engine.two_threads_from_rows):
        return "two Python threads"
    return f"one thread, {blas_threads.get_threads()} BLAS threads"


def alternate(forward, settings: dict, blocks: int, per_block: int, pause: float = 0.0) -> dict[str, list]:
    """Times of forward() under each setting, alternating blocks of calls in one process so a change
    in the machine's load hits every setting alike. settings: label -> a function that applies it;
    the first call of each block warms up and is not timed."""
    times = {label: [] for label in settings}
    for _ in range(blocks):
        for label, apply in settings.items():
            apply()
            time.sleep(pause)
            forward()
            times[label].extend(time_once(forward) for _ in range(per_block))
    return times


def alternate_forward(engine, n_tokens: int, settings: dict, **kwargs) -> dict[str, list]:
    """alternate() on engine.forward over n_tokens of the bench's text: the engine's A/B rows."""
    ids = token_ids(engine, n_tokens)
    return alternate(lambda: engine.forward(ids), settings, **kwargs)


# ---- the weight block's huge pages -----------------------------------------------------------------


def layout_rows(quick: bool) -> list[Row]:
    """The same engine with its layer weights copied out of the huge-page block into ordinary
    allocations, against the block, alternating in one process: what core.bert_kernels' WeightBlock buys."""
    from dataclasses import fields, replace

    from core.bert import BertNumpy
    from core.models import bundled_model_dir

    engine = BertNumpy.from_pretrained(bundled_model_dir())
    engine.partner_tokens = None  # this process's weights are the ones compared
    in_block = engine.layers

    # np.array copies each tensor into its own malloc'd buffer: 4 KiB pages (numpy asks for huge pages
    # only for buffers of 4 MiB or more, and every single weight matrix here is smaller)
    def copied(layer):
        return replace(layer, **{f.name: np.array(getattr(layer, f.name)) for f in fields(layer)})

    ordinary = [copied(layer) for layer in in_block]
    rows = []
    for n_tokens in (17, 32):
        times = alternate_forward(
            engine,
            n_tokens,
            {
                "ordinary": lambda: setattr(engine, "layers", ordinary),
                "block": lambda: setattr(engine, "layers", in_block),
            },
            blocks=3 if quick else 10,
            per_block=8,
        )
        engine.layers = in_block
        t_block, t_ordinary = statistics.median(times["block"]), statistics.median(times["ordinary"])
        rows.append(
            Row(
                f"NumPy BERT forward, weights in huge pages / ordinary pages, {n_tokens} tokens",
                t_block / t_ordinary,
                "x",
                note=(
                    f"{1e3 * t_block:.2f} vs {1e3 * t_ordinary:.2f} ms, "
                    f"median of {len(times['block'])}, alternating blocks"
                ),
            )
        )
    return rows


# ---- OpenBLAS's kernels ------------------------------------------------------------------------------


def switch_kernels(name: str | None) -> None:
    """Make NumPy's OpenBLAS pick its kernels again, as at import with OPENBLAS_CORETYPE=name (None: its
    own choice for this CPU), through OpenBLAS's gotoblas_dynamic_quit / gotoblas_dynamic_init. For
    measuring only: the product sets OPENBLAS_CORETYPE before NumPy loads (core/blas_kernels.py), since
    swapping kernels while another thread multiplies would crash."""
    if name is None:
        os.environ.pop("OPENBLAS_CORETYPE", None)
    else:
        os.environ["OPENBLAS_CORETYPE"] = name
    library = blas_threads.library()
    library.gotoblas_dynamic_quit()
    library.gotoblas_dynamic_init()
    if name is not None and (blas_threads.kernels() or "").lower() != name.lower():
        raise RuntimeError(f"OpenBLAS did not switch to {name} kernels (it runs {blas_threads.kernels()})")


def kernel_rows(quick: bool) -> list[Row]:
    """The engine on the kernels core/blas_kernels.py chose against OpenBLAS's own choice for this CPU,
    alternating in one process. Empty where the two are the same (every CPU but AMD Zen 4, so far)."""
    from core.bert import BertNumpy
    from core.blas_kernels import kernels_for_this_cpu
    from core.models import bundled_model_dir

    chosen = kernels_for_this_cpu()
    library = blas_threads.library()
    if chosen is None or library is None or not hasattr(library, "gotoblas_dynamic_init"):
        return []
    user_setting = os.environ.get("OPENBLAS_CORETYPE")
    switch_kernels(None)
    own = blas_threads.kernels()
    engine = BertNumpy.from_pretrained(bundled_model_dir())
    engine.partner_tokens = None  # the switch reaches this process's OpenBLAS only
    rows = []
    try:
        for n_tokens in (32, 128, 512):
            times = alternate_forward(
                engine,
                n_tokens,
                {"own": lambda: switch_kernels(None), "chosen": lambda: switch_kernels(chosen)},
                blocks=2 if quick else 8,
                per_block=6 if n_tokens < 512 else 3,
            )
            t_chosen, t_own = statistics.median(times["chosen"]), statistics.median(times["own"])
            rows.append(
                Row(
                    f"NumPy BERT forward, OpenBLAS {chosen} / {own} kernels, {n_tokens} tokens",
                    t_chosen / t_own,
                    "x",
                    note=(
                        f"{1e3 * t_chosen:.2f} vs {1e3 * t_own:.2f} ms, median of {len(times['own'])}, "
                        f"alternating blocks; {own} is OpenBLAS's own choice here"
                    ),
                )
            )
    finally:
        switch_kernels(user_setting or chosen)
    return rows


# ---- two threads for long inputs -------------------------------------------------------------------


def two_thread_rows(quick: bool) -> list[Row]:
    """The engine's two-thread path (core.bert, from _TWO_THREADS_MIN_ROWS rows) against its one-thread
    path on the same input, alternating blocks in one process: where the threshold comes from."""
    from core.bert import _TWO_THREADS_MIN_ROWS, BertNumpy
    from core.models import bundled_model_dir

    if not blas_threads.available():  # the engine cannot use two threads here
        return []
    engine = BertNumpy.from_pretrained(bundled_model_dir())
    engine.partner_tokens = None  # the two in-process paths, also where the partner would take over
    rows = []
    for n_tokens in (64, 96, 128, 256, 512):
        times = alternate_forward(
            engine,
            n_tokens,
            {
                "one": lambda: setattr(engine, "two_threads_from_rows", None),
                "two": lambda: setattr(engine, "two_threads_from_rows", 1),
            },
            blocks=2 if quick else 8,
            per_block=6 if n_tokens < 512 else 3,
            pause=0.15,  # let OpenBLAS's spinning thread sleep, as it does between sentences
        )
        engine.two_threads_from_rows = _TWO_THREADS_MIN_ROWS
        t_two, t_one = statistics.median(times["two"]), statistics.median(times["one"])
        used = "used" if n_tokens >= _TWO_THREADS_MIN_ROWS else "not used"
        rows.append(
            Row(
                f"NumPy BERT forward, two threads / one thread, {n_tokens} tokens",
                t_two / t_one,
                "x",
                note=(
                    f"{1e3 * t_two:.1f} vs {1e3 * t_one:.1f} ms, median of {len(times['two'])}; "
                    f"two threads {used} at this length; load {load_average()}"
                ),
            )
        )
    return rows


# ---- the partner process ---------------------------------------------------------------------------


def partner_rows(quick: bool) -> list[Row]:
    """One sentence with the partner process (core/bert_partner.py) against the engine's best path in
    one process (one thread with two BLAS threads below _TWO_THREADS_MIN_ROWS, two Python threads from
    there), alternating blocks in one process: where core.bert's _PARTNER_TOKENS comes from."""
    from core.bert import _PARTNER_TOKENS, BertNumpy
    from core.models import bundled_model_dir

    engine = BertNumpy.from_pretrained(bundled_model_dir())
    engine.partner_tokens = (1, 512)  # the shared memory sized for every length measured here
    if not engine.wait_for_partner():
        return []
    rows = []
    for n_tokens in (17, 32, 64, 128, 256, 512):
        times = alternate_forward(
            engine,
            n_tokens,
            {
                "one process": lambda: setattr(engine, "partner_tokens", None),
                "partner": lambda: setattr(engine, "partner_tokens", (1, 512)),
            },
            blocks=2 if quick else 8,
            per_block=6 if n_tokens < 512 else 3,
            pause=0.15,  # let OpenBLAS's spinning thread sleep, as it does between sentences
        )
        t_partner, t_one = statistics.median(times["partner"]), statistics.median(times["one process"])
        used = "used" if _PARTNER_TOKENS[0] <= n_tokens <= _PARTNER_TOKENS[1] else "not used"
        rows.append(
            Row(
                f"NumPy BERT forward, partner process / one process, {n_tokens} tokens",
                t_partner / t_one,
                "x",
                note=(
                    f"{1e3 * t_partner:.1f} vs {1e3 * t_one:.1f} ms, median of {len(times['partner'])}; "
                    f"the partner {used} at this length; load {load_average()}"
                ),
            )
        )
    engine.close()
    return rows


def padding_rows(quick: bool) -> list[Row]:
    """The partner path's products on token rows padded to the multiple this machine's BLAS kernels
    run fastest (core.bert_kernels.gemm_row_multiple) against the tokens' rows alone, alternating
    blocks in one process. At 16 tokens nothing is padded: that row shows the noise. Empty where the
    kernels get no padding."""
    from core.bert import BertNumpy
    from core.models import bundled_model_dir

    engine = BertNumpy.from_pretrained(bundled_model_dir())
    multiple = engine.partner_row_multiple
    if multiple == 1 or not engine.wait_for_partner():
        return []
    rows = []
    for n_tokens in (16, 17, 18, 19):
        times = alternate_forward(
            engine,
            n_tokens,
            {
                "padded": lambda: setattr(engine, "partner_row_multiple", multiple),
                "exact": lambda: setattr(engine, "partner_row_multiple", 1),
            },
            blocks=2 if quick else 8,
            per_block=6,
            pause=0.15,
        )
        t_padded, t_exact = statistics.median(times["padded"]), statistics.median(times["exact"])
        rows.append(
            Row(
                f"NumPy BERT forward, products on rows padded to {multiple} / on the tokens' rows, "
                f"{n_tokens} tokens",
                t_padded / t_exact,
                "x",
                note=(
                    f"{1e3 * t_padded:.2f} vs {1e3 * t_exact:.2f} ms, median of {len(times['padded'])}, "
                    f"alternating blocks; the partner path, OpenBLAS {blas_threads.kernels()} kernels"
                ),
            )
        )
    engine.close()
    return rows


# ---- serving, in a fresh process -----------------------------------------------------------------

_SERVE_NUMPY = """
import json, sys, time
start = time.perf_counter()
from core.bert import load_numpy
imported = time.perf_counter()
result = load_numpy("bundled").run(SENTENCE)
ready = time.perf_counter()
print(json.dumps({"import_s": imported - start, "ready_s": ready - imported,
    "peak_rss_mb": peak_rss_mb(),
    "torch_imported": "torch" in sys.modules, "tokens": result.n_tokens}))
"""

# A session's second sentence runs with the partner process: both processes' peaks, summed.
_SERVE_NUMPY_PARTNER = """
import json, sys, time
start = time.perf_counter()
from core.bert import load_numpy
imported = time.perf_counter()
engine = load_numpy("bundled")
result = engine.run(SENTENCE)
ready = time.perf_counter()
assert engine.wait_for_partner(), engine.partner_off
engine.run(SENTENCE)
partner = peak_rss_mb(engine._partner.pid)
print(json.dumps({"import_s": imported - start, "ready_s": ready - imported,
    "peak_rss_mb": peak_rss_mb() + partner, "partner_rss_mb": partner,
    "torch_imported": "torch" in sys.modules, "tokens": result.n_tokens}))
"""

_SERVE_TORCH = """
import json, sys, time
start = time.perf_counter()
import torch, transformers
from core.pretrained import load_pretrained
imported = time.perf_counter()
result = load_pretrained("bundled").run(SENTENCE)
ready = time.perf_counter()
print(json.dumps({"import_s": imported - start, "ready_s": ready - imported,
    "peak_rss_mb": peak_rss_mb(),
    "torch_imported": "torch" in sys.modules, "tokens": result.n_tokens}))
"""


# ru_maxrss would not do: Linux carries it over fork + exec, so a child started by this (large)
# process would report the parent's size. VmHWM belongs to the new program's own memory map.
_PEAK_RSS = """
def peak_rss_mb(pid="self"):
    for line in open(f"/proc/{pid}/status"):
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
    for label, script, bounds in (
        ("NumPy engine", _SERVE_NUMPY, (300.0, 1.0)),
        ("NumPy engine and its partner process", _SERVE_NUMPY_PARTNER, (300.0, None)),
        ("torch engine", _SERVE_TORCH, (None, None)),
    ):
        results = [serve(script) for _ in range(runs)]
        rss = statistics.median(r["peak_rss_mb"] for r in results)
        ready = statistics.median(r["ready_s"] for r in results)
        imports = statistics.median(r["import_s"] for r in results)
        torch_note = "torch imported" if results[0]["torch_imported"] else "torch never imported"
        sentences = "one sentence"
        if "partner_rss_mb" in results[0]:
            partner = statistics.median(r["partner_rss_mb"] for r in results)
            torch_note += f"; both processes' peaks summed, the partner's {partner:.0f} MB"
            sentences = "two sentences (the second with the partner)"
        rows.append(
            Row(
                f"{label} serving: peak RSS, load + {sentences}",
                rss,
                "MB",
                target=bounds[0],
                note=torch_note,
            )
        )
        if bounds[1] is None and "partner_rss_mb" in results[0]:
            continue  # the same start as the row above: its memory is what this run adds
        rows.append(
            Row(
                f"{label} serving: ready after imports",
                ready,
                "s",
                target=bounds[1],
                note=f"imports took {imports:.2f} s; median of {runs} fresh processes",
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    sections = (
        ratio_rows,
        partner_rows,
        padding_rows,
        kernel_rows,
        two_thread_rows,
        layout_rows,
        serving_rows,
    )
    return [row for section in sections for row in section(quick)]


if __name__ == "__main__":
    from bench.common import format_table

    print(format_table(run(quick="--quick" in sys.argv)))
