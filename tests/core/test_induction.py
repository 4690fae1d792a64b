"""Induction heads (core/measures/induction.py): the prefix-matching score against a loop written
here, on attention maps made by hand and on a tiny GPT-2's; the copy losses against torch's
cross-entropy on transformers' logits; the seed; a hand-made induction pattern scoring 1;
ablation through the engine's `ablate`; and which heads count as induction heads (INDUCTION_MIN)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import GPT2LMHeadModel

from core.measures.induction import (
    INDUCTION_MIN,
    copy_losses,
    induction,
    induction_heads,
    prefix_matching_scores,
    repeated_random_tokens,
)
from core.models.gpt2 import GPT2Numpy
from tests.tiny_gpt2 import make_tiny_gpt2


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = make_tiny_gpt2(
        tmp_path_factory.mktemp("induction"), n_layer=2, n_head=4, n_embd=32, n_positions=64
    )
    return GPT2Numpy.from_pretrained(path), GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager")


def loop_scores(attentions: np.ndarray, n: int) -> np.ndarray:
    layers, heads = attentions.shape[:2]
    scores = np.zeros((layers, heads))
    for layer in range(layers):
        for head in range(heads):
            total = 0.0
            for i in range(n, 2 * n):  # the second copy
                total += attentions[layer, head, i, i - n + 1]
            scores[layer, head] = total / n
    return scores


def test_scores_equal_a_loop_on_random_maps():
    rng = np.random.default_rng(0)
    attentions = rng.random((3, 5, 14, 14))
    np.testing.assert_allclose(prefix_matching_scores(attentions, 7), loop_scores(attentions, 7))


def test_a_perfect_induction_head_scores_one_and_a_previous_token_head_zero():
    n = 6
    induction_head = np.zeros((2 * n, 2 * n))
    previous_token = np.zeros((2 * n, 2 * n))
    for i in range(2 * n):
        induction_head[i, i - n + 1 if i >= n else 0] = 1.0
        previous_token[i, max(i - 1, 0)] = 1.0
    scores = prefix_matching_scores(np.stack([induction_head, previous_token])[None], n)
    np.testing.assert_array_equal(scores, [[1.0, 0.0]])


def test_tokens_repeat_and_follow_the_seed():
    ids = repeated_random_tokens(100, 20, seed=4, avoid=[0, 1])
    assert len(ids) == 40 and (ids[:20] == ids[20:]).all() and not np.isin(ids, [0, 1]).any()
    assert (ids == repeated_random_tokens(100, 20, seed=4, avoid=[0, 1])).all()
    assert not (ids == repeated_random_tokens(100, 20, seed=5, avoid=[0, 1])).all()


def test_on_a_tiny_gpt2_scores_and_losses_match_transformers(tiny):
    engine, model = tiny
    found = induction(engine, length=20, seed=1)
    with torch.no_grad():
        out = model(torch.from_numpy(found.token_ids)[None], output_attentions=True)
    attentions = torch.stack(out.attentions)[:, 0].numpy()
    np.testing.assert_allclose(found.scores, loop_scores(attentions, 20), atol=1e-6)
    losses = torch.nn.functional.cross_entropy(
        out.logits[0, :-1].double(), torch.tensor(found.token_ids[1:]), reduction="none"
    )
    assert found.loss_first == pytest.approx(losses[:19].mean().item(), abs=1e-5)
    assert found.loss_repeat == pytest.approx(losses[20:39].mean().item(), abs=1e-5)


def test_ablating_heads_changes_the_repeat_loss_and_is_recorded(tiny):
    engine = tiny[0]
    whole = induction(engine, length=20, seed=1)
    top = np.dstack(np.unravel_index(np.argsort(-whole.scores, axis=None)[:2], whole.scores.shape))[0]
    cut = induction(engine, length=20, seed=1, ablate=[tuple(map(int, pair)) for pair in top])
    assert cut.ablated == tuple(sorted(tuple(map(int, pair)) for pair in top))
    assert cut.loss_repeat != whole.loss_repeat


def test_copy_losses_by_hand():
    # a model sure of the right next token everywhere has loss 0; a uniform one has log V
    ids = np.array([0, 1, 2, 0, 1, 2])
    sure = np.full((6, 3), -1e9)
    sure[np.arange(5), ids[1:]] = 0.0
    assert copy_losses(sure, ids, 3) == pytest.approx((0.0, 0.0))
    assert copy_losses(np.zeros((6, 3)), ids, 3) == pytest.approx((np.log(3), np.log(3)))


def test_copy_losses_equal_torchs_cross_entropy_over_many_rows():
    # 2 x 37 positions: more rows than copy_losses takes at a time, so the pieces are joined right
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 500, 74)
    logits = rng.normal(0.0, 4.0, (74, 500))
    kept = logits.copy()
    losses = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits[:-1]), torch.from_numpy(ids[1:]), reduction="none"
    ).numpy()
    expected = (losses[:36].mean(), losses[37:73].mean())
    assert copy_losses(logits, ids, 37) == pytest.approx(expected, rel=1e-12)
    assert np.array_equal(logits, kept)  # the caller's logits are left as they were


def test_too_long_for_the_context_is_refused(tiny):
    with pytest.raises(ValueError, match="context"):
        induction(tiny[0], length=40)


def test_induction_heads_are_the_heads_at_or_above_the_threshold_highest_first():
    scores = np.array([[0.069, 0.05, 0.41, 0.0], [0.54, 0.62, INDUCTION_MIN, 0.39]])
    expected = ((1, 1), (1, 0), (0, 2), (1, 2))  # 0.39 and 0.069 are not induction heads
    assert induction_heads(scores) == expected  # ties at 0.4: lower layer first (none here)
    assert induction_heads(scores, most=2) == expected[:2]
    assert induction_heads(scores, layers=range(1, 2)) == ((1, 1), (1, 0), (1, 2))
    assert induction_heads(scores, most=1, layers=range(0, 1)) == ((0, 2),)
    assert induction_heads(np.full((2, 3), 0.1)) == ()
