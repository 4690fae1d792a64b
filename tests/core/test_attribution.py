"""Attribution: Spearman's ρ by hand and against the textbook formula; leave-one-out against a
computation made independently with transformers (BertModel run without each token, pooled here);
the column means by hand; and the bundled model's figures on the trophy and bank sentences
recomputed the same way, so a change to any of them shows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.measures.attribution import MEASURES, attention_columns, attribution, leave_one_out, spearman
from core.models.bert import BertNumpy
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-loo"), num_layers=2, num_heads=4, hidden_size=32)


def reference_loo(path, ids, types, special) -> np.ndarray:
    """(T,) 1 − cos of transformers' mean-pooled, normalised last layer without each token."""
    from transformers import BertModel

    model = BertModel.from_pretrained(path, attn_implementation="eager").eval()

    def embedding(keep):
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([[ids[i] for i in keep]]),
                token_type_ids=torch.tensor([[types[i] for i in keep]]),
            )
        v = out.last_hidden_state[0].double().mean(dim=0)
        return v / v.norm()

    everything = embedding(range(len(ids)))
    scores = np.full(len(ids), np.nan)
    for j in range(len(ids)):
        if not special[j]:
            scores[j] = 1.0 - float(embedding([i for i in range(len(ids)) if i != j]) @ everything)
    return scores


@pytest.mark.parametrize(
    ("a", "b", "rho"),
    [
        ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
        ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
        ([1, 2, 3], [1, 3, 2], 0.5),  # d = (0, 1, 1): 1 − 6·2 / (3·8)
        ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], 0.8),  # Σd² = 4: 1 − 24 / 120
        ([1, 2, 2, 3], [1, 2, 3, 4], 0.9486832980505138),  # a tie: Pearson of ranks (1, 2.5, 2.5, 4)
        ([np.nan, 1, 2, 3, 9], [5, 1, 2, 3, np.nan], 1.0),  # only where both are finite
    ],
)
def test_spearman_hand_cases(a, b, rho):
    assert spearman(np.array(a, float), np.array(b, float)) == pytest.approx(rho, abs=1e-12)


@pytest.mark.parametrize(("a", "b"), [([1, 2], [2, 1]), ([1, 1, 1], [1, 2, 3]), ([np.nan] * 4, [1, 2, 3, 4])])
def test_spearman_undefined(a, b):
    assert spearman(np.array(a, float), np.array(b, float)) is None


@given(st.permutations(list(range(12))), st.integers(3, 12))
def test_spearman_equals_the_formula_without_ties(order, n):
    a = np.arange(n, dtype=float)
    b = np.array([x for x in order if x < n], dtype=float)
    d = a - b  # both are already ranks 0..n-1
    assert spearman(a, b) == pytest.approx(1 - 6 * (d * d).sum() / (n * (n * n - 1)), abs=1e-12)


def test_leave_one_out_matches_transformers_on_a_random_bert(tiny_dir):
    engine = BertNumpy.from_pretrained(tiny_dir)
    result = engine.run("the trophy was too large . i love nlp")
    ours = leave_one_out(engine, result)
    theirs = reference_loo(tiny_dir, list(result.input_ids), list(result.token_type_ids), result.special_mask)
    assert np.isnan(ours[result.special_mask]).all()
    np.testing.assert_allclose(ours, theirs, atol=1e-6, equal_nan=True)
    assert np.nanmax(ours) > 1e-4  # a real effect, not a zero that would match anything


def test_leave_one_out_keeps_the_second_sentence_of_a_pair(tiny_dir):
    engine = BertNumpy.from_pretrained(tiny_dir)
    result = engine.run("the trophy was large", "it did not fit")
    theirs = reference_loo(tiny_dir, list(result.input_ids), list(result.token_type_ids), result.special_mask)
    np.testing.assert_allclose(leave_one_out(engine, result), theirs, atol=1e-6, equal_nan=True)


def test_columns_by_hand(tiny_dir):
    engine = BertNumpy.from_pretrained(tiny_dir)
    result = engine.run("the cat sat on the mat")
    weights = engine.layer_weights(result.n_layers - 1)
    columns = attention_columns(result, weights)
    last = result.attentions[-1].astype(np.float64)  # (H, T, T)
    special = result.special_mask
    expected = last.mean(axis=0).sum(axis=0) / result.n_tokens  # mean over heads, then over rows
    np.testing.assert_allclose(columns["attention"][~special], expected[~special], rtol=1e-6)
    # rollout by hand: (0.5 A + 0.5 I) per layer, mean over heads, rows renormalised, multiplied
    rolled = np.eye(result.n_tokens)
    for layer in result.attentions.astype(np.float64):
        a = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(result.n_tokens)
        rolled = (a / a.sum(axis=-1, keepdims=True)) @ rolled
    np.testing.assert_allclose(columns["rollout"][~special], rolled.mean(axis=0)[~special], rtol=1e-5)
    # norms by hand: ‖α_ij (x_j W_V,h + b_V,h) W_O,h‖, mean over heads and rows
    x = result.hidden_states[-2].astype(np.float64)
    d_k = weights.d_k
    norms = np.zeros((result.n_heads, result.n_tokens, result.n_tokens))
    for h in range(result.n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        f = (x @ weights.w_v[:, cols] + weights.b_v[cols]) @ weights.w_o[cols]  # (T, D)
        norms[h] = last[h] * np.linalg.norm(f, axis=-1)[None, :]
    np.testing.assert_allclose(columns["norms"][~special], norms.mean(axis=(0, 1))[~special], rtol=1e-5)
    assert all(np.isnan(columns[name][special]).all() for name in MEASURES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    ["The trophy wouldn't fit in the suitcase because it was too large.", "The bank approved the loan."],
)
def test_bundled_attribution_matches_transformers(text):
    from core.models import bundled

    path = bundled.bundled_files()
    engine = BertNumpy.from_pretrained(path)
    result = engine.run(text)
    found = attribution(engine, result)
    theirs = reference_loo(path, list(result.input_ids), list(result.token_type_ids), result.special_mask)
    np.testing.assert_allclose(found.loo, theirs, atol=2e-6, equal_nan=True)
    for name in MEASURES:  # ρ is the product's function of the columns and the independent loo
        assert found.rho[name] == pytest.approx(spearman(found.columns[name], theirs), abs=1e-9)
