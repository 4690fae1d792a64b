"""The indirect-object circuit of a decoder, found by Wang et al.'s steps, every class from a measured
figure (core/measures/circuit_classes.py says which figure and threshold), none assumed.

On N prompts of the task (core/measures/ioi.py), clean against ABC (three other names), with path
patching (core/measures/paths.py: a sender's output from the ABC run, along chosen paths only):

    1) heads' figures   attention on the clean prompts, copy scores (core/measures/circuit_heads.py)
    2) direct effect    sender -> logits, every head: "direct" (L, H), the restored fraction
                        -> name movers and negative name movers (with their attention and copy tests)
    3) S-inhibition     sender -> the name movers' queries (via "q")
    4) induction and    sender -> the S-inhibition heads' keys, and -> their values (via "k", "v"),
       duplicate-token  summed; split by what the head attends to from S2 (S1 + 1 or S1)
    5) previous-token   sender -> the induction heads' keys (via "k"), attending S1 + 1 -> S1
    6) faithfulness     the mean logit difference with every head outside the circuit mean-ablated
                        (its weighted sum at each position replaced by its mean over ABC versions of
                        the prompt), over the full model's: F(circuit) / F(model)

A step whose receivers are missing (no name movers, no S-inhibition heads, no induction heads) is
skipped and says so in the evidence; its classes are empty. The restored fraction is
(patched - clean) / (ABC - clean) of the mean logit difference: positive when the sender's ABC
output lowers logit(IO) - logit(S) (it was helping), negative when it raises it.

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.

Letters: L layers, H heads, N prompts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.measures import circuit_classes as rules
from core.measures.circuit_heads import (
    abc_samples,
    attention_figures,
    copy_scores,
    head_means,
    logit_diff,
    mean_ablated,
)
from core.measures.circuit_json import circuit_json
from core.measures.ioi import ioi_prompts
from core.measures.paths import path_patch, path_patch_reads

__all__ = ["CLASSES", "MEAN_SAMPLES", "find_circuit"]

CLASSES = (
    "name_mover",
    "negative_name_mover",
    "s_inhibition",
    "induction",
    "duplicate_token",
    "previous_token",
)
MEAN_SAMPLES = 8  # ABC versions of each prompt its heads' means are taken over
Progress = Callable[[int, int], None]
# the search's stages and their share of the progress bar, in sender runs (a sweep is L * H of them)
STAGES = (
    ("heads", 0.2),
    ("direct", 1.0),
    ("q", 1.0),
    ("kv", 1.5),
    ("previous", 1.0),
    ("faithfulness", 0.3),
)


class _Bar:
    """One progress(done, total) over the stages: each stage's own (done, total) scaled to its share."""

    def __init__(self, n_heads: int, progress: Progress | None, say: Callable[[str], None] | None):
        self.sizes = {name: max(1, round(share * n_heads)) for name, share in STAGES}
        self.total, self.start, self.progress, self.say = sum(self.sizes.values()), 0, progress, say
        self.offsets, at = {}, 0
        for name, _ in STAGES:
            self.offsets[name], at = at, at + self.sizes[name]

    def stage(self, name: str, words: str) -> Progress:
        if self.say is not None:
            self.say(words)
        offset, size = self.offsets[name], self.sizes[name]

        def report(done: int, total: int) -> None:
            if self.progress is not None:
                self.progress(offset + min(size, int(size * done / max(total, 1))), self.total)

        report(0, 1)
        return report

    def done(self, name: str) -> None:
        if self.progress is not None:
            self.progress(self.offsets[name] + self.sizes[name], self.total)


def _sweep(engine, items, receivers, via, bar: _Bar, stage: str, words: str):
    """path_patch to the receivers via q/k/v (the logits when via is None), or None with no receivers."""
    if via is not None and not receivers:
        bar.done(stage)
        return None
    found = path_patch(engine, items, to=list(receivers), via=via, progress=bar.stage(stage, words))
    bar.done(stage)
    return found


def _sweep_kv(engine, items, receivers, bar: _Bar, words: str):
    """(path_patch to the receivers' keys, to their values), the sender's stream made once for both;
    (None, None) with no receivers."""
    if not receivers:
        bar.done("kv")
        return None, None
    found = path_patch_reads(
        engine, items, to=list(receivers), vias=("k", "v"), progress=bar.stage("kv", words)
    )
    bar.done("kv")
    return found["k"], found["v"]


def _restored(found, shape) -> np.ndarray:
    return np.full(shape, np.nan) if found is None else np.asarray(found.restored, np.float64)


