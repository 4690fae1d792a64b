"""Head ablation: both engines against a computation made independently with transformers (a forward
hook on BertSelfAttention's output, written here, not the product's code), the restart at the first
changed layer against a full rerun, the sentence embedding and effect by hand, and bad head sets."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.ablation import ablated_last_hidden, embedding_effect, head_effects, sentence_embedding
from core.models.bert import BertNumpy
from core.models.interventions import check_heads
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")
TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-ablate"), num_layers=3, num_heads=4, hidden_size=32)


@pytest.fixture(scope="module")
def bundled_dir():
    from core.models import bundled

    return bundled.bundled_files()


def reference_model(path):
    from transformers import BertModel

    return BertModel.from_pretrained(path, attn_implementation="eager").eval()


def reference_hidden(model, ids, types, heads) -> np.ndarray:
    """(L + 1, T, D) from transformers with `heads` zeroed where BertSelfAttention returns its
    weighted sum (the (B, T, H·d_k) context, before BertSelfOutput's W^O)."""
    d_k = model.config.hidden_size // model.config.num_attention_heads
    handles = []
    for layer in {layer for layer, _ in heads}:
        cut = [head for changed, head in heads if changed == layer]

        def hook(_module, _inputs, output, cut=cut):
            context = output[0].clone()
            for head in cut:
                context[:, :, head * d_k : (head + 1) * d_k] = 0
            return (context, *output[1:])

        handles.append(model.encoder.layer[layer].attention.self.register_forward_hook(hook))
    try:
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([list(ids)]),
                token_type_ids=torch.tensor([list(types)]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                output_hidden_states=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    return np.stack([h[0].numpy() for h in out.hidden_states])


def pooled(last: np.ndarray) -> np.ndarray:
    mean = last.astype(np.float64).mean(axis=0)
    return mean / np.sqrt((mean * mean).sum())


@pytest.mark.parametrize("heads", [set(), {(0, 1)}, {(1, 0), (1, 3)}, {(0, 0), (2, 2), (2, 3)}])
def test_numpy_ablation_matches_a_transformers_hook_on_a_random_bert(tiny_dir, heads):
    ours = BertNumpy.from_pretrained(tiny_dir).run("the trophy was too large . i love nlp", ablate=heads)
    theirs = reference_hidden(reference_model(tiny_dir), ours.input_ids, ours.token_type_ids, heads)
    assert np.abs(ours.hidden_states - theirs).max() < 1e-5
    assert ours.meta["ablated"] == sorted(heads)


def test_ablation_changes_the_output_and_nothing_before_its_layer(tiny_dir):
    model = BertNumpy.from_pretrained(tiny_dir)
    plain, cut = model.run("the cat sat on the mat"), model.run("the cat sat on the mat", ablate={(1, 2)})
    np.testing.assert_array_equal(plain.hidden_states[:2], cut.hidden_states[:2])  # embeddings, layer 1
    assert np.abs(plain.hidden_states[2] - cut.hidden_states[2]).max() > 1e-4
    # the pattern itself is not cut: layer 2's weights are computed from an unchanged input
    np.testing.assert_array_equal(plain.attentions[1], cut.attentions[1])


def test_restarting_at_the_first_changed_layer_equals_a_full_rerun(tiny_dir):
    model = BertNumpy.from_pretrained(tiny_dir)
    result = model.run("it was too small because the suitcase")
    for heads in ({(1, 1)}, {(2, 0), (1, 3)}, {(0, 2)}):
        full = model.run("it was too small because the suitcase", ablate=heads).hidden_states[-1]
        np.testing.assert_allclose(ablated_last_hidden(model, result, heads), full, atol=1e-6)


@pytest.mark.slow
def test_bundled_engines_agree_and_match_transformers(bundled_dir):
    from core.models.pretrained import load_pretrained

    numpy_engine, torch_engine = BertNumpy.from_pretrained(), load_pretrained("bundled")
    reference = reference_model(bundled_dir)
    for heads in ({(2, 3)}, {(0, 0), (5, 11), (3, 4)}, {(4, h) for h in range(12)}):
        a, b = numpy_engine.run(TROPHY, ablate=heads), torch_engine.run(TROPHY, ablate=heads)
        theirs = reference_hidden(reference, a.input_ids, a.token_type_ids, heads)
        assert np.abs(a.hidden_states - b.hidden_states).max() < 1e-5
        assert np.abs(a.hidden_states - theirs).max() < 1e-5
        assert np.abs(b.hidden_states - theirs).max() < 1e-5


@pytest.mark.slow
def test_bundled_effect_grid_matches_transformers(bundled_dir):
    """Every cell of the grid, from the NumPy sweep (restarting at layer l), against transformers."""
    model = BertNumpy.from_pretrained()
    result = model.run(TROPHY)
    effects = head_effects(model, result)
    reference = reference_model(bundled_dir)
    base = pooled(reference_hidden(reference, result.input_ids, result.token_type_ids, set())[-1])
    expected = np.zeros_like(effects)
    for layer in range(result.n_layers):
        for head in range(result.n_heads):
            hidden = reference_hidden(reference, result.input_ids, result.token_type_ids, {(layer, head)})
            expected[layer, head] = 1 - float(pooled(hidden[-1]) @ base)
    np.testing.assert_allclose(effects, expected, atol=1e-5)
    assert effects.max() > 0.01  # some head matters on this sentence


def test_torch_engine_grid_equals_the_numpy_grid(tiny_dir):
    from core.models.pretrained import load_pretrained

    numpy_engine, torch_engine = BertNumpy.from_pretrained(tiny_dir), load_pretrained(str(tiny_dir))
    text = "the bank approved the loan"
    grid_numpy = head_effects(numpy_engine, numpy_engine.run(text))
    grid_torch = head_effects(torch_engine, torch_engine.run(text))
    np.testing.assert_allclose(grid_numpy, grid_torch, atol=1e-5)


def test_sentence_embedding_and_effect_by_hand():
    last = np.array([[3.0, 0.0], [1.0, 4.0]])  # mean (2, 2), normalised (1, 1)/√2
    np.testing.assert_allclose(sentence_embedding(last), [2**-0.5, 2**-0.5])
    assert embedding_effect(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)
    assert embedding_effect(np.array([0.6, 0.8]), np.array([0.6, 0.8])) == 0.0  # never below 0
    assert embedding_effect(np.array([1.0, 0.0]), np.array([0.6, 0.8])) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("heads", "message"),
    [
        ([(99, 0)], "head (99, 0) is not in this model: layers 0..2"),
        ([(0, -1)], "heads 0..3"),
        ([(0, 1.5)], "pair of whole numbers"),
        (["12"], "pair of whole numbers"),
        ([(0, 1, 2)], "pair of whole numbers"),
    ],
)
def test_bad_heads_are_refused_with_a_message(tiny_dir, heads, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        BertNumpy.from_pretrained(tiny_dir).run("the cat", ablate=heads)


def test_check_heads_accepts_numpy_integers_and_duplicates():
    assert check_heads([(np.int64(1), np.int64(2)), (1, 2)], 3, 4) == frozenset({(1, 2)})
    assert check_heads(None, 3, 4) == frozenset()
