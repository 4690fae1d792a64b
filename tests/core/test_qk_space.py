"""One head's queries and keys in one plane: the queries and keys against transformers' own query and
key layers, the normalisation against AttentionViz's construction (same points up to a shift and a
scale; its scores keep every attention weight), and the PCA against an eigen-decomposition."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.qk_space import head_queries_keys, qk_space
from core.models.bert import BertNumpy
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-qk"), num_layers=2, num_heads=4, hidden_size=32)


def test_queries_and_keys_match_transformers(tiny_dir):
    from transformers import BertModel

    engine = BertNumpy.from_pretrained(tiny_dir)
    result = engine.run("the bank approved the loan")
    model = BertModel.from_pretrained(tiny_dir, attn_implementation="eager").eval()
    layer, head, d_k = 1, 2, 8
    x = result.hidden_states[layer]  # the hidden state entering layer 1
    query, key = head_queries_keys(x, engine.layer_weights(layer), head)
    attention = model.encoder.layer[layer].attention.self
    with torch.no_grad():
        theirs_q = attention.query(torch.from_numpy(x)).numpy()[:, head * d_k : (head + 1) * d_k]
        theirs_k = attention.key(torch.from_numpy(x)).numpy()[:, head * d_k : (head + 1) * d_k]
    np.testing.assert_allclose(query, theirs_q, atol=1e-5)
    np.testing.assert_allclose(key, theirs_k, atol=1e-5)
    # and they make the engine's own attention weights for that head
    scores = query @ key.T / np.sqrt(d_k)
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        probs / probs.sum(axis=1, keepdims=True), result.attentions[layer, head], atol=1e-5
    )


def softmax(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_same_points_as_attentionviz_and_the_weights_unchanged():
    rng = np.random.default_rng(3)
    query = rng.normal(size=(40, 6)) * 3 + 2.0  # queries and keys of different centres and sizes
    key = rng.normal(size=(40, 6)) * 0.5 - 1.0
    # AttentionViz: queries times c, keys times 1/c and moved onto the queries' centre, with c such
    # that both have the same mean norm about it
    m_q, m_k = query.mean(axis=0), key.mean(axis=0)
    c = np.sqrt(np.linalg.norm(key - m_k, axis=1).mean() / np.linalg.norm(query - m_q, axis=1).mean())
    q1, k1 = c * query, (key - m_k) / c + c * m_q
    np.testing.assert_allclose(softmax(q1 @ k1.T), softmax(query @ key.T), atol=1e-12)  # weights kept
    # ours: each set centred, keys scaled to the queries' mean norm
    space = qk_space(query, key)
    ours_q = query - space.query_mean
    ours_k = (key - space.key_mean) * space.key_scale
    assert np.linalg.norm(ours_q, axis=1).mean() == pytest.approx(np.linalg.norm(ours_k, axis=1).mean())
    theirs = np.linalg.norm(q1[:, None] - k1[None], axis=-1)
    ours = np.linalg.norm(ours_q[:, None] - ours_k[None], axis=-1)
    np.testing.assert_allclose(ours * c, theirs, rtol=1e-10)  # every distance, one overall factor


def test_projection_is_pca():
    rng = np.random.default_rng(4)
    query, key = rng.normal(size=(50, 5)), rng.normal(size=(30, 5)) * 2
    space = qk_space(query, key)
    both = np.concatenate([query - query.mean(0), (key - key.mean(0)) * space.key_scale])
    values, vectors = np.linalg.eigh(np.cov(both.T, bias=True))
    top = vectors[:, ::-1][:, :2].T  # the two largest
    np.testing.assert_allclose(np.abs(space.axes @ top.T), np.eye(2), atol=1e-8)  # same axes, up to sign
    assert space.explained == pytest.approx(tuple(values[::-1][:2] / values.sum()))
    pq, pk = space.place(query, key)
    assert pq.shape == (50, 2) and pk.shape == (30, 2)
    np.testing.assert_allclose(np.concatenate([pq, pk]).mean(axis=0), 0, atol=1e-12)
    # points in a plane keep their distances
    flat_q = np.c_[rng.normal(size=(20, 2)), np.zeros((20, 3))]
    flat_k = np.c_[rng.normal(size=(20, 2)), np.zeros((20, 3))]
    flat = qk_space(flat_q, flat_k)
    assert sum(flat.explained) == pytest.approx(1.0)
    fq, fk = flat.place(flat_q, flat_k)
    normalised = np.concatenate([flat_q - flat_q.mean(0), (flat_k - flat_k.mean(0)) * flat.key_scale])
    placed = np.concatenate([fq, fk])
    np.testing.assert_allclose(
        np.linalg.norm(placed[:, None] - placed[None], axis=-1),
        np.linalg.norm(normalised[:, None] - normalised[None], axis=-1),
        atol=1e-10,
    )