def _faithfulness(engine, prompts, classes, direct_only, seed: int, bar: _Bar) -> dict:
    """F(model), F(circuit), F(nothing kept), F(circuit and the direct-only heads) and the ratios,
    every head outside mean-ablated."""
    report = bar.stage(
        "faithfulness", "step 6/6: faithfulness, the circuit alone (the other heads mean-ablated)"
    )
    n = len(prompts)
    means = []
    for i, prompt in enumerate(prompts):
        means.append(head_means(engine, abc_samples(engine, prompt, MEAN_SAMPLES, seed + i)))
        report(i + 1, 4 * n)
    every = list(np.ndindex(engine.n_layers, engine.n_heads))
    kept = sorted({tuple(x) for heads in classes.values() for x in heads})
    full = mean_ablated(engine, prompts, means, every)
    circuit = mean_ablated(engine, prompts, means, kept, lambda d, t: report(n + d, 4 * t))
    nothing = mean_ablated(engine, prompts, means, [], lambda d, t: report(2 * n + d, 4 * t))
    wider = sorted(set(kept) | {tuple(x) for x in direct_only})
    with_direct = mean_ablated(engine, prompts, means, wider, lambda d, t: report(3 * n + d, 4 * t))
    bar.done("faithfulness")
    return {
        "model": full,
        "circuit": circuit,
        "nothing_kept": nothing,
        "faithfulness": circuit / full if full else float("nan"),
        "heads_kept": len(kept),
        "with_direct_only": with_direct,
        "faithfulness_with_direct_only": with_direct / full if full else float("nan"),
        "mean_samples": MEAN_SAMPLES,
    }


def _search(engine, items, figures, copy, negative, t: rules.Thresholds, bar: _Bar):
    """Steps 2 to 5: (classes, path grids, path results, the heads the rules left out, receivers)."""
    shape = (engine.n_layers, engine.n_heads)
    direct_found = _sweep(
        engine, items, (), None, bar, "direct", "step 2/6: direct effect, paths to the logits"
    )
    direct = np.asarray(direct_found.restored, np.float64)
    movers, negatives, direct_only = rules.name_movers(
        direct, figures["end_io"], figures["end_s"], copy, negative, t
    )
    taken = movers + negatives
    words = "step 3/6: S-inhibition, paths to the name movers' queries"
    q = _restored(_sweep(engine, items, movers, "q", bar, "q", words), shape)
    inhibition = rules.s_inhibition(q, taken, t)
    taken += inhibition
    words = "step 4/6: induction and duplicate-token, paths to the S-inhibition heads' keys and values"
    k, v = (_restored(found, shape) for found in _sweep_kv(engine, items, inhibition, bar, words))
    kv = k + v
    induction, duplicate, unassigned = rules.induction_duplicate(
        kv, figures["s2_s1_next"], figures["s2_s1"], taken, t
    )
    taken += induction + duplicate
    words = "step 5/6: previous-token, paths to the induction heads' keys"
    previous_k = _restored(_sweep(engine, items, induction, "k", bar, "previous", words), shape)
    previous = rules.previous_token(previous_k, figures["s1_next_s1"], taken, t)
    classes = dict(zip(CLASSES, (movers, negatives, inhibition, induction, duplicate, previous), strict=True))
    grids = {"direct": direct, "q": q, "k": k, "v": v, "kv": kv, "previous_k": previous_k}
    # a head the later steps put in a class is not left out
    left_out = {
        "direct_only": [x for x in direct_only if x not in taken + previous],
        "kv_unassigned": unassigned,
    }
    receivers = {"q": movers, "kv": inhibition, "previous_k": induction}
    return classes, grids, direct_found, left_out, receivers


def find_circuit(
    engine,
    *,
    prompts: int = 8,
    seed: int = 0,
    progress: Progress | None = None,
    say: Callable[[str], None] | None = None,
    thresholds: rules.Thresholds | None = None,
) -> dict:
    """The IOI circuit of a NumPy decoder on `prompts` seeded prompts, as the circuit command's JSON
    (a dict, core/measures/circuit_json.py): model, task, prompts, logit_diff_clean,
    logit_diff_corrupt, direct [L][H], classes, faithfulness, and evidence (every figure, threshold
    and path grid). progress(done, total) through every step; say(words) names each step."""
    t = thresholds or rules.Thresholds()
    task = ioi_prompts(engine, prompts, seed)
    items = [p.item for p in task]
    bar = _Bar(engine.n_layers * engine.n_heads, progress, say)
    report = bar.stage("heads", "step 1/6: where each head attends, what its OV circuit copies")
    figures = attention_figures(engine, task)
    report(1, 3)
    copy, negative = copy_scores(engine, task)
    report(2, 3)
    swapped = np.mean([logit_diff(engine, p.swapped_ids, p.item.answer, p.item.rival) for p in task])
    bar.done("heads")
    classes, grids, direct, left_out, receivers = _search(engine, items, figures, copy, negative, t, bar)
    faith = _faithfulness(engine, task, classes, left_out["direct_only"], seed, bar)
    found = {"classes": classes, "grids": grids, "figures": figures, "copy": copy, "negative": negative}
    found |= {"direct": direct, "left_out": left_out, "receivers": receivers, "faithfulness": faith}
    return circuit_json(engine, task, found | {"swapped": swapped}, t)
