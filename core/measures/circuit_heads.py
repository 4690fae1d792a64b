"""What the circuit search (core/measures/circuit.py) measures on each head besides path patching:
where it attends on the task's prompts, whether its OV circuit copies names, and the model's logit
difference with heads mean-ablated (faithfulness).

- Attention, averaged over the clean prompts (rows attend to columns, core's convention): END -> IO,
  END -> S (S1 + S2), S2 -> S1 (duplicate-token heads), S2 -> S1 + 1 (induction heads), S1 + 1 -> S1
  (previous-token heads, at the token they serve) and i -> i - 1 over every position.
- Copy score (Wang et al. 2022, section 3.1): a name's residual stream at its position after block 0
  (hidden_states[1]: after the first MLP), through the head's own norm, its value projection and its
  slice of W^O (the OV circuit: what the head writes when it attends to that token alone), then the
  final norm and the unembedding. The score is the fraction of such residuals (IO, S1 and S2 of
  every prompt) whose output ranks their own name FIRST among the task's names; the negative copy
  score, the fraction whose output ranks it LAST (the OV circuit writes the name's opposite). Among
  40 names, chance is 1/40. (The paper asks for the top 5 of GPT-2's whole vocabulary.)
- Mean ablation: a head's weighted sum (its slice of the input to W^O) replaced at each position by
  its mean over ABC versions of the same prompt (the same sentence with other names: p_ABC kept to
  the prompt's positions), read by the engine as a Patch of heads (core/models/interventions.py).

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.

Letters: L layers, H heads, T tokens, D width, d_k one head's width, N names, R residuals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from core.measures.ioi import IOIPrompt, single_token_names
from core.models.interventions import Patch

__all__ = ["abc_samples", "attention_figures", "copy_scores", "head_means", "logit_diff", "mean_ablated"]

Progress = Callable[[int, int], None]


def attention_figures(engine, prompts: Sequence[IOIPrompt]) -> dict[str, np.ndarray]:
    """{figure: (L, H) mean over the prompts} of where each head looks on the clean prompts."""
    sums: dict[str, np.ndarray] = {}
    for prompt in prompts:
        a = engine.forward(list(prompt.item.clean)).attentions  # (L, H, T, T)
        p = prompt.positions
        rows = np.arange(1, a.shape[-1])
        figures = {
            "end_io": a[:, :, p["end"], p["io"]],
            "end_s": a[:, :, p["end"], p["s1"]] + a[:, :, p["end"], p["s2"]],
            "end_s2": a[:, :, p["end"], p["s2"]],
            "s2_s1": a[:, :, p["s2"], p["s1"]],
            "s2_s1_next": a[:, :, p["s2"], p["s1_next"]],
            "s1_next_s1": a[:, :, p["s1_next"], p["s1"]],
            "previous": a[:, :, rows, rows - 1].mean(axis=-1),  # i -> i - 1, every position but the first
        }
        for name, value in figures.items():
            sums[name] = sums.get(name, 0.0) + value.astype(np.float64)
    return {name: value / len(prompts) for name, value in sums.items()}


def _output_weights(engine, layer: int) -> np.ndarray:
    """W^O (H d_k, D) of a block: the Llama family's, or GPT-2's."""
    weights = engine.block_weights(layer) if hasattr(engine, "block_weights") else engine.layers[layer]
    return weights.w_o


def _name_residuals(engine, prompts: Sequence[IOIPrompt]) -> tuple[np.ndarray, list[int]]:
    """(the residual after block 0 at each name's position (R, D), the name's token id for each)."""
    rows, ids = [], []
    for prompt in prompts:
        hidden = engine.forward(list(prompt.item.clean)).hidden_states[1]  # (T, D) after block 0
        clean = prompt.item.clean
        for at in ("io", "s1", "s2"):
            rows.append(hidden[prompt.positions[at]])
            ids.append(int(clean[prompt.positions[at]]))
    return np.stack(rows), ids


def copy_scores(
    engine, prompts: Sequence[IOIPrompt], names: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(copy score, negative copy score), each (L, H): the fraction of the prompts' name residuals whose
    OV output ranks their own name first (resp. last) among the task's names."""
    names = list(single_token_names(engine) if names is None else names)
    name_ids = [engine.tokenizer.encode(n, add_special_tokens=False).ids[0] for n in names]  # (N,)
    residuals, own = _name_residuals(engine, prompts)  # (R, D)
    own_index = np.array([name_ids.index(i) if i in name_ids else -1 for i in own])  # (R,)
    copy = np.zeros((engine.n_layers, engine.n_heads))
    negative = np.zeros_like(copy)
    d_k = engine.head_size
    for layer in range(engine.n_layers):
        # one position alone attends to itself with weight 1: its weighted sum is its value (the OV input)
        steps = engine.layers_from(layer, residuals[:, None, :], stop=layer + 1, trace_layers=[layer]).steps
        context = steps[layer]["context"][:, :, 0, :]  # (R, H, d_k)
        w_o = _output_weights(engine, layer)  # (H d_k, D)
        for head in range(engine.n_heads):
            out = context[:, head] @ w_o[head * d_k : (head + 1) * d_k]  # (R, D): the head's OV output
            logits = engine.token_logits(engine.final_normed(out), name_ids)  # (R, N)
            copy[layer, head] = np.mean(logits.argmax(axis=-1) == own_index)
            negative[layer, head] = np.mean(logits.argmin(axis=-1) == own_index)
    return copy, negative


