"""core.lesson.layers against PyTorch in float64, and hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.lesson.layers import feed_forward, gelu, gelu_tanh, layer_norm, linear, residual

TOL = 1e-10


def t64(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eps", [1e-5, 1e-12])
def test_layer_norm_matches_torch(seed, eps):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 40))
    x = rng.standard_normal((3, 5, d)) * rng.uniform(0.1, 10)
    ln = torch.nn.LayerNorm(d, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        ln.weight.copy_(t64(rng.standard_normal(d)))
        ln.bias.copy_(t64(rng.standard_normal(d)))
    expected = ln(t64(x)).detach().numpy()
    ours = layer_norm(x, ln.weight.detach().numpy(), ln.bias.detach().numpy(), eps=eps)
    np.testing.assert_allclose(ours, expected, atol=TOL)


def test_layer_norm_hand_worked_and_not_the_tutorial_form():
    x = np.array([1.0, 2.0, 3.0, 4.0])  # mean 2.5, biased variance 1.25
    expected = (x - 2.5) / math.sqrt(1.25 + 1e-5)
    np.testing.assert_allclose(layer_norm(x), expected, atol=1e-15)
    tutorial = (x - 2.5) / (math.sqrt(1.25) + 1e-5)  # (x - μ) / (σ + ε): a different function
    assert not np.allclose(layer_norm(x), tutorial, atol=1e-8, rtol=0)


# gelu's erf approximation (Abramowitz & Stegun 7.1.26) keeps GELU(x) within 7.5e-8 |x| of exact
GELU_BOUND = 7.5e-8


def exact_gelu(x: np.ndarray) -> np.ndarray:
    return np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in np.asarray(x, np.float64)])


@pytest.mark.parametrize("seed", range(3))
def test_gelu_matches_torch(seed):
    x = np.random.default_rng(seed).standard_normal(500) * 4
    np.testing.assert_array_less(np.abs(gelu(x) - F.gelu(t64(x)).numpy()), GELU_BOUND * np.abs(x) + 1e-15)
    np.testing.assert_allclose(gelu_tanh(x), F.gelu(t64(x), approximate="tanh").numpy(), atol=TOL)


def test_gelu_is_within_its_bound_of_math_erf_everywhere():
    x = np.linspace(-12, 12, 240_001)
    np.testing.assert_array_less(np.abs(gelu(x) - exact_gelu(x)), GELU_BOUND * np.abs(x) + 1e-15)


def test_gelu_in_float32_is_closer_to_exact_than_torchs_and_unbiased():
    """The engine's case: float32 in, float32 out, no bias to pile up in the feed-forward's sums."""
    x = np.linspace(-12, 12, 240_001).astype(np.float32)
    exact = exact_gelu(x)
    ours = gelu(x)
    assert ours.dtype == np.float32
    theirs = F.gelu(torch.from_numpy(x)).numpy()
    # ours within 4e-7 everywhere, and no worse than torch's (whose error depends on its version and
    # the CPU's vector path: 3.75e-7 with torch 2.13 here, above 4e-7 with earlier releases)
    assert np.abs(ours - exact).max() <= min(4e-7, np.abs(theirs - exact).max())
    assert abs(float((ours - exact).mean())) < 5e-8
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # the tails' limits, no warning
        tails = np.array([-1e30, -100.0, 100.0, 1e30], dtype=np.float32)
        np.testing.assert_array_equal(gelu(tails), [0, 0, 100, tails[-1]])


def test_gelu_hand_worked():
    # GELU(1) = Φ(1) = 0.8413447460685429; GELU(0) = 0; GELU(-x) = GELU(x) - x.
    assert gelu(np.array([0.0]))[0] == 0
    np.testing.assert_allclose(gelu([0.0, 1.0]), [0.0, 0.8413447460685429], atol=GELU_BOUND)  # a list too
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(gelu(-x), gelu(x) - x, atol=1e-12)


def test_feed_forward_matches_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6))
    l1, l2 = torch.nn.Linear(6, 11, dtype=torch.float64), torch.nn.Linear(11, 6, dtype=torch.float64)
    expected = l2(F.gelu(l1(t64(x)))).detach().numpy()
    # torch Linear.weight is (d_out, d_in): transpose once to the x @ W convention
    ours = feed_forward(
        x,
        l1.weight.detach().numpy().T,
        l1.bias.detach().numpy(),
        l2.weight.detach().numpy().T,
        l2.bias.detach().numpy(),
    )
    np.testing.assert_allclose(ours, expected, atol=1e-6)  # GELU within GELU_BOUND; ReLU exact, below
    relu = feed_forward(x, l1.weight.detach().numpy().T, None, l2.weight.detach().numpy().T, None, "relu")
    with torch.no_grad():
        expected_relu = (F.relu(t64(x) @ l1.weight.T) @ l2.weight.T).numpy()
    np.testing.assert_allclose(relu, expected_relu, atol=TOL)


def test_linear_and_residual():
    x = np.array([[1.0, 2.0]])
    w = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]])
    np.testing.assert_array_equal(linear(x, w, np.array([1.0, 1.0, 1.0])), [[2.0, 3.0, 1.0]])
    np.testing.assert_array_equal(residual(x, x), 2 * x)


def test_linear_of_a_stack_is_each_slice_multiplied():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(3, 4, 5)), rng.normal(size=(5, 6)), rng.normal(size=6)
    stacked = linear(x, w, b)
    assert stacked.shape == (3, 4, 6)
    np.testing.assert_allclose(stacked, np.stack([s @ w + b for s in x]), atol=TOL)
    np.testing.assert_allclose(linear(x[0, 0], w), x[0, 0] @ w, atol=TOL)  # one row (d_in,)
