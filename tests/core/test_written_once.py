"""The lesson's steps that work in place (softmax's out, GELU, linear's bias) and the NumPy BERT's
probs written straight into its attentions: the same numbers, bit for bit, as the plain forms, and
nothing a caller passed in is changed."""

from __future__ import annotations

import numpy as np
import pytest

from core.cost.variants import Variant
from core.lesson.attention import attention_steps, softmax
from core.lesson.layers import _A, _P, gelu, linear
from core.models.bert import BertNumpy, encoder_layer
from tests.tiny_bert import make_tiny_bert

RNG = np.random.default_rng(49)
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 40.0, -40.0]


def branchy_gelu(x: np.ndarray) -> np.ndarray:
    """GELU as first written: x Phi(-|x|) below zero, x - x Phi(-|x|) above, chosen by np.where."""
    t = 1 / (1 + _P * np.abs(x))
    lower = _A[4] * t
    for a in _A[3::-1]:
        lower += a
        lower *= t
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        lower *= np.exp(-0.5 * x * x)
        lower *= x
        return np.where(x < 0, lower, x - lower)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_is_the_branchy_form_bit_for_bit_and_leaves_its_input(dtype):
    x = (RNG.standard_normal((37, 53)) * 4).astype(dtype)
    x.flat[: len(SPECIALS)] = SPECIALS
    before = x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        got = gelu(x)
    np.testing.assert_array_equal(got, branchy_gelu(x))
    np.testing.assert_array_equal(x, before)
    assert got.dtype == dtype and got.shape == x.shape


def test_gelu_of_a_number_and_of_integers():
    assert gelu(2.0).shape == () and gelu(np.float32(-1.5)).dtype == np.float32
    np.testing.assert_array_equal(gelu(np.array([1, -2, 3])), gelu(np.array([1.0, -2.0, 3.0])))
    assert float(gelu(0.0)) == 0.0


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_into_out_is_the_plain_softmax(axis):
    x = (RNG.standard_normal((4, 9, 9)) * 5).astype(np.float32)
    before, out = x.copy(), np.full_like(x, 7.0)
    got = softmax(x, axis=axis, out=out)
    assert got is out
    np.testing.assert_array_equal(out, softmax(x, axis=axis))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(softmax([1, 2, 3]), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())


def test_attention_steps_write_probs_into_the_given_array():
    q, k, v = (RNG.standard_normal((3, 6, 4)).astype(np.float32) for _ in range(3))
    out = np.zeros((3, 6, 6), np.float32)
    steps = attention_steps(q, k, v, probs_out=out)
    assert steps["probs"] is out
    for name, value in attention_steps(q, k, v).items():
        np.testing.assert_array_equal(steps[name], value, err_msg=name)


def test_linear_adds_its_bias_without_touching_the_inputs():
    x, w, b = RNG.standard_normal((2, 5, 4)), RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    copies = [a.copy() for a in (x, w, b)]
    np.testing.assert_array_equal(linear(x, w, b), x @ w + b)
    for array, copy in zip((x, w, b), copies, strict=True):
        np.testing.assert_array_equal(array, copy)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return BertNumpy.from_pretrained(make_tiny_bert(tmp_path_factory.mktemp("tiny-written-once")))


@pytest.mark.parametrize("variant", [None, Variant("window", w=1)])
def test_a_layer_writes_its_probs_where_it_is_told(tiny, variant):
    x = tiny.embed(np.arange(5, 12), np.zeros(7, int))
    out = np.zeros((tiny.n_heads, 7, 7), np.float32)
    plain = encoder_layer(x, tiny.layers[0], tiny.config, variant=variant)
    written = encoder_layer(x, tiny.layers[0], tiny.config, variant=variant, probs_out=out)
    assert written["probs"] is out
    for name, value in plain.items():
        np.testing.assert_array_equal(written[name], value, err_msg=name)


def test_the_forward_pass_attentions_are_each_layers_probs(tiny):
    ids = np.arange(3, 12)
    hidden, attentions, steps = tiny.forward(ids, trace_layers=range(tiny.n_layers))
    assert attentions.shape == (tiny.n_layers, tiny.n_heads, 9, 9) and attentions.dtype == np.float32
    for layer, layer_steps in steps.items():
        np.testing.assert_array_equal(layer_steps["probs"], attentions[layer])
    later = tiny.layers_from(1, hidden[1])
    np.testing.assert_array_equal(later[1], attentions[1:])
    np.testing.assert_array_equal(later[0], hidden[1:])
