"""Sampling (core/models/sampling.py) against transformers' own warpers on the same logits:
temperature, then top-k, then top-p, renormalised, in float64 on both sides, on random logits and
on ties, with top-k past the vocabulary, top-p 1.0 and a tiny top-p; then a seeded generation on a
GPT-2 built here: the same seed gives the same text, every token drawn is one the cut kept, and
top-k 1 is greedy."""

from __future__ import annotations

import numpy as np
import pytest

from core.models.gpt2 import GPT2Numpy
from core.models.sampling import sampling_problem, warp, with_top_k, with_top_p
from tests.tiny_gpt2 import make_tiny_gpt2

torch = pytest.importorskip("torch")
warpers = pytest.importorskip("transformers.generation.logits_process")

V = 50
SETTINGS = [  # (temperature, top_k, top_p); 0 and 1.0 are off
    (1.0, 0, 1.0),
    (0.7, 5, 1.0),
    (1.3, 0, 0.9),
    (0.5, 10, 0.8),
    (2.0, 1, 0.5),
    (1.0, V, 0.95),  # top-k = the vocabulary
    (1.0, 10 * V, 1.0),  # past it
    (1.0, 0, 1e-9),  # tiny: only the likeliest
    (0.9, 3, 1e-9),
    (1.0, 0, 0.999999),
]


def transformers_after(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """transformers' chain, as generate(do_sample=True) builds it, then the softmax it draws from.
    The top-p warper is applied even at 1.0 here (generate leaves it out): it must cut nothing."""
    scores = torch.tensor(logits[None, :], dtype=torch.float64)
    chain = [warpers.TemperatureLogitsWarper(float(temperature))]
    if top_k:
        chain.append(warpers.TopKLogitsWarper(top_k=top_k))
    chain.append(warpers.TopPLogitsWarper(top_p=top_p))
    for warper in chain:
        scores = warper(None, scores)
    return torch.softmax(scores, dim=-1)[0].numpy()


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), SETTINGS)
def test_the_cut_and_the_renormalised_distribution_are_transformers(temperature, top_k, top_p):
    rng = np.random.default_rng(0)
    for _ in range(20):
        logits = rng.normal(0, 3, V)
        theirs = transformers_after(logits, temperature, top_k, top_p)
        ours = warp(logits, temperature, top_k, top_p)
        np.testing.assert_array_equal(ours.after > 0, theirs > 0)
        np.testing.assert_allclose(ours.after, theirs, rtol=1e-12, atol=1e-15)
        kept = ours.order[: ours.n_kept]  # the kept tokens lead the ranking
        assert set(kept.tolist()) == set(np.flatnonzero(theirs > 0).tolist())
        assert ours.after.sum() == pytest.approx(1.0, abs=1e-12)
        assert ours.kept_mass == pytest.approx(ours.before[theirs > 0].sum(), abs=1e-12)


def test_the_smallest_set_reaching_p_and_at_least_one_token():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert warp(logits, 1.0, top_p=0.5).n_kept == 1  # 0.5 reaches 0.5
    assert warp(logits, 1.0, top_p=0.51).n_kept == 2
    assert warp(logits, 1.0, top_p=0.79).n_kept == 2  # (at exactly 0.8, rounding decides, as there)
    assert warp(logits, 1.0, top_p=0.81).n_kept == 3
    assert warp(logits, 1.0, top_p=1e-12).n_kept == 1
    for p in (0.5, 0.51, 0.79, 0.8, 0.81, 0.96):
        theirs = transformers_after(logits, 1.0, 0, p)
        assert warp(logits, 1.0, top_p=p).n_kept == int((theirs > 0).sum())


def test_top_k_keeps_every_token_tied_with_the_kth():
    logits = np.array([3.0, 2.0, 2.0, 2.0, 1.0, 0.0])
    ours = warp(logits, 1.0, top_k=2)
    theirs = transformers_after(logits, 1.0, 2, 1.0)
    assert ours.n_kept == 4 and set(ours.order[:4].tolist()) == {0, 1, 2, 3}
    np.testing.assert_allclose(ours.after, theirs, atol=1e-15)
    np.testing.assert_array_equal(with_top_k(logits, 2) == -np.inf, [False] * 4 + [True] * 2)


