"""Path patching (core/measures/paths.py) on SmolLM2-135M (30 layers x 9 heads = 270 senders), over 8
IOI prompts of 14 tokens built here from one fixed sentence with the names varied ("When Mary and
John went to the store, John gave a drink to", each corrupted with three other names: ABC):

- every sender -> the logits: target 30 s (issue 52);
- every sender -> the queries of the three heads with the largest direct effect (found by the first
  sweep), as a circuit search takes the name movers;
- every sender -> the keys and the values of the three heads with the largest effect through those
  queries (as the S-inhibition heads), both from one sweep (path_patch_reads);
the three sweeps together are the circuit search's path patching (aim: within 5 minutes).
Medians of a few runs (one for the q/k/v sweeps, which take tens of seconds each), with the load.

    python -m bench --only paths
"""

from __future__ import annotations

import resource
import time

from bench.common import Row

TEMPLATE = "When {a} and {b} went to the store, {b} gave a drink to"
PAIRS = [("Mary", "John"), ("Anna", "Tom"), ("Sarah", "James"), ("Emma", "David")]
PAIRS += [("Lisa", "Mark"), ("Kate", "Paul"), ("Alice", "Peter"), ("Laura", "Mike")]
OTHERS = ["Rachel", "Steve", "Chris", "Amy", "Ben", "Jack", "Lucy", "Dan", "Sam", "Joe", "Tim", "Bob"]


def ioi_items(engine):
    """The 8 prompt pairs: clean "When A and B ..., B gave a drink to" (answer A, rival B), corrupt the
    same sentence with two other names (ABC: nothing in it points to A)."""
    from core.measures.paths import PathItem

    items = []
    for k, (a, b) in enumerate(PAIRS):
        clean = engine.encode(TEMPLATE.format(a=a, b=b)).ids
        corrupt = engine.encode(TEMPLATE.format(a=OTHERS[k % 12], b=OTHERS[(k + 5) % 12])).ids
        answer, rival = (engine.encode(" " + name).ids[0] for name in (a, b))
        items.append(PathItem(clean, corrupt, answer, rival))
    return items


def _cpu() -> float:
    """This process's CPU seconds so far, every thread's (the BLAS threads included)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _timed(work, repeats: int):
    """(median seconds, median CPU seconds, the last result) of `repeats` runs. On a busy machine the
    CPU seconds say what the work itself took: about the time on one quiet core."""
    times, cpus, found = [], [], None
    for _ in range(repeats):
        start, cpu = time.perf_counter(), _cpu()
        found = work()
        times.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return sorted(times)[len(times) // 2], sorted(cpus)[len(cpus) // 2], found


def _top(restored, n: int = 3) -> list[tuple[int, int]]:
    import numpy as np

    order = np.argsort(-np.abs(np.nan_to_num(restored)), axis=None)[:n]
    return [tuple(int(v) for v in np.unravel_index(i, restored.shape)) for i in order]


def run(quick: bool = False) -> list[Row]:
    from bench.bert_speed import load_average
    from core.measures.paths import path_patch, path_patch_reads
    from core.models import smollm2
    from core.models.llama import LlamaNumpy

    if smollm2.packaged_gguf() is None:
        return []
    engine = LlamaNumpy.from_pretrained(smollm2.smollm2_model_dir())
    items = ioi_items(engine)
    n, tokens = engine.n_layers * engine.n_heads, len(items[0].clean)
    logits, logits_cpu, direct = _timed(lambda: path_patch(engine, items), 1 if quick else 3)
    movers = _top(direct.restored)
    q_time, q_cpu, q = _timed(lambda: path_patch(engine, items, to=movers, via="q"), 1)
    inhibition = _top(q.restored)
    kv_time, kv_cpu, _ = _timed(lambda: path_patch_reads(engine, items, to=inhibition, vias="kv"), 1)
    where = f"8 prompts x {tokens} tokens; load {load_average()}; CPU"
    total = logits + q_time + kv_time
    return [
        Row(
            f"path patching, {n} senders -> logits: SmolLM2-135M",
            logits,
            "s",
            30.0,
            note=f"{where} {logits_cpu:.1f} s",
        ),
        Row(
            f"path patching, {n} senders -> q of {_names(movers)}", q_time, "s", note=f"{where} {q_cpu:.1f} s"
        ),
        Row(
            f"path patching, {n} senders -> k and v of {_names(inhibition)}",
            kv_time,
            "s",
            note=f"{where} {kv_cpu:.1f} s",
        ),
        Row(
            "path patching, the three sweeps together",
            total,
            "s",
            300.0,
            note=f"CPU {logits_cpu + q_cpu + kv_cpu:.1f} s",
        ),
    ]


def _names(heads) -> str:
    return ", ".join(f"{layer}.{head}" for layer, head in heads)
