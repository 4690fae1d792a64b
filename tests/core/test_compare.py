"""core/compare.py: alignment, swapped positions, the role bins and the change ranking, each checked
against explicit loops on random attention arrays (every row a softmax)."""

from __future__ import annotations

import numpy as np
import pytest

from core.compare import (
    ROLE_BINS,
    align_tokens,
    first_difference,
    rank_changes,
    role_bins,
    swap_labels,
    total_variation,
    word_rows,
)


def random_attention(rng, layers, heads, t) -> np.ndarray:
    scores = rng.normal(size=(layers, heads, t, t)) * 2
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


TROPHY1 = "[CLS] the trophy wouldn ' t fit in the suitcase because it was too large . [SEP]".split()
TROPHY2 = [*TROPHY1[:-3], "small", ".", "[SEP]"]


def test_alignment_same_length_lists_the_swapped_positions():
    a = align_tokens(TROPHY1, TROPHY2)
    assert a.aligned and a.swapped == (14,)
    assert swap_labels(TROPHY1, TROPHY2, a.swapped) == [(14, 15, "large → small")]


def test_alignment_of_identical_and_of_different_lengths():
    assert align_tokens(TROPHY1, TROPHY1) == align_tokens(TROPHY1, list(TROPHY1))
    assert align_tokens(TROPHY1, TROPHY1).swapped == ()
    bank1 = "[CLS] the bank approved the loan . [SEP]".split()
    bank2 = "[CLS] we sat on the river bank . [SEP]".split()
    a = align_tokens(bank1, bank2)
    assert not a.aligned and a.swapped == ()


def test_swap_labels_join_runs_and_word_pieces():
    one = ["[CLS]", "a", "big", "dog", "ran", "[SEP]"]
    two = ["[CLS]", "a", "play", "##ful", "ran", "[SEP]"]
    a = align_tokens(one, two)
    assert a.swapped == (2, 3)
    assert swap_labels(one, two, a.swapped) == [(2, 4, "big dog → playful")]
    three = ["[CLS]", "b", "big", "cat", "ran", "[SEP]"]
    b = align_tokens(one, three)
    assert swap_labels(one, three, b.swapped) == [(1, 2, "a → b"), (3, 4, "dog → cat")]


def test_first_difference():
    assert first_difference(["the", "cat", "sat"], ["The", "dog", "sat"]) == 1
    assert first_difference(["a", "b"], ["a", "b", "c"]) == 2
    assert first_difference([], ["a"]) == 0


def test_total_variation_against_a_loop():
    rng = np.random.default_rng(1)
    p, q = random_attention(rng, 2, 3, 5)[..., 0, :], random_attention(rng, 2, 3, 5)[..., 0, :]
    got = total_variation(p, q)
    for i in range(2):
        for j in range(3):
            want = 0.5 * sum(abs(float(q[i, j, k]) - float(p[i, j, k])) for k in range(5))
            assert got[i, j] == pytest.approx(want, abs=1e-12)
    assert np.allclose(total_variation(p, p), 0)
    assert total_variation(np.array([1.0, 0]), np.array([0, 1.0])) == pytest.approx(1.0)


def loop_bins(row, focus, special):
    """The role-bin rule written out token by token."""
    out = dict.fromkeys(ROLE_BINS, 0.0)
    for j, w in enumerate(row):
        if j == focus:
            name = "itself"
        elif special[j]:
            name = "[CLS]" if j == 0 else "[SEP]"
        elif j == focus - 1:
            name = "previous"
        elif j == focus + 1:
            name = "next"
        else:
            name = "other"
        out[name] += float(w)
    return [out[name] for name in ROLE_BINS]


@pytest.mark.parametrize("focus", [1, 2, 4, 6])
def test_role_bins_against_a_loop(focus):
    rng = np.random.default_rng(focus)
    special = [True, False, False, False, False, False, False, True]
    rows = random_attention(rng, 2, 2, 8)[:, :, focus, :]  # (2, 2, 8)
    got = role_bins(rows, focus, special)
    assert got.shape == (2, 2, 6)
    for layer in range(2):
        for head in range(2):
            assert got[layer, head] == pytest.approx(loop_bins(rows[layer, head], focus, special), abs=1e-6)
    assert np.allclose(got.sum(-1), 1, atol=1e-6)


