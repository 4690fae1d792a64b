"""The circuit search (core/measures/circuit.py, circuit_classes.py, circuit_heads.py): the class rules
on grids built by hand, the head figures against computations written here (attention read from the
run, the OV circuit from the weights), mean ablation, and the whole search on tiny random decoders
whose tokenizer knows the task's names (tests/tiny_ioi.py): its JSON's shape, its progress, its
direct grid against path_patch itself, and faithfulness 1 when every head is kept."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from core.lesson.layers import rms_norm
from core.measures import circuit_classes as rules
from core.measures.circuit import CLASSES, find_circuit
from core.measures.circuit_heads import (
    abc_samples,
    attention_figures,
    copy_scores,
    head_means,
    logit_diff,
    mean_ablated,
)
from core.measures.ioi import ioi_prompts, single_token_names
from core.measures.paths import path_patch
from core.models.architectures import load_engine
from tests.tiny_ioi import make_ioi_gpt2, make_ioi_llama

pytest.importorskip("torch")
EVERYTHING = rules.Thresholds(*[-math.inf] * 8)  # every rule passes: every head is a name mover


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    path = make_ioi_llama(tmp_path_factory.mktemp("circuit-llama"), layers=3, heads=4, kv_heads=2)
    return load_engine(str(path))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return load_engine(str(make_ioi_gpt2(tmp_path_factory.mktemp("circuit-gpt2"), n_layer=3, n_head=4)))


# ---- the rules, on grids built by hand -------------------------------------------------------------


def grid(values: dict, shape=(3, 4), fill=0.0) -> np.ndarray:
    out = np.full(shape, fill)
    for head, value in values.items():
        out[head] = value
    return out


def test_name_movers_need_the_direct_effect_the_attention_and_the_copy():
    t = rules.Thresholds()
    direct = grid(
        {(2, 0): 0.3, (2, 1): 0.2, (2, 2): 0.1, (1, 3): -0.4, (1, 2): -0.25, (0, 0): 0.05, (0, 1): np.nan}
    )
    end_io = grid({(2, 0): 0.5, (2, 1): 0.05, (2, 2): 0.4, (1, 3): 0.6, (1, 2): 0.3, (0, 0): 0.9})
    end_s = grid({(2, 2): 0.5})  # (2, 2) looks at S more than at IO
    copy = grid({(2, 0): 0.9, (2, 1): 0.9, (2, 2): 0.9, (0, 0): 0.5})
    negative = grid({(1, 3): 0.8, (1, 2): 0.1})
    movers, negatives, failed = rules.name_movers(direct, end_io, end_s, copy, negative, t)
    assert movers == [(2, 0), (0, 0)]  # largest first; 0.05 is at the threshold, which passes
    assert negatives == [(1, 3)]
    assert failed == [(1, 2), (2, 1), (2, 2)]  # by |direct|: copies the wrong way, looks away, looks at S
    why = {x: rules.mover_failures(x, direct, end_io, end_s, copy, negative, t) for x in failed}
    assert why[(1, 2)] == ["negative copy score 0.10 < 0.5"]
    assert why[(2, 1)] == ["END -> IO 0.05 < 0.1"]
    assert why[(2, 2)] == ["END -> S 0.50 >= END -> IO 0.40"]
    assert all(
        rules.mover_failures(x, direct, end_io, end_s, copy, negative, t) == [] for x in movers + negatives
    )


def test_the_later_classes_take_no_head_twice_and_split_by_attention():
    t = rules.Thresholds()
    q = grid({(0, 0): 0.2, (0, 1): 0.04, (1, 0): 0.1, (2, 0): np.nan})
    assert rules.s_inhibition(q, taken=[(1, 0)], t=t) == [(0, 0)]
    kv = grid({(0, 0): 0.3, (0, 1): 0.2, (0, 2): 0.1, (0, 3): 0.06})
    after = grid({(0, 0): 0.5, (0, 1): 0.2, (0, 2): 0.05, (0, 3): 0.3})
    same = grid({(0, 0): 0.1, (0, 1): 0.6, (0, 2): 0.05, (0, 3): 0.3})
    induction, duplicate, unassigned = rules.induction_duplicate(kv, after, same, [], t)
    assert (induction, duplicate, unassigned) == ([(0, 0), (0, 3)], [(0, 1)], [(0, 2)])
    k = grid({(0, 0): 0.2, (0, 1): 0.2, (0, 2): 0.01})
    back = grid({(0, 0): 0.1, (0, 1): 0.9, (0, 2): 0.9})
    assert rules.previous_token(k, back, taken=[], t=t) == [(0, 1)]


# ---- the head figures --------------------------------------------------------------------------------


def test_attention_figures_are_the_runs_weights_at_the_prompts_positions(llama):
    prompts = ioi_prompts(llama, 3, seed=1)
    figures = attention_figures(llama, prompts)
    runs = [llama.run(p.text).attentions for p in prompts]  # (L, H, T, T)
    for name, (row, col) in {
        "end_io": ("end", "io"),
        "s2_s1": ("s2", "s1"),
        "s2_s1_next": ("s2", "s1_next"),
    }.items():
        expected = np.mean(
            [a[:, :, p.positions[row], p.positions[col]] for a, p in zip(runs, prompts, strict=True)], axis=0
        )
        np.testing.assert_allclose(figures[name], expected, atol=1e-6)
    t = len(prompts[0].item.clean)
    first = np.mean([runs[0][:, :, i, i - 1] for i in range(1, t)], axis=0)
    one = attention_figures(llama, prompts[:1])["previous"]
    np.testing.assert_allclose(one, first, atol=1e-6)


def test_copy_scores_follow_the_ov_circuit_read_from_the_weights(llama):
    """The Llama's OV circuit by hand: block 0's output at a name, the head's RMSNorm, its key/value
    group's W^V (GQA), its rows of W^O, the final RMSNorm, the names' rows of the unembedding."""
    prompts = ioi_prompts(llama, 4, seed=2)
    copy, negative = copy_scores(llama, prompts)
    names = [llama.tokenizer.encode(n, add_special_tokens=False).ids[0] for n in single_token_names(llama)]
    d, group = llama.head_size, llama.n_heads // llama.kv_heads
    for layer, head in [(0, 0), (1, 3), (2, 1)]:
        w = llama.block_weights(layer)
        hits = misses = total = 0
        for p in prompts:
            hidden = llama.forward(list(p.item.clean)).hidden_states[1]
            for at in ("io", "s1", "s2"):
                x = rms_norm(hidden[p.positions[at]], w.norm1, llama.config.rms_norm_eps)
                value = x @ w.w_v[:, (head // group) * d : (head // group + 1) * d]
                out = value @ w.w_o[head * d : (head + 1) * d]
                logits = llama.final_normed(out) @ llama.unembedding[names].T
                own = names.index(p.item.clean[p.positions[at]])
                hits += int(np.argmax(logits) == own)
                misses += int(np.argmin(logits) == own)
                total += 1
        assert copy[layer, head] == pytest.approx(hits / total)
        assert negative[layer, head] == pytest.approx(misses / total)
    assert copy.shape == negative.shape == (3, 4) and ((copy >= 0) & (copy <= 1)).all()


def test_abc_samples_change_only_the_three_names(llama):
    prompt = ioi_prompts(llama, 1, seed=0)[0]
    samples = abc_samples(llama, prompt, 5, seed=0)
    assert len(samples) == 5 and samples[0] == list(prompt.item.corrupt)
    slots = [prompt.positions[k] for k in ("io", "s1", "s2")]
    for sample in samples:
        assert len({sample[i] for i in slots}) == 3
        assert all(sample[i] == prompt.item.clean[i] for i in range(len(sample)) if i not in slots)
    assert abc_samples(llama, prompt, 5, seed=0) == samples


def test_mean_ablation_with_the_runs_own_means_changes_nothing(llama):
    prompts = ioi_prompts(llama, 2, seed=0)
    plain = np.mean([logit_diff(llama, p.item.clean, p.item.answer, p.item.rival) for p in prompts])
    own = [head_means(llama, [list(p.item.clean)]) for p in prompts]  # each run's own weighted sums
    assert mean_ablated(llama, prompts, own, keep=[]) == pytest.approx(plain, abs=1e-5)
    abc = [head_means(llama, abc_samples(llama, p, 3, seed=0)) for p in prompts]
    every = list(np.ndindex(3, 4))
    assert mean_ablated(llama, prompts, abc, keep=every) == pytest.approx(plain, abs=1e-6)
    assert mean_ablated(llama, prompts, abc, keep=[]) != pytest.approx(plain, abs=1e-3)


# ---- the whole search ----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["llama", "gpt2"])
def test_the_search_writes_the_contract_with_its_evidence(request, which):
    engine = request.getfixturevalue(which)
    seen, said = [], []
    found = find_circuit(
        engine, prompts=3, seed=0, progress=lambda d, t: seen.append((d, t)), say=said.append
    )
    json.dumps(found)  # JSON as it is: no NaN objects, no numpy types
    assert set(found) >= {"model", "task", "prompts", "logit_diff_clean", "logit_diff_corrupt", "direct"}
    assert found["task"] == "ioi" and len(found["prompts"]) == 3
    assert all({"text", "io", "s", "corrupt"} <= set(p) for p in found["prompts"])
    assert tuple(found["classes"]) == CLASSES
    assert np.asarray(found["direct"], float).shape == (3, 4)
    # progress: one bar, never back, ending full; each step named
    assert [t for _, t in seen] == [seen[0][1]] * len(seen) and seen[-1][0] == seen[-1][1]
    assert all(b[0] >= a[0] for a, b in itertools.pairwise(seen))
    assert said[0].startswith("step 1/6") and said[-1].startswith("step 6/6")
    # the direct grid is path_patch's to the logits on the same prompts
    items = [p.item for p in ioi_prompts(engine, 3, seed=0)]
    direct = path_patch(engine, items)
    np.testing.assert_allclose(np.asarray(found["direct"], float), direct.restored, atol=1e-5)
    assert found["logit_diff_clean"] == pytest.approx(direct.metric_clean, abs=1e-5)
    evidence = found["evidence"]
    assert evidence["thresholds"] == rules.Thresholds().as_dict()
    assert evidence["faithfulness"]["model"] == pytest.approx(direct.metric_clean, abs=1e-4)
    in_classes = {tuple(x) for name in CLASSES for x in found["classes"][name]}
    for row in evidence["left_out"]["direct_only"]:  # singled out by the direct effect, with why not
        assert abs(row["direct"]) >= 0.05 and row["failed"] and tuple(row["head"]) not in in_classes
    ratio = evidence["faithfulness"]["circuit"] / evidence["faithfulness"]["model"]
    assert found["faithfulness"] == pytest.approx(ratio, rel=1e-4)


def test_every_step_runs_when_the_rules_let_every_head_through(llama):
    found = find_circuit(llama, prompts=2, seed=0, thresholds=EVERYTHING)
    classes, evidence = found["classes"], found["evidence"]
    heads = [tuple(x) for name in CLASSES for x in classes[name]]
    assert len(heads) == len(set(heads))  # each head in one class at most
    assert classes["name_mover"] and classes["s_inhibition"]
    assert evidence["receivers"]["q"] == classes["name_mover"]
    assert evidence["receivers"]["kv"] == classes["s_inhibition"]
    assert evidence["paths"]["q"]["via"] == "q" and evidence["paths"]["q"]["to"] == classes["name_mover"]
    top = max(layer for layer, _ in classes["name_mover"])
    q = np.asarray(evidence["paths"]["q"]["restored"], float)
    assert np.isfinite(q[:top]).all() and np.isnan(q[top:]).all()  # senders before the receivers only
    items = [p.item for p in ioi_prompts(llama, 2, seed=0)]
    for via in ("k", "v"):  # made together (path_patch_reads): each as path_patch makes it alone
        alone = path_patch(llama, items, to=classes["s_inhibition"], via=via).restored
        grid = np.asarray(evidence["paths"][via]["restored"], float)
        np.testing.assert_allclose(grid, alone, atol=1e-5)
    rows = evidence["heads"]["name_mover"]
    assert [r["head"] for r in rows] == classes["name_mover"]
    assert all(r["figure"] == r["direct"] == found["direct"][r["head"][0]][r["head"][1]] for r in rows)


def test_faithfulness_is_one_when_every_head_is_kept(llama):
    from core.measures.circuit import _Bar, _faithfulness

    prompts = ioi_prompts(llama, 2, seed=0)
    every = {"name_mover": list(np.ndindex(3, 4))}
    found = _faithfulness(llama, prompts, every, [], 0, _Bar(12, None, None))
    assert found["faithfulness"] == pytest.approx(1.0, abs=1e-9) and found["heads_kept"] == 12
    none = _faithfulness(llama, prompts, {"name_mover": []}, [(2, 1)], 0, _Bar(12, None, None))
    assert none["circuit"] == none["nothing_kept"] and none["model"] == found["model"]
    alone = mean_ablated(
        llama,
        prompts,
        [head_means(llama, abc_samples(llama, p, 8, i)) for i, p in enumerate(prompts)],
        [(2, 1)],
    )
    assert none["with_direct_only"] == pytest.approx(alone, abs=1e-9)


def test_a_strict_rule_leaves_a_class_empty_and_skips_the_steps_behind_it(llama):
    strict = rules.Thresholds(direct=math.inf)
    found = find_circuit(llama, prompts=2, seed=0, thresholds=strict)
    assert all(found["classes"][name] == [] for name in CLASSES)
    skipped = found["evidence"]["skipped"]
    assert set(skipped) == {"q", "kv", "previous_k"} and "name movers" in skipped["q"]
    assert all(v is None for row in found["evidence"]["paths"]["q"]["restored"] for v in row)
    f = found["evidence"]["faithfulness"]
    assert found["faithfulness"] == pytest.approx(f["nothing_kept"] / f["model"], rel=1e-4)
