"""The source articles' worked examples: true values worked by hand, and which printed values are flagged.

Hand arithmetic (article 000, "The cat sat on the mat", d_k = 3):
    Q1·K1 = 0.1·0.2 + (−0.2)·0.1 + 0.3·(−0.1) = 0.02 − 0.02 − 0.03 = −0.03   (article: −0.01)
    Q1·K2 = 0.1·0.1 + (−0.2)·(−0.2) + 0.3·0.3 = 0.01 + 0.04 + 0.09 = 0.14     (article: 0.13)
    Q2·K1 = −0.06 + 0.01 − 0.02 = −0.07,  Q2·K2 = −0.03 − 0.02 + 0.06 = 0.01   (both right)
    two-way softmax: weight of key 1 = 1 / (1 + e^((s2 − s1)/√3))
    weighted sum from the article's own weights, row 1, column 1: 0.4798·(−0.1) + 0.5202·0.2 = 0.05606
    (article: 0.0546), so its weighted sums are slips even given its weights.
Article 002, "I love NLP": softmax([2, 4, 6]) = [e², e⁴, e⁶] / (e² + e⁴ + e⁶) = [0.0159, 0.1173, 0.8668]
(article: ≈ [0.1, 0.3, 0.6]); 0.0159·2 + 0.1173·4 + 0.8668·6 = 5.7019 (article: 5.0, which its own
weights do give: 0.2 + 1.2 + 3.6).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.lesson.layers import layer_norm
from core.lesson.worked_examples import CAT_MAT, EXAMPLES, I_LOVE_NLP, check_example, layer_norm_article_form

SQRT3 = math.sqrt(3.0)


def _flags(ex):
    """{(step, (row, col)): kind} of every flagged printed value."""
    return {(c.step, f.index): f.kind for c in check_example(ex) for f in c.flags}


def _check(ex, step):
    return next(c for c in check_example(ex) if c.step == step)


# ---- cat-mat: true values -------------------------------------------------------------------


def test_cat_mat_true_scores_by_hand():
    np.testing.assert_allclose(_check(CAT_MAT, "scores").true, [[-0.03, 0.14], [-0.07, 0.01]], atol=1e-15)


def test_cat_mat_true_scaled_scores():
    expected = np.array([[-0.03, 0.14], [-0.07, 0.01]]) / SQRT3
    np.testing.assert_allclose(_check(CAT_MAT, "scaled").true, expected, atol=1e-15)
    np.testing.assert_allclose(expected, [[-0.0173, 0.0808], [-0.0404, 0.0058]], atol=5e-5)


def test_cat_mat_true_softmax_by_hand():
    w1 = 1 / (1 + math.exp((0.14 + 0.03) / SQRT3))  # row 1, weight on "The cat"
    w2 = 1 / (1 + math.exp((0.01 + 0.07) / SQRT3))
    probs = _check(CAT_MAT, "probs").true
    np.testing.assert_allclose(probs, [[w1, 1 - w1], [w2, 1 - w2]], atol=1e-15)
    np.testing.assert_allclose(probs, [[0.4755, 0.5245], [0.4885, 0.5115]], atol=5e-5)


def test_cat_mat_true_weighted_sum():
    probs = _check(CAT_MAT, "probs").true
    v = np.array([[-0.1, 0.3, 0.2], [0.2, -0.1, 0.1]])
    context = _check(CAT_MAT, "context").true
    np.testing.assert_allclose(context, probs @ v, atol=1e-15)
    np.testing.assert_allclose(context, [[0.0574, 0.0902, 0.1475], [0.0535, 0.0954, 0.1488]], atol=5e-5)


def test_cat_mat_step_7_runs_on_its_inputs():
    tr = CAT_MAT.trace()
    x = np.array([[0.2, 0.5, -0.3, 0.1], [0.1, -0.2, 0.7, 0.3]])
    np.testing.assert_array_equal(tr["x"], x)
    assert tr["w_o"].shape == (3, 4)  # the article's stated shape (its numbers are ours)
    np.testing.assert_allclose(tr["output"], tr["context"][0] @ tr["w_o"])
    np.testing.assert_allclose(tr["residual"], x + tr["output"])
    np.testing.assert_allclose(tr["normed"], layer_norm(x + tr["output"]))


# ---- cat-mat: which printed values are flagged ----------------------------------------------


def test_cat_mat_flags_exactly_the_wrong_numbers():
    slip, carried = "slip", "propagated"
    assert _flags(CAT_MAT) == {
        # step 3: two dot products of row 1 are miscomputed
        ("scores", (0, 0)): slip,
        ("scores", (0, 1)): slip,
        # step 4: the article divides its own wrong scores correctly by √3
        ("scaled", (0, 0)): carried,
        ("scaled", (0, 1)): carried,
        # step 5: its softmax of those scaled scores is right, so row 1 is off only by carry-over
        ("probs", (0, 0)): carried,
        ("probs", (0, 1)): carried,
        # step 6: every weighted sum is wrong, even from the article's own weights
        **{("context", (r, c)): slip for r in range(2) for c in range(3)},
    }


def test_cat_mat_second_row_agrees_until_the_weighted_sum():
    for step in ("scores", "scaled", "probs"):
        check = _check(CAT_MAT, step)
        np.testing.assert_allclose(check.printed[1], check.true[1], atol=check.tolerance)


def test_cat_mat_article_chain_is_recomputed_from_its_printed_numbers():
    scaled = _check(CAT_MAT, "scaled").from_printed
    np.testing.assert_allclose(scaled, np.array([[-0.01, 0.13], [-0.07, 0.01]]) / SQRT3)
    context = _check(CAT_MAT, "context").from_printed
    np.testing.assert_allclose(context[0, 0], 0.4798 * -0.1 + 0.5202 * 0.2)  # 0.05606, article 0.0546


def test_cat_mat_layer_norm_formula_is_flagged_in_a_remark():
    assert any("(σ + ε)" in r and "√(σ² + ε)" in r for r in CAT_MAT.remarks)


def test_article_layer_norm_form_differs_from_torch_where_the_row_is_nearly_constant():
    spread = np.array([[0.2, 0.5, -0.3, 0.1]])
    np.testing.assert_allclose(layer_norm_article_form(spread), layer_norm(spread), atol=1e-3)
    flat = np.array([[1.0, 1.001, 1.002, 1.003]])
    gap = np.abs(layer_norm_article_form(flat) - layer_norm(flat)).max()
    assert gap > 0.1


# ---- i-love-nlp -----------------------------------------------------------------------------


def test_i_love_nlp_true_values_by_hand():
    e = np.exp([2.0, 4.0, 6.0])
    weights = e / e.sum()
    np.testing.assert_allclose(_check(I_LOVE_NLP, "scores").true, [[2.0, 4.0, 6.0]])
    np.testing.assert_allclose(_check(I_LOVE_NLP, "scaled").true, [[2.0, 4.0, 6.0]])  # √1 = 1
    np.testing.assert_allclose(_check(I_LOVE_NLP, "probs").true, [weights], atol=1e-15)
    np.testing.assert_allclose(weights, [0.0159, 0.1173, 0.8668], atol=5e-5)
    np.testing.assert_allclose(_check(I_LOVE_NLP, "context").true, [[weights @ [2.0, 4.0, 6.0]]])
    np.testing.assert_allclose(weights @ [2.0, 4.0, 6.0], 5.7019, atol=5e-5)


def test_i_love_nlp_flags():
    assert _flags(I_LOVE_NLP) == {
        ("probs", (0, 0)): "slip",  # 0.1, true 0.0159
        ("probs", (0, 1)): "slip",  # 0.3, true 0.1173
        ("probs", (0, 2)): "slip",  # 0.6, true 0.8668
        ("context", (0, 0)): "propagated",  # 5.0 = 0.1·2 + 0.3·4 + 0.6·6: right from its weights
    }
    assert _check(I_LOVE_NLP, "context").from_printed[0, 0] == pytest.approx(5.0)


def test_i_love_nlp_skipped_scaling_is_noted_not_flagged():
    check = _check(I_LOVE_NLP, "scaled")
    assert check.printed is None and not check.flags
    assert "√1 = 1" in check.note


# ---- both -----------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", sorted(EXAMPLES))
def test_printed_values_have_the_true_shapes(slug):
    ex = EXAMPLES[slug]
    assert ex.slug == slug
    for check in check_example(ex):
        if check.printed is not None:
            assert check.printed.shape == check.true.shape


@pytest.mark.parametrize("slug", sorted(EXAMPLES))
def test_edited_inputs_flow_through_every_later_step(slug):
    ex = EXAMPLES[slug]
    base = ex.trace()
    q = ex.inputs["query"].copy()
    q[0, 0] += 0.5
    edited = ex.trace({"query": q})
    for name in ("scores", "scaled", "probs", "context"):
        assert not np.allclose(edited[name][0, 0], base[name][0, 0]), name
    if "normed" in base:
        assert not np.allclose(edited["normed"][0], base["normed"][0])
    np.testing.assert_array_equal(ex.trace(None)["probs"], base["probs"])  # no edit, no change
