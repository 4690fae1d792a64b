"""The masked-LM head in NumPy against transformers' BertForMaskedLM on small random BERTs saved by
the test (tied decoder, as BERT's, and an untied one), every position's distribution to 1e-4 in
probability; the top-k for each [MASK]; and a model without the head refused with a message."""

from __future__ import annotations

import numpy as np
import pytest

from core.models.bert import BertNumpy
from core.models.masked_lm import NoMaskedLMHead, fill_masks
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")
TEXT = "the trophy was too [MASK] . i love [MASK]"


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny-mlm")
    return make_tiny_bert(directory, masked_lm=True, num_layers=2, num_heads=4, hidden_size=32)


@pytest.fixture(scope="module")
def untied_dir(tmp_path_factory):
    """A masked-LM BERT whose decoder is its own matrix, not the word embeddings."""
    from transformers import BertForMaskedLM

    path = make_tiny_bert(tmp_path_factory.mktemp("tiny-mlm-untied"), masked_lm=True, seed=3)
    model = BertForMaskedLM.from_pretrained(path, tie_word_embeddings=False)
    with torch.no_grad():
        model.cls.predictions.decoder.weight.copy_(torch.randn_like(model.cls.predictions.decoder.weight))
    model.config.tie_word_embeddings = False
    model.save_pretrained(path, safe_serialization=True)
    return path


def reference_probabilities(path, result) -> np.ndarray:
    from transformers import BertForMaskedLM

    model = BertForMaskedLM.from_pretrained(path, attn_implementation="eager").eval()
    with torch.no_grad():
        logits = model(
            input_ids=torch.tensor([list(result.input_ids)]),
            token_type_ids=torch.tensor([list(result.token_type_ids)]),
        ).logits[0]
    return torch.softmax(logits.double(), dim=-1).numpy()


@pytest.mark.parametrize("which", ["tied", "untied"])
def test_head_matches_bert_for_masked_lm(mlm_dir, untied_dir, which):
    path = mlm_dir if which == "tied" else untied_dir
    engine = BertNumpy.from_pretrained(path)
    result = engine.run(TEXT)
    ours = engine.mlm_head.probabilities(result.hidden_states[-1])  # (T, V)
    theirs = reference_probabilities(path, result)
    assert np.abs(ours - theirs).max() < 1e-4
    np.testing.assert_allclose(ours.sum(axis=-1), 1.0, atol=1e-9)
    masks = [i for i, t in enumerate(result.tokens) if t == "[MASK]"]
    assert len(masks) == 2
    fills = fill_masks(engine, result, top=5)
    assert [f.index for f in fills] == masks
    vocab = engine.mlm_head.tokens
    for fill in fills:
        best = np.argsort(-theirs[fill.index])[:5]
        assert [token for token, _ in fill.predictions] == [vocab[i] for i in best]
        np.testing.assert_allclose([p for _, p in fill.predictions], theirs[fill.index, best], atol=1e-4)


def test_untied_decoder_is_read(untied_dir):
    engine = BertNumpy.from_pretrained(untied_dir)
    assert not np.array_equal(engine.mlm_head.decoder, engine.word_embeddings)


def test_no_mask_gives_no_predictions(mlm_dir):
    engine = BertNumpy.from_pretrained(mlm_dir)
    assert fill_masks(engine, engine.run("the trophy was too large")) == []


def test_a_model_without_the_head_says_so(tmp_path):
    engine = BertNumpy.from_pretrained(make_tiny_bert(tmp_path / "bare"))
    assert engine.mlm_head is None
    with pytest.raises(NoMaskedLMHead, match=r"no masked-LM head .* such as google-bert/bert-base-uncased"):
        fill_masks(engine, engine.run("the [MASK] sat"))
