"""The circuit search (core/measures/circuit.py): SmolLM2-135M (30 layers x 9 heads), the IOI task on 8
prompts, seed 0, as `python -m core circuit --model smollm2 --prompts 8 --seed 0` runs it: the whole
search timed (target 5 min on a quiet 2-core machine, issue 52), and each of its steps (the heads'
attention and copy scores; path patching to the logits, to the name movers' queries, to the
S-inhibition heads' keys and values, to the induction heads' keys; faithfulness's mean ablations).
One search (it is minutes long); --quick runs 2 prompts. Skipped when SmolLM2's GGUF is not installed.

    python -m bench --only circuit
"""

from __future__ import annotations

import time

from bench.common import Row

TARGET_S = 300.0  # the whole search, issue 52


def run(quick: bool = False) -> list[Row]:
    from bench.bert_speed import load_average
    from core.measures.circuit import find_circuit
    from core.models import smollm2
    from core.models.architectures import load_engine

    if smollm2.packaged_gguf() is None:
        return []
    engine = load_engine("smollm2")
    prompts = 2 if quick else 8
    marks: list[tuple[str, float]] = []
    start = time.perf_counter()
    found = find_circuit(
        engine, prompts=prompts, seed=0, say=lambda words: marks.append((words, time.perf_counter()))
    )
    end = time.perf_counter()
    classes = ", ".join(f"{name} {len(heads)}" for name, heads in found["classes"].items())
    note = f"faithfulness {found['faithfulness']:.2f}; {classes}; load {load_average()}"
    rows = [
        Row(
            f"circuit search, SmolLM2-135M, {prompts} IOI prompts",
            end - start,
            "s",
            target=TARGET_S,
            note=note,
        )
    ]
    for (words, began), (_, ended) in zip(marks, [*marks[1:], ("end", end)], strict=True):
        step = words.split(":")[0]
        rows.append(Row(f"circuit search, {step}: {words.split(': ', 1)[1]}", ended - began, "s"))
    return rows
