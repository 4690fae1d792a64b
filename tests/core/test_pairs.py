"""core.measures.pairs: segments of a sentence pair and each head's share of attention that crosses
between the two sentences, against a case worked by hand and invariants."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.pairs import cross_shares, rank_cross, segments_from_start, segments_from_types

# [CLS] a1 a2 [SEP] b1 [SEP]: BERT's type ids and special mask
TYPES = [0, 0, 0, 0, 1, 1]
SPECIAL = [True, False, False, True, False, True]


def test_segments_from_bert_types():
    assert segments_from_types(TYPES, SPECIAL).tolist() == [-1, 0, 0, -1, 1, -1]


def test_segments_of_a_concatenation():
    # <s> a1 a2 b1 b2: B starts at token 3
    assert segments_from_start([True, False, False, False, False], 3).tolist() == [-1, 0, 0, 1, 1]
    with pytest.raises(ValueError):
        segments_from_start([False, False], 3)


def test_a_hand_worked_head():
    """Rows: a1 gives 0.3 to b1, a2 gives 0.1 to b1, b1 gives 0.2 + 0.4 to a1 and a2. Specials'
    rows do not count, and the weight a word gives [SEP] never crosses."""
    row = {
        0: [0.5, 0.1, 0.1, 0.1, 0.1, 0.1],  # [CLS]: not counted, whatever it does
        1: [0.1, 0.2, 0.2, 0.2, 0.3, 0.0],  # a1 -> b1: 0.3
        2: [0.0, 0.1, 0.1, 0.6, 0.1, 0.1],  # a2 -> b1: 0.1 (its 0.6 on [SEP] does not cross)
        3: [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # [SEP]: not counted
        4: [0.1, 0.2, 0.4, 0.1, 0.1, 0.1],  # b1 -> a1, a2: 0.6
        5: [0.0, 0.5, 0.5, 0.0, 0.0, 0.0],  # [SEP]
    }
    att = np.array([row[i] for i in range(6)])[None, None]  # (1, 1, 6, 6)
    shares = cross_shares(att, segments_from_types(TYPES, SPECIAL))
    assert shares.n_a == 2 and shares.n_b == 1
    assert shares.a_to_b[0, 0] == pytest.approx((0.3 + 0.1) / 2)
    assert shares.b_to_a[0, 0] == pytest.approx(0.6)
    assert shares.cross[0, 0] == pytest.approx((0.3 + 0.1 + 0.6) / 3)


def _random_attention(rng, shape):
    raw = rng.random(shape)
    return raw / raw.sum(axis=-1, keepdims=True)


def test_invariants_on_random_heads():
    rng = np.random.default_rng(0)
    att = _random_attention(rng, (3, 4, 6, 6))
    seg = segments_from_types(TYPES, SPECIAL)
    shares = cross_shares(att, seg)
    for part in (shares.a_to_b, shares.b_to_a, shares.cross):
        assert part.shape == (3, 4) and (part >= 0).all() and (part <= 1 + 1e-12).all()
    weighted = (shares.n_a * shares.a_to_b + shares.n_b * shares.b_to_a) / (shares.n_a + shares.n_b)
    np.testing.assert_allclose(shares.cross, weighted)
    ranked = rank_cross(shares)
    assert len(ranked) == 12
    assert [h.cross for h in ranked] == sorted((h.cross for h in ranked), reverse=True)
    top = ranked[0]
    assert top.cross == pytest.approx(shares.cross.max())
    assert shares.cross[top.layer, top.head] == pytest.approx(top.cross)


def test_a_head_within_each_sentence_crosses_nothing_and_one_across_crosses_all():
    seg = segments_from_types(TYPES, SPECIAL)
    within = np.eye(6)[None, None]  # every token on itself
    assert cross_shares(within, seg).cross[0, 0] == 0
    across = np.zeros((1, 1, 6, 6))
    across[0, 0, :, 4] = 1.0  # everyone on b1
    across[0, 0, 4, 1] = 1.0  # b1 on a1
    across[0, 0, 4, 4] = 0.0
    shares = cross_shares(across, seg)
    assert shares.a_to_b[0, 0] == 1 and shares.b_to_a[0, 0] == 1 and shares.cross[0, 0] == 1


def test_causal_cross_is_b_reading_a_only():
    rng = np.random.default_rng(1)
    att = np.tril(rng.random((2, 2, 5, 5)))
    att /= att.sum(axis=-1, keepdims=True)
    seg = segments_from_start([True, False, False, False, False], 3)
    shares = cross_shares(att, seg, causal=True)
    assert (shares.a_to_b == 0).all()  # the mask: A's rows never see B
    np.testing.assert_allclose(shares.cross, shares.b_to_a)


def test_no_sentence_b_crosses_nothing():
    att = np.full((1, 2, 3, 3), 1 / 3)
    shares = cross_shares(att, segments_from_types([0, 0, 0], [True, False, True]))
    assert shares.n_b == 0 and (shares.cross == 0).all()


def test_shapes_must_match():
    with pytest.raises(ValueError):
        cross_shares(np.ones((1, 1, 3, 3)) / 3, np.array([0, 1]))
    with pytest.raises(ValueError):
        segments_from_types([0, 1], [False])
