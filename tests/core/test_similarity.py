"""Token similarity: the within-sentence cosine matrix and one word's cosine across two sentences,
against hidden states computed independently with transformers' BertModel (pieces averaged here)."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.similarity import cosine_matrix, item_vectors, word_across_layers
from core.models.bert import BertNumpy
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-sim"), num_layers=3, num_heads=4, hidden_size=32)


def reference_hidden(path, result) -> np.ndarray:
    from transformers import BertModel

    model = BertModel.from_pretrained(path, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([list(result.input_ids)]),
            token_type_ids=torch.tensor([list(result.token_type_ids)]),
            output_hidden_states=True,
        )
    return np.stack([h[0].double().numpy() for h in out.hidden_states])  # (L + 1, T, D)


def cos(a, b) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_cosine_matrix_matches_transformers(tiny_dir):
    result = BertNumpy.from_pretrained(tiny_dir).run("the zebrafish sat on the mat")
    theirs = reference_hidden(tiny_dir, result)
    for layer in range(result.n_layers + 1):
        ours = cosine_matrix(result.hidden_states[layer])
        t = theirs[layer]
        expected = np.array([[cos(t[i], t[j]) for j in range(len(t))] for i in range(len(t))])
        np.testing.assert_allclose(ours, expected, atol=1e-5)
        np.testing.assert_allclose(np.diag(ours), 1.0, atol=1e-12)


def test_pieces_are_averaged():
    hidden = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # (L + 1, T, D)
    vectors = item_vectors(hidden, [(0, 1), (1, 3)])
    np.testing.assert_allclose(vectors[:, 1], hidden[:, 1:3].mean(axis=1))
    assert vectors.shape == (2, 2, 4)


def test_word_across_layers_matches_transformers(tiny_dir):
    engine = BertNumpy.from_pretrained(tiny_dir)
    one, two = engine.run("the bank approved the loan"), engine.run("we sat on the river bank")
    s1, s2 = (r.tokens.index("bank") for r in (one, two))
    ours = word_across_layers(one.hidden_states, (s1, s1 + 1), two.hidden_states, (s2, s2 + 1))
    h1, h2 = reference_hidden(tiny_dir, one), reference_hidden(tiny_dir, two)
    expected = [cos(h1[layer, s1], h2[layer, s2]) for layer in range(one.n_layers + 1)]
    np.testing.assert_allclose(ours, expected, atol=1e-5)
    assert ours.shape == (one.n_layers + 1,) and ours[0] < 1 - 1e-4  # positions differ at the embeddings


def test_the_same_word_at_the_same_place_starts_at_one(tiny_dir):
    engine = BertNumpy.from_pretrained(tiny_dir)
    one, two = engine.run("the cat sat on the mat"), engine.run("the cat lay on the mat")
    ours = word_across_layers(one.hidden_states, (2, 3), two.hidden_states, (2, 3))
    assert ours[0] == pytest.approx(1.0, abs=1e-6) and ours[-1] < ours[0]