def test_top_p_ties_at_the_boundary_keep_as_many_and_the_lower_ids():
    """torch.sort leaves the order of equal scores unspecified, so which of them transformers keeps
    may vary; how many, and with what probability, may not. Here: the lower ids."""
    rng = np.random.default_rng(1)
    for _ in range(30):
        logits = rng.integers(0, 4, V).astype(np.float64)  # many ties
        for p in (0.3, 0.6, 0.9):
            theirs = transformers_after(logits, 1.0, 0, p)
            ours = warp(logits, 1.0, top_p=p)
            assert ours.n_kept == int((theirs > 0).sum())
            np.testing.assert_allclose(np.sort(ours.after), np.sort(theirs), atol=1e-15)
            kept = ours.order[: ours.n_kept]
            at_boundary = kept[logits[kept] == logits[kept].min()]  # the kept ones of the last tie
            tied = np.flatnonzero(logits == logits[kept].min())
            assert sorted(at_boundary.tolist()) == tied[: len(at_boundary)].tolist()
            assert np.isfinite(with_top_p(logits, p)).sum() == ours.n_kept


def test_greedy_takes_the_likeliest_and_ignores_the_cut():
    logits = np.array([0.1, 2.5, 2.5, -1.0])
    for top_k, top_p in ((0, 1.0), (1, 0.1)):
        greedy = warp(logits, None, top_k, top_p)
        assert greedy.greedy and greedy.n_kept == 1
        assert greedy.draw(np.random.default_rng(0)) == 1  # the first of the tied likeliest
        np.testing.assert_array_equal(greedy.after, [0.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ((0.0, 0, 1.0), "temperature"),
        ((-1.0, 0, 1.0), "temperature"),
        ((1.0, -1, 1.0), "top-k"),
        ((1.0, 2.5, 1.0), "top-k"),
        ((1.0, 0, 0.0), "top-p"),
        ((1.0, 0, 1.01), "top-p"),
        ((1.0, 0, float("nan")), "top-p"),
    ],
)
def test_bad_settings_are_named(settings, words):
    assert sampling_problem(*settings).startswith(("the " + words, words))
    with pytest.raises(ValueError, match=words):
        warp(np.zeros(3), *settings)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    folder = make_tiny_gpt2(tmp_path_factory.mktemp("sampling_gpt2"), n_layer=2, n_head=2, n_embd=16)
    return GPT2Numpy.from_pretrained(folder)


def test_a_seed_gives_the_same_text_and_each_token_is_one_the_cut_kept(engine):
    prompt = "The bank approved the"
    first = engine.generate(prompt, 8, temperature=1.5, top_k=20, top_p=0.8, seed=3)
    again = engine.generate(prompt, 8, temperature=1.5, top_k=20, top_p=0.8, seed=3)
    assert first.generated == again.generated
    assert (first.top_k, first.top_p) == (20, 0.8)
    for step in first.steps:
        assert 1 <= step.n_kept <= 20 and len(step.kept) == step.n_kept
        assert step.rank < step.n_kept and step.kept[step.rank] == (step.token, step.prob)
        assert sum(p for _t, p in step.kept) == pytest.approx(1.0, abs=1e-9)
        assert [p for _t, p in step.kept] == sorted((p for _t, p in step.kept), reverse=True)
        assert 0 < step.kept_mass <= 1  # of the mass before the cut: top-p reads what top-k left
    greedy = engine.generate(prompt, 8)
    assert engine.generate(prompt, 8, temperature=1.5, top_k=1, seed=3).generated == greedy.generated
    assert all(step.kept == [(step.token, 1.0)] for step in greedy.steps)


def test_a_step_keeps_at_most_kept_limit_tokens_but_counts_them_all(engine):
    steps = engine.generate("The bank", 2, temperature=1.0, seed=0, kept_limit=7).steps
    vocab = engine.unembedding.shape[0]
    assert all(len(s.kept) == 7 and s.n_kept == vocab and s.kept_mass == pytest.approx(1.0) for s in steps)