def test_role_bins_neighbours_that_are_special_stay_in_their_own_bin():
    special = [True, False, True]  # [CLS] word [SEP]
    row = np.array([0.2, 0.5, 0.3])
    assert role_bins(row, 1, special).tolist() == pytest.approx([0.2, 0.3, 0.5, 0, 0, 0])


def test_word_rows_sum_pieces():
    row = np.array([0.1, 0.2, 0.3, 0.4])
    assert word_rows(row, [(0, 1), (1, 3), (3, 4)]).tolist() == pytest.approx([0.1, 0.5, 0.4])


def loop_ranking(attn1, attn2, f1, f2, special1, special2, spans1, spans2, aligned):
    rows = []
    layers, heads = attn1.shape[:2]
    for layer in range(layers):
        for head in range(heads):
            a, b = attn1[layer, head, f1], attn2[layer, head, f2]
            if aligned:
                change = 0.5 * sum(abs(float(b[j]) - float(a[j])) for j in range(len(a)))
            else:
                p, q = loop_bins(a, f1, special1), loop_bins(b, f2, special2)
                change = 0.5 * sum(abs(x - y) for x, y in zip(p, q, strict=True))
            w1 = [sum(float(a[k]) for k in range(s, e)) for s, e in spans1]
            w2 = [sum(float(b[k]) for k in range(s, e)) for s, e in spans2]
            rows.append((layer, head, change, int(np.argmax(w1)), max(w1), int(np.argmax(w2)), max(w2)))
    return rows


def check_ranking(ranked, expected):
    assert len(ranked) == len(expected)
    changes = [c.change for c in ranked]
    assert changes == sorted(changes, reverse=True)
    by_head = {(e[0], e[1]): e for e in expected}
    for c in ranked:
        e = by_head[(c.layer, c.head)]
        assert c.change == pytest.approx(e[2], abs=1e-6)
        assert (c.top1, c.top2) == (e[3], e[5])
        assert c.weight1 == pytest.approx(e[4], abs=1e-6) and c.weight2 == pytest.approx(e[6], abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_rank_changes_aligned_against_loops(seed):
    rng = np.random.default_rng(seed)
    t = 9
    attn1, attn2 = random_attention(rng, 3, 4, t), random_attention(rng, 3, 4, t)
    special = [True] + [False] * (t - 2) + [True]
    spans = [(0, 1), (1, 2), (2, 4), (4, 5), (5, 6), (6, 8), (8, 9)]  # two words of two pieces
    ranked, aligned = rank_changes(attn1, attn2, 3, 3, special, special, spans, spans)
    assert aligned
    check_ranking(ranked, loop_ranking(attn1, attn2, 3, 3, special, special, spans, spans, True))


@pytest.mark.parametrize("seed", range(4))
def test_rank_changes_not_aligned_uses_role_bins(seed):
    rng = np.random.default_rng(10 + seed)
    attn1, attn2 = random_attention(rng, 2, 3, 7), random_attention(rng, 2, 3, 10)
    special1 = [True] + [False] * 5 + [True]
    special2 = [True] + [False] * 8 + [True]
    spans1 = [(i, i + 1) for i in range(7)]
    spans2 = [(0, 1), (1, 3), *[(i, i + 1) for i in range(3, 10)]]
    ranked, aligned = rank_changes(attn1, attn2, 2, 6, special1, special2, spans1, spans2)
    assert not aligned
    check_ranking(ranked, loop_ranking(attn1, attn2, 2, 6, special1, special2, spans1, spans2, False))


def test_same_length_but_focus_moved_uses_role_bins():
    rng = np.random.default_rng(7)
    attn1, attn2 = random_attention(rng, 1, 2, 6), random_attention(rng, 1, 2, 6)
    special = [True, False, False, False, False, True]
    spans = [(i, i + 1) for i in range(6)]
    ranked, aligned = rank_changes(attn1, attn2, 1, 3, special, special, spans, spans)
    assert not aligned
    check_ranking(ranked, loop_ranking(attn1, attn2, 1, 3, special, special, spans, spans, False))


def test_identical_sentences_change_nothing():
    rng = np.random.default_rng(3)
    attn = random_attention(rng, 2, 2, 5)
    spans = [(i, i + 1) for i in range(5)]
    special = [True, False, False, False, True]
    ranked, aligned = rank_changes(attn, attn, 2, 2, special, special, spans, spans)
    assert aligned and all(c.change == 0 for c in ranked)
