"""core/measures/compare.py: alignment, swapped positions, the role bins and the change ranking, each checked
against explicit loops on random attention arrays (every row a softmax)."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.compare import (
    ROLE_BINS,
    Alignment,
    align_tokens,
    first_difference,
    rank_changes,
    role_bins,
    row_by_row,
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


def test_words_moved_rather_than_swapped_do_not_line_up():
    # the reviewer's example: same length, but "he said" moved one place right
    one = "[CLS] he said no . [SEP]".split()
    two = "[CLS] no he said . [SEP]".split()
    a = align_tokens(one, two)
    assert a == Alignment(False, (), moved=True)
    # subject and object swapped in place: "chase" and the ends keep their places
    dogs = "[CLS] dogs chase cats . [SEP]".split()
    cats = "[CLS] cats chase dogs . [SEP]".split()
    assert align_tokens(dogs, cats) == Alignment(True, (1, 3))
    # a word added in front shifts everything: same length only by chance
    assert not align_tokens("[CLS] a b c d [SEP]".split(), "[CLS] x a b c [SEP]".split()).aligned
    # long lists: the middle's longest common subsequence still decides
    base = [f"w{i}" for i in range(300)]
    assert align_tokens(base, [*base[:100], "x", *base[101:]]).swapped == (100,)
    assert align_tokens(base, [*base[:100], *base[101:200], base[100], *base[200:]]).moved


def test_row_by_row_needs_aligned_tokens_and_the_same_focus_span():
    yes, no = Alignment(True, (3,)), Alignment(False, (), moved=True)
    assert row_by_row(yes, (2, 4), (2, 4))
    assert not row_by_row(yes, (2, 4), (2, 3)) and not row_by_row(yes, (2, 3), (4, 5))
    assert not row_by_row(no, (2, 3), (2, 3)) and not row_by_row(yes, None, None)


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
    got = role_bins(rows, (focus, focus + 1), special)
    assert got.shape == (2, 2, 6)
    for layer in range(2):
        for head in range(2):
            assert got[layer, head] == pytest.approx(loop_bins(rows[layer, head], focus, special), abs=1e-6)
    assert np.allclose(got.sum(-1), 1, atol=1e-6)


def test_role_bins_neighbours_that_are_special_stay_in_their_own_bin():
    special = [True, False, True]  # [CLS] word [SEP]
    row = np.array([0.2, 0.5, 0.3])
    assert role_bins(row, (1, 2), special).tolist() == pytest.approx([0.2, 0.3, 0.5, 0, 0, 0])


def test_role_bins_of_a_word_in_pieces_count_every_piece_as_itself():
    special = [True, False, False, False, False, True]  # [CLS] a suit ##case b [SEP]
    row = np.array([0.1, 0.2, 0.3, 0.15, 0.05, 0.2])
    # itself = suit + ##case; previous = "a"; next = "b" (not the word's own second piece)
    assert role_bins(row, (2, 4), special).tolist() == pytest.approx([0.1, 0.2, 0.45, 0.2, 0.05, 0])


def test_word_rows_sum_pieces():
    row = np.array([0.1, 0.2, 0.3, 0.4])
    assert word_rows(row, [(0, 1), (1, 3), (3, 4)]).tolist() == pytest.approx([0.1, 0.5, 0.4])


def loop_word_bins(row, span, special):
    """The role bins of a word of several pieces, written out: its pieces are "itself", the tokens
    just outside it its neighbours."""
    out = dict.fromkeys(ROLE_BINS, 0.0)
    for j, w in enumerate(row):
        if span[0] <= j < span[1]:
            name = "itself"
        elif special[j]:
            name = "[CLS]" if j == 0 else "[SEP]"
        elif j == span[0] - 1:
            name = "previous"
        elif j == span[1]:
            name = "next"
        else:
            name = "other"
        out[name] += float(w)
    return [out[name] for name in ROLE_BINS]


def mean_row(attn, layer, head, span):
    """The word's row: the mean of its pieces' rows, summed by hand."""
    n = span[1] - span[0]
    return [sum(float(attn[layer, head, i, k]) for i in range(*span)) / n for k in range(attn.shape[-1])]


def loop_ranking(attn1, attn2, f1, f2, special1, special2, spans1, spans2, aligned):
    rows = []
    layers, heads = attn1.shape[:2]
    for layer in range(layers):
        for head in range(heads):
            a, b = mean_row(attn1, layer, head, f1), mean_row(attn2, layer, head, f2)
            if aligned:
                change = 0.5 * sum(abs(float(b[j]) - float(a[j])) for j in range(len(a)))
            else:
                p, q = loop_word_bins(a, f1, special1), loop_word_bins(b, f2, special2)
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
    ranked = rank_changes(attn1, attn2, (3, 4), (3, 4), special, special, spans, spans, True)
    check_ranking(ranked, loop_ranking(attn1, attn2, (3, 4), (3, 4), special, special, spans, spans, True))


@pytest.mark.parametrize("rowwise", [True, False])
def test_rank_changes_of_a_word_in_pieces_uses_its_mean_row(rowwise):
    rng = np.random.default_rng(40 + rowwise)
    t = 9
    attn1, attn2 = random_attention(rng, 2, 3, t), random_attention(rng, 2, 3, t)
    special = [True] + [False] * (t - 2) + [True]
    spans = [(0, 1), (1, 2), (2, 4), (4, 5), (5, 6), (6, 8), (8, 9)]
    ranked = rank_changes(attn1, attn2, (2, 4), (2, 4), special, special, spans, spans, rowwise)
    check_ranking(ranked, loop_ranking(attn1, attn2, (2, 4), (2, 4), special, special, spans, spans, rowwise))
    first_piece = rank_changes(attn1, attn2, (2, 3), (2, 3), special, special, spans, spans, rowwise)
    assert [c.change for c in ranked] != pytest.approx([c.change for c in first_piece])


def test_rank_changes_refuses_row_by_row_when_the_focus_moved():
    rng = np.random.default_rng(5)
    attn = random_attention(rng, 1, 1, 6)
    special = [True, False, False, False, False, True]
    spans = [(i, i + 1) for i in range(6)]
    with pytest.raises(ValueError):
        rank_changes(attn, attn, (1, 2), (3, 4), special, special, spans, spans, True)


@pytest.mark.parametrize("seed", range(4))
def test_rank_changes_not_aligned_uses_role_bins(seed):
    rng = np.random.default_rng(10 + seed)
    attn1, attn2 = random_attention(rng, 2, 3, 7), random_attention(rng, 2, 3, 10)
    special1 = [True] + [False] * 5 + [True]
    special2 = [True] + [False] * 8 + [True]
    spans1 = [(i, i + 1) for i in range(7)]
    spans2 = [(0, 1), (1, 3), *[(i, i + 1) for i in range(3, 10)]]
    ranked = rank_changes(attn1, attn2, (2, 3), (6, 7), special1, special2, spans1, spans2, False)
    want = loop_ranking(attn1, attn2, (2, 3), (6, 7), special1, special2, spans1, spans2, False)
    check_ranking(ranked, want)


def test_same_length_but_focus_moved_uses_role_bins():
    rng = np.random.default_rng(7)
    attn1, attn2 = random_attention(rng, 1, 2, 6), random_attention(rng, 1, 2, 6)
    special = [True, False, False, False, False, True]
    spans = [(i, i + 1) for i in range(6)]
    ranked = rank_changes(attn1, attn2, (1, 2), (3, 4), special, special, spans, spans, False)
    check_ranking(ranked, loop_ranking(attn1, attn2, (1, 2), (3, 4), special, special, spans, spans, False))


def test_identical_sentences_change_nothing():
    rng = np.random.default_rng(3)
    attn = random_attention(rng, 2, 2, 5)
    spans = [(i, i + 1) for i in range(5)]
    special = [True, False, False, False, True]
    for rowwise in (True, False):
        ranked = rank_changes(attn, attn, (2, 3), (2, 3), special, special, spans, spans, rowwise)
        assert all(c.change == 0 for c in ranked)
