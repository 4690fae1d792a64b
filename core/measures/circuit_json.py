"""The circuit search's result as the `circuit` command's JSON (core/measures/circuit.py computes it):
the contract's keys (ARCHITECTURE.md) and, under "evidence", every figure that put a head in its class
or left it out, the thresholds, the path-patching grids with their receivers, and faithfulness.

    evidence = {
      "thresholds": {name: value},                     circuit_classes.Thresholds
      "heads": {class: [{"head": [l, h], "figure": the path figure that decided, and the others}]},
      "left_out": {"direct_only": [...] (a direct effect past the threshold, failing the attention or
                   copy test, with "failed": [the tests, in words]), "kv_unassigned": [...]},
      "paths": {"direct" | "q" | "k" | "v" | "kv" | "previous_k":
                {"via": None | "q" | "k" | "v" | "k+v", "to": [[l, h]], "restored": [L][H]}},
      "receivers", "skipped", "attention": {figure: [L][H]}, "copy_score", "negative_copy_score",
      "faithfulness": {"model", "circuit", "nothing_kept", "with_direct_only", ...},
      "logit_diff_circuit", "logit_diff_swapped", "positions": [per prompt {"io", "s1", ...}]
    }
NaN (a sender that cannot reach the receivers, or a step skipped) is null.

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.
"""

from __future__ import annotations

import numpy as np

from core.measures import circuit_classes as rules

__all__ = ["DECIMALS", "SHOWN", "circuit_json", "grid_json"]

DECIMALS = 6


def grid_json(grid: np.ndarray) -> list[list[float | None]]:
    """An (L, H) grid as [L][H] lists, rounded, NaN (a sender that cannot reach) as None."""
    return [
        [None if not np.isfinite(v) else round(float(v), DECIMALS) for v in row] for row in np.asarray(grid)
    ]


def heads_json(heads) -> list[list[int]]:
    return [[int(layer), int(head)] for layer, head in heads]


# the figures each class's evidence lists per head: path grids (evidence "paths") and head figures
SHOWN = {
    "name_mover": ("direct", "end_io", "end_s", "copy_score"),
    "negative_name_mover": ("direct", "end_io", "end_s", "negative_copy_score"),
    "s_inhibition": ("q", "end_s2", "end_s"),
    "induction": ("kv", "k", "v", "s2_s1_next", "s2_s1"),
    "duplicate_token": ("kv", "k", "v", "s2_s1", "s2_s1_next"),
    "previous_token": ("previous_k", "s1_next_s1", "previous"),
}


def _paths_json(grids: dict[str, np.ndarray], receivers: dict[str, list]) -> dict[str, dict]:
    """Each path-patching grid with what it measures: {"via", "to" (the receivers), "restored" [L][H]}."""
    shown = {
        "direct": (None, []),
        "q": ("q", receivers["q"]),
        "k": ("k", receivers["kv"]),
        "v": ("v", receivers["kv"]),
        "kv": ("k+v", receivers["kv"]),
        "previous_k": ("k", receivers["previous_k"]),
    }
    return {
        name: {"via": via, "to": heads_json(to), "restored": grid_json(grids[name])}
        for name, (via, to) in shown.items()
    }


def _rows(heads, names, grids: dict[str, np.ndarray]) -> list[dict]:
    """Per head: its figures, the first being the path figure that put it in its class."""
    rows = []
    for x in heads:
        row = {"head": [int(x[0]), int(x[1])], "figure": round(float(grids[names[0]][x]), DECIMALS)}
        rows.append(row | {name: round(float(grids[name][x]), DECIMALS) for name in names})
    return rows


def _skipped(receivers: dict[str, list]) -> dict[str, str]:
    what = {"q": "name movers", "kv": "S-inhibition heads", "previous_k": "induction heads"}
    return {stage: f"no {what[stage]} to receive the paths" for stage in what if not receivers[stage]}


def _left_out(left_out: dict[str, list], heads: dict[str, np.ndarray], t: rules.Thresholds) -> dict:
    """The heads a path figure singled out that the rules left out of every class, with why."""
    direct = _rows(
        left_out["direct_only"], ("direct", "end_io", "end_s", "copy_score", "negative_copy_score"), heads
    )
    tests = ("direct", "end_io", "end_s", "copy_score", "negative_copy_score")
    for row in direct:
        row["failed"] = rules.mover_failures(tuple(row["head"]), *(heads[name] for name in tests), t)
    unassigned = _rows(left_out["kv_unassigned"], ("kv", "s2_s1_next", "s2_s1"), heads)
    return {"direct_only": direct, "kv_unassigned": unassigned}


def circuit_json(engine, task, found: dict, t: rules.Thresholds) -> dict:
    """The command's JSON from the search's results: found holds "classes", "grids" (path grids by
    name), "figures" (attention), "copy", "negative", "direct" (the PathPatching to the logits),
    "left_out", "receivers", "faithfulness" (circuit._faithfulness's dict), "swapped" (a float)."""
    classes, grids, faith = found["classes"], found["grids"], found["faithfulness"]
    heads = {
        **found["figures"],
        **grids,
        "copy_score": found["copy"],
        "negative_copy_score": found["negative"],
    }
    evidence = {
        "thresholds": t.as_dict(),
        "heads": {name: _rows(chosen, SHOWN[name], heads) for name, chosen in classes.items()},
        "left_out": _left_out(found["left_out"], heads, t),
        "paths": _paths_json(grids, found["receivers"]),
        "receivers": {stage: heads_json(chosen) for stage, chosen in found["receivers"].items()},
        "skipped": _skipped(found["receivers"]),
        "attention": {name: grid_json(grid) for name, grid in found["figures"].items()},
        "copy_score": grid_json(found["copy"]),
        "negative_copy_score": grid_json(found["negative"]),
        "faithfulness": {k: round(v, DECIMALS) if isinstance(v, float) else v for k, v in faith.items()},
        "logit_diff_circuit": round(float(faith["circuit"]), DECIMALS),
        "logit_diff_swapped": round(float(found["swapped"]), DECIMALS),
        "positions": [p.positions for p in task],
    }
    prompts = [
        {"text": p.text, "io": p.io, "s": p.s, "corrupt": p.corrupt, "order": p.order, "swapped": p.swapped}
        for p in task
    ]
    return {
        "model": engine.name,
        "task": "ioi",
        "prompts": prompts,
        "logit_diff_clean": round(float(found["direct"].metric_clean), DECIMALS),
        "logit_diff_corrupt": round(float(found["direct"].metric_corrupt), DECIMALS),
        "direct": grid_json(grids["direct"]),
        "classes": {name: heads_json(chosen) for name, chosen in classes.items()},
        "faithfulness": round(float(faith["faithfulness"]), DECIMALS),
        "evidence": evidence,
    }
