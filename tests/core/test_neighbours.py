"""Nearest neighbours in a corpus: on a corpus built here whose answer is known (word vectors set by
hand), on a real random BERT (every word finds itself first), pieces averaged, and the disk cache:
round trip, a damaged file recomputed, an unwritable folder kept in memory."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.atlas import corpus_hash
from core.measures.neighbours import collect, load_or_compute_vectors, load_vectors, nearest, vectors_path
from core.models.bert import BertNumpy
from tests.core.test_referent import made_up  # a result from hidden states set by hand
from tests.tiny_bert import make_tiny_bert


def known_corpus():
    """Two sentences, one layer (L + 1 = 2), D = 3. After the layer, "lender" words point along x,
    "river" words along y; at the embeddings every "bank" is the same vector."""
    e = np.eye(3)
    bank0 = np.array([0.0, 0.0, 1.0])
    one = np.stack(
        [
            np.stack([e[2], bank0, e[0] + 0.1 * e[1], e[2]]),  # [CLS] bank loans [SEP], embeddings
            np.stack([e[2], e[0], e[0] + 0.2 * e[1], e[2]]),  # after the layer: bank ~ x
        ]
    )
    two = np.stack(
        [
            np.stack([e[2], e[1] + e[0], bank0, e[2]]),  # [CLS] river bank [SEP]
            np.stack([e[2], e[1] + 0.3 * e[0], e[1], e[2]]),  # bank ~ y
        ]
    )
    results = [
        made_up(["[CLS]", "bank", "loans", "[SEP]"], [None, 0, 1, None], one),
        made_up(["[CLS]", "river", "bank", "[SEP]"], [None, 0, 1, None], two),
    ]
    return collect(results, model="made-up", corpus="c")


def test_a_known_corpus():
    corpus = known_corpus()
    assert corpus.words == ("bank", "loans", "river", "bank")  # [CLS] and [SEP] left out
    assert list(corpus.word_sentence) == [0, 0, 1, 1] and list(corpus.word_start) == [1, 2, 5, 6]
    assert corpus.tokens[5] == "river" and list(corpus.special) == [1, 0, 0, 1] * 2
    lender = np.array([1.0, 0.05, 0.0])  # a query after the layer, near x
    found = nearest(corpus, lender, layer=1, k=4)
    assert [i for i, _ in found[:2]] == [0, 1]  # the lender bank, then loans
    assert found[0][1] == pytest.approx(1 / np.sqrt(1.0025), abs=1e-3)
    assert [i for i, _ in nearest(corpus, np.array([0.0, 1.0, 0.0]), layer=1, k=1)] == [3]  # river bank
    at_embeddings = nearest(corpus, np.array([0.0, 0.0, 1.0]), layer=0, k=2)
    assert sorted(i for i, _ in at_embeddings) == [0, 3]  # every bank alike before any context
    assert all(c == pytest.approx(1.0, abs=1e-3) for _, c in at_embeddings)


def test_pieces_are_averaged():
    hidden = np.random.default_rng(0).normal(size=(2, 5, 4))
    result = made_up(["[CLS]", "zebra", "##fish", "swam", "[SEP]"], [None, 0, 0, 1, None], hidden)
    corpus = collect([result], model="m", corpus="c")
    assert corpus.words == ("zebrafish", "swam")
    for layer in range(2):
        np.testing.assert_allclose(corpus.word_vectors(layer)[0], hidden[layer, 1:3].mean(axis=0), atol=2e-3)
        np.testing.assert_allclose(corpus.word_vectors(layer)[1], hidden[layer, 3], atol=2e-3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return BertNumpy.from_pretrained(make_tiny_bert(tmp_path_factory.mktemp("tiny-nn"), num_layers=2))


SENTENCES = ("the cat sat on the mat", "i love nlp", "the bank approved the loan")


def test_every_word_finds_itself_first(tiny):
    corpus = collect([tiny.run(s) for s in SENTENCES], model="tiny", corpus=corpus_hash(SENTENCES))
    for layer in range(3):
        for i in range(len(corpus.words)):
            (best, cosine), *_ = nearest(corpus, corpus.word_vectors(layer)[i], layer, k=3)
            assert cosine == pytest.approx(1.0, abs=1e-3)
            assert corpus.words[best] == corpus.words[i]  # itself, or the same word at the same place


def test_cache_round_trip_damage_and_an_unwritable_folder(tiny, tmp_path, caplog):
    calls = []

    def run(sentence):
        calls.append(sentence)
        return tiny.run(sentence)

    first, source = load_or_compute_vectors("tiny", SENTENCES, run, fingerprint="f", directory=tmp_path)
    assert source == "computed" and len(calls) == 3
    again, source = load_or_compute_vectors("tiny", SENTENCES, run, fingerprint="f", directory=tmp_path)
    assert source == "disk" and len(calls) == 3
    np.testing.assert_array_equal(again.hidden, first.hidden)
    assert again.words == first.words and again.tokens == first.tokens and again.hidden.dtype == np.float16
    np.testing.assert_array_equal(again.word_start, first.word_start)
    path = vectors_path("tiny", corpus_hash(SENTENCES), fingerprint="f", directory=tmp_path)
    path.write_bytes(b"not a zip file")
    assert load_vectors(path, model="tiny", corpus=corpus_hash(SENTENCES)) is None
    _, source = load_or_compute_vectors("tiny", SENTENCES, run, fingerprint="f", directory=tmp_path)
    assert source == "computed" and len(calls) == 6
    _, source = load_or_compute_vectors("tiny", SENTENCES, run, fingerprint="other", directory=tmp_path)
    assert source == "computed"  # another fingerprint: another file
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder should be")
    found, source = load_or_compute_vectors("tiny", SENTENCES, run, fingerprint="f", directory=blocked)
    assert source == "computed, not saved" and len(found.words) == len(first.words)
    assert "cannot write the cache file" in caplog.text
