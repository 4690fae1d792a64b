"""A variant in every head of the NumPy engine (`run(..., variant=...)`, read in the forward pass as
head ablation is): full attention as a variant is the model itself; each layer's weights are the
variant applied to that layer's own queries, keys and values; sparse patterns leave exact zeros,
with [CLS] and [SEP] as the global tokens; the whole-model measures and the window sweep."""

from __future__ import annotations

import numpy as np
import pytest

from core.cost.variant_model import (
    compare_head,
    embedding_change,
    first_of_the_rest,
    head_qkv,
    layer_changes,
    run_variant,
    smallest_window,
    sweep,
    sweep_radii,
)
from core.cost.variants import Variant
from core.models.bert import BertNumpy
from tests.tiny_bert import make_tiny_bert

TEXT = "the cat sat on the mat because it was tired"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return BertNumpy.from_pretrained(make_tiny_bert(tmp_path_factory.mktemp("tiny-variants"), num_layers=3))


@pytest.fixture(scope="module")
def bundled():
    return BertNumpy.from_pretrained()


def test_full_as_a_variant_is_the_model(tiny):
    plain = tiny.run(TEXT)
    same = tiny.run(TEXT, variant=Variant("full"))
    np.testing.assert_allclose(same.attentions, plain.attentions, atol=1e-7)
    np.testing.assert_allclose(same.hidden_states, plain.hidden_states, atol=1e-6)
    assert embedding_change(tiny, plain, Variant("full")) < 1e-9
    assert same.meta["variant"] == "full" and plain.meta["variant"] is None


EVERY = [
    Variant("window", w=1), Variant("strided", s=3), Variant("longformer", w=1), Variant("bigbird", w=1, r=2),
    Variant("linear"), Variant("performer", m=32), Variant("linformer", k=4),
]  # fmt: skip


@pytest.mark.parametrize("variant", EVERY, ids=lambda v: v.name)
def test_each_layer_uses_the_variant_on_its_own_queries_and_keys(tiny, variant):
    result = tiny.run(TEXT, variant=variant, trace_layers=range(tiny.n_layers))
    bound = variant.with_globals(result.special_mask)
    for layer in range(tiny.n_layers):
        trace = result.traces[layer]
        for head in range(tiny.n_heads):
            output, weights = bound(trace["query"][head], trace["key"][head], trace["value"][head])
            np.testing.assert_allclose(result.attentions[layer, head], weights, atol=1e-6)
            np.testing.assert_allclose(trace["context"][head], output, atol=1e-5)
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_sparse_patterns_leave_exact_zeros_and_see_the_globals(tiny):
    result = tiny.run(TEXT, variant=Variant("longformer", w=1))
    t = result.n_tokens
    i = np.arange(t)
    hidden = (
        (np.abs(i[:, None] - i[None, :]) > 1)
        & ~np.isin(i, [0, t - 1])[:, None]
        & ~np.isin(i, [0, t - 1])[None, :]
    )
    assert (result.attentions[:, :, hidden] == 0).all()
    assert (result.attentions[:, :, [0, t - 1], :] > 0).all()  # [CLS] and [SEP] see every token
    assert (result.attentions[:, :, :, [0, t - 1]] > 0).all()  # and every token sees them


def test_layer_changes_hand_worked():
    a = np.array([[[[1.0, 0.0], [0.5, 0.5]]]])  # (L=1, H=1, 2, 2)
    b = np.array([[[[0.0, 1.0], [0.5, 0.5]]]])
    np.testing.assert_allclose(layer_changes(a, b), [0.5])  # rows move by 1 and by 0
    np.testing.assert_allclose(layer_changes(a, a), [0.0])


def test_the_window_sweep_on_the_trophy_sentence(bundled):
    result = bundled.run("The trophy wouldn't fit in the suitcase because it was too large.")
    answer, found = smallest_window(bundled, result)
    assert [r for r, _ in found] == list(range(1, result.n_tokens))
    assert found[-1][1] < 1e-6  # the whole row: the model itself
    assert answer is not None and all(change <= 0.05 for r, change in found if r >= answer)
    if answer > 1:
        assert dict(found)[answer - 1] > 0.05
    _, attentions = run_variant(bundled, result, Variant("window", w=answer))
    changes = layer_changes(result.attentions, attentions)
    assert changes.shape == (bundled.n_layers,) and (changes > 0).all()
    performer = sweep(bundled, result, Variant("performer"), "m", [4, 256])
    assert performer[1][1] < performer[0][1]  # more features, closer to softmax


def test_bad_variants():
    with pytest.raises(ValueError, match="unknown variant"):
        Variant("nope")
    with pytest.raises(ValueError, match="w must be 0 or more"):
        Variant("window", w=-1)
    with pytest.raises(ValueError, match="s must be 1 or more"):
        Variant("strided", s=0)


def test_sweep_radii_and_the_answer_hand_worked():
    assert sweep_radii(2) == [1] and sweep_radii(10) == list(range(1, 10))
    long = sweep_radii(122)
    assert long[:16] == list(range(1, 17)) and long[-1] == 121 and long == sorted(set(long))
    assert len(long) < 30
    # the smallest value from which every change stays at most 0.05
    assert first_of_the_rest([(1, 0.3), (2, 0.04), (3, 0.06), (4, 0.01), (5, 0.0)]) == 4
    assert first_of_the_rest([(1, 0.3), (2, 0.2)]) is None
    assert first_of_the_rest([(1, 0.01), (2, 0.0)]) == 1


def test_head_qkv_and_comparison_match_the_traced_layer(tiny):
    result = tiny.run(TEXT, trace_layers=[1])
    trace = result.traces[1]
    query, key, value = head_qkv(result.hidden_states[1], tiny.layer_weights(1), 2)
    for mine, traced in ((query, "query"), (key, "key"), (value, "value")):
        np.testing.assert_allclose(mine, trace[traced][2], atol=1e-5)
    same = compare_head(Variant("full"), query, key, value)
    np.testing.assert_allclose(same.weights, result.attentions[1, 2], atol=1e-6)
    assert same.tv < 1e-7 and same.relative_error < 1e-6
    # a window of radius 0: every token on itself; loop-computed error and row total variation
    alone = compare_head(Variant("window", w=0), query, key, value)
    full_out, full_w = Variant("full")(query, key, value)
    rows = [zip(alone.weights[i], full_w[i], strict=True) for i in range(len(query))]
    tv = np.mean([0.5 * sum(abs(float(a) - float(b)) for a, b in row) for row in rows])
    assert alone.tv == pytest.approx(tv) and alone.tv == pytest.approx(np.mean(1 - np.diag(full_w)))
    np.testing.assert_allclose(alone.output, value, atol=1e-6)  # each token takes its own value
    rel = np.sqrt(((value - full_out) ** 2).sum()) / np.sqrt((full_out**2).sum())
    assert alone.relative_error == pytest.approx(rel, rel=1e-5)