def abc_samples(
    engine, prompt: IOIPrompt, k: int, seed: int, names: Sequence[str] | None = None
) -> list[list[int]]:
    """k ABC versions of the prompt (its ABC corruption first): the three name slots IO, S1 and S2 hold
    three other names, all different, drawn with numpy's default_rng(seed)."""
    names = list(single_token_names(engine) if names is None else names)
    ids = [engine.tokenizer.encode(n, add_special_tokens=False).ids[0] for n in names]
    rng = np.random.default_rng(seed)
    samples = [list(prompt.item.corrupt)]
    slots = [prompt.positions[at] for at in ("io", "s1", "s2")]
    while len(samples) < k:
        drawn = rng.choice(len(ids), 3, replace=False)
        sample = list(prompt.item.clean)
        for slot, index in zip(slots, drawn, strict=True):
            sample[slot] = ids[index]
        samples.append(sample)
    return samples


def head_means(engine, samples: Sequence[Sequence[int]]) -> np.ndarray:
    """(L, H, T, d_k): every head's weighted sum at each position, averaged over runs of equal length."""
    every = range(engine.n_layers)
    x = np.stack([engine.embed(np.asarray(ids)) for ids in samples])  # (B, T, D): one batch
    steps = engine.layers_from(0, x, trace_layers=every).steps
    return np.stack([steps[i]["context"].mean(axis=0, dtype=np.float64) for i in every])  # (L, H, T, d_k)


def logit_diff(engine, ids: Sequence[int], answer: int, rival: int, patch: Patch | None = None) -> float:
    """logit(answer) - logit(rival) after the last position (log p difference: softmax cancels)."""
    hidden = engine.forward(list(ids), patch=patch).hidden_states  # (L + 1, T, D)
    logits = np.asarray(engine.token_logits(hidden[-1, -1], [answer, rival]), np.float64)
    return float(logits[0] - logits[1])


def mean_ablated(
    engine,
    prompts: Sequence[IOIPrompt],
    means: Sequence[np.ndarray],
    keep: Iterable[tuple[int, int]],
    progress: Progress | None = None,
) -> float:
    """The mean logit difference over the prompts with every head NOT in `keep` mean-ablated (its
    weighted sum replaced by means[i][layer, head], the prompt's (L, H, T, d_k) means)."""
    keep = {tuple(int(v) for v in pair) for pair in keep}
    ablate = [x for x in np.ndindex(engine.n_layers, engine.n_heads) if x not in keep]
    total = 0.0
    for i, (prompt, mean) in enumerate(zip(prompts, means, strict=True)):
        patch = Patch(heads={x: mean[x] for x in ablate}) if ablate else None
        total += logit_diff(engine, prompt.item.clean, prompt.item.answer, prompt.item.rival, patch)
        if progress is not None:
            progress(i + 1, len(prompts))
    return total / len(prompts)
