"""Word merge, special-token removal, head ranking and statistics: invariants and hand-checked values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.measures.analysis import (
    drop_tokens,
    find_word_ref,
    head_stats,
    merge_pieces,
    piece_text,
    rank_heads,
    rank_heads_specific,
    token_similarity,
    token_view,
    word_ref,
    word_spans,
)

# "[CLS] i love nl ##p [SEP] so do i [SEP]": a sentence pair whose word ids restart at 0
TOKENS = ["[CLS]", "i", "love", "nl", "##p", "[SEP]", "so", "do", "i", "[SEP]"]
WORD_IDS = [None, 0, 1, 2, 2, None, 0, 1, 2, None]
SPECIAL = [True, False, False, False, False, True, False, False, False, True]


def random_attention(shape, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.random(shape).astype(np.float32) + 1e-3
    return a / a.sum(axis=-1, keepdims=True)


def test_word_spans_join_pieces_and_keep_specials_alone():
    assert word_spans(WORD_IDS, SPECIAL) == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 5),
        (5, 6),
        (6, 7),
        (7, 8),
        (8, 9),
        (9, 10),
    ]
    # equal ids on both sides of [SEP] are not one word
    assert word_spans([None, 0, None, 0, None], [True, False, True, False, True]) == [
        (i, i + 1) for i in range(5)
    ]


def test_merge_sums_columns_and_averages_rows():
    a = random_attention((2, 3, 10, 10))
    spans = word_spans(WORD_IDS, SPECIAL)
    merged = merge_pieces(a, spans)
    assert merged.shape == (2, 3, 9, 9)
    # by hand: the word "nlp" is tokens 3 and 4
    np.testing.assert_allclose(merged[..., 1, 3], a[..., 1, 3] + a[..., 1, 4], rtol=1e-6)
    np.testing.assert_allclose(merged[..., 3, 1], (a[..., 3, 1] + a[..., 4, 1]) / 2, rtol=1e-6)
    np.testing.assert_allclose(
        merged[..., 3, 3], (a[..., 3, 3] + a[..., 3, 4] + a[..., 4, 3] + a[..., 4, 4]) / 2, rtol=1e-6
    )


def test_merge_preserves_each_rows_mass():
    a = random_attention((4, 10, 10), seed=1)
    merged = merge_pieces(a, word_spans(WORD_IDS, SPECIAL))
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=12), st.integers(0, 2**16))
def test_merge_preserves_mass_for_any_word_lengths(lengths, seed):
    t = sum(lengths)
    starts = np.cumsum([0, *lengths[:-1]])
    spans = [(int(s), int(s + n)) for s, n in zip(starts, lengths, strict=True)]
    a = random_attention((2, t, t), seed=seed)
    merged = merge_pieces(a, spans)
    assert merged.shape == (2, len(lengths), len(lengths))
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, atol=1e-5)
    # the attention a word receives from all pieces is conserved: size-weighted rows add back up
    sizes = np.array(lengths, dtype=np.float32)[:, None]
    received = np.add.reduceat(a.sum(axis=-2), starts, axis=-1)  # (2, W)
    np.testing.assert_allclose((sizes * merged).sum(axis=-2), received, atol=1e-4)


def test_dropping_special_tokens_renormalises_rows():
    a = random_attention((2, 10, 10), seed=2)
    keep = ~np.array(SPECIAL)
    dropped = drop_tokens(a, keep)
    assert dropped.shape == (2, 7, 7)
    np.testing.assert_allclose(dropped.sum(axis=-1), 1.0, atol=1e-6)
    sub = a[:, keep][:, :, keep]
    np.testing.assert_allclose(dropped, sub / sub.sum(axis=-1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("hide", [False, True])
def test_token_view_rows_match_its_matrix(merge, hide):
    a = random_attention((3, 2, 10, 10), seed=3)
    view = token_view(TOKENS, WORD_IDS, SPECIAL, merge_words=merge, hide_special=hide)
    m = view.matrix(a)
    assert m.shape == (3, 2, view.n_items, view.n_items)
    np.testing.assert_allclose(m.sum(axis=-1), 1.0, atol=1e-6)
    for item in range(view.n_items):
        np.testing.assert_allclose(view.row(a, item), m[..., item, :], atol=1e-6)
    assert view.merged == merge and view.renormalised == hide


def test_token_view_labels_and_positions():
    view = token_view(TOKENS, WORD_IDS, SPECIAL, merge_words=True, hide_special=True)
    assert view.labels == ["i", "love", "nlp", "so", "do", "i"]
    assert [view.item_of_token(i) for i in range(10)] == [None, 0, 1, 2, 2, None, 3, 4, 5, None]
    plain = token_view(TOKENS, WORD_IDS, SPECIAL)
    assert plain.labels == TOKENS
    # an input of special tokens only cannot hide them all
    only = token_view(["[CLS]", "[SEP]"], [None, None], [True, True], hide_special=True)
    assert only.labels == ["[CLS]", "[SEP]"] and not only.renormalised


def test_piece_text():
    assert [piece_text(t) for t in ["##p", "Ġthe", "▁word", "##", "plain"]] == [
        "p",
        "the",
        "word",
        "##",
        "plain",
    ]


def test_rank_heads_orders_by_weight():
    weights = np.array([[0.1, 0.7, 0.2], [0.9, 0.0, 0.3]])
    ranked = rank_heads(weights)
    assert [(r.layer, r.head) for r in ranked] == [(1, 0), (0, 1), (1, 2), (0, 2), (0, 0), (1, 1)]
    assert ranked[0].weight == pytest.approx(0.9)
    assert len(rank_heads(weights, top=2)) == 2


def test_head_stats_on_known_patterns():
    t = 6
    identity = np.eye(t, dtype=np.float32)
    previous = np.eye(t, k=-1, dtype=np.float32)
    previous[0, 0] = 1.0
    to_cls = np.zeros((t, t), dtype=np.float32)
    to_cls[:, 0] = 1.0
    attn = np.stack([identity, previous, to_cls])[None]  # (1, 3, T, T)
    special = np.zeros(t, dtype=bool)
    special[0] = special[-1] = True
    stats = head_stats(attn, special)
    assert stats["to_self"][0].tolist() == pytest.approx([1.0, 1 / t, 1 / t])
    assert stats["to_previous"][0].tolist() == pytest.approx([0.0, (t - 1) / t, 1 / t])
    assert stats["to_special"][0].tolist() == pytest.approx([2 / t, 2 / t, 1.0])
    assert stats["entropy"][0].tolist() == pytest.approx([0.0, 0.0, 0.0])
    uniform = np.full((1, 1, t, t), 1 / t, dtype=np.float32)
    assert head_stats(uniform, special)["entropy"][0, 0] == pytest.approx(np.log2(t), rel=1e-5)


def test_similarity():  # rollout moved to core/measures/flow.py, tested in tests/core/test_flow.py
    hidden = np.random.default_rng(5).standard_normal((5, 8)).astype(np.float32)
    sim = token_similarity(hidden)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-6)
    np.testing.assert_allclose(sim, sim.T, atol=1e-6)


# ---- word references ---------------------------------------------------------------------------------

# "[CLS] the cat saw the nl ##p [SEP]" merged into words
REF_WORDS = ["[CLS]", "the", "cat", "saw", "The", "nlp", "[SEP]"]
REF_SPANS = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 7), (7, 8)]


@pytest.mark.parametrize(
    ("token", "ref"),
    [(1, "the"), (2, "cat"), (4, "The#2"), (5, "nlp"), (6, "nlp~2"), (0, "[CLS]"), (7, "[SEP]")],
)
def test_word_ref_names_words_and_reads_back(token, ref):
    assert word_ref(REF_WORDS, REF_SPANS, token) == ref
    assert find_word_ref(ref, REF_WORDS, REF_SPANS) == token


def test_find_word_ref_follows_the_word_into_another_sentence():
    # "[CLS] a cat and the dog [SEP]": "the#2" is gone, "cat" moved, "the" is there once
    words = ["[CLS]", "a", "cat", "and", "the", "dog", "[SEP]"]
    spans = [(i, i + 1) for i in range(7)]
    assert find_word_ref("cat", words, spans) == 2
    assert find_word_ref("THE", words, spans) == 4  # case-insensitive
    assert find_word_ref("the#2", words, spans) is None
    assert find_word_ref("nlp~2", words, spans) is None
    assert find_word_ref("dog~2", words, spans) is None  # "dog" has one piece
    assert find_word_ref("", words, spans) is None


def test_a_word_that_looks_like_a_ref_reads_back():
    words, spans = ["c#1", "x~2", "#"], [(0, 1), (1, 2), (2, 3)]
    for token in range(3):
        assert find_word_ref(word_ref(words, spans, token), words, spans) == token


# ---- specific head ranking ------------------------------------------------------------------------------


def test_rank_heads_specific_by_hand():
    # one layer, two heads, rows: [CLS], a, b, c, [SEP]; focus a (1), target c (3)
    everywhere = np.array(
        [
            [0.2, 0.2, 0.2, 0.2, 0.2],  # [CLS]: excluded
            [0.1, 0.1, 0.1, 0.6, 0.1],  # a -> c: 0.6
            [0.1, 0.1, 0.1, 0.6, 0.1],  # b -> c: 0.6
            [0.1, 0.1, 0.1, 0.6, 0.1],  # c (the target's own row): excluded
            [0.1, 0.1, 0.1, 0.6, 0.1],  # [SEP]: excluded
        ]
    )
    specific = everywhere.copy()
    specific[1] = [0.1, 0.1, 0.1, 0.5, 0.2]  # a -> c: 0.5
    specific[2] = [0.3, 0.3, 0.3, 0.05, 0.05]  # b -> c: 0.05
    attn = np.stack([everywhere, specific])[None]  # (1, 2, 5, 5)
    exclude = [True, False, False, False, True]
    links = rank_heads_specific(attn, 1, 3, exclude)
    assert [(x.layer, x.head) for x in links] == [(0, 1), (0, 0)]
    best, flat = links
    assert best.weight == pytest.approx(0.5) and best.others == pytest.approx(0.05)
    assert best.specific == pytest.approx(0.45) and best.looking == 0 and not best.everywhere
    assert flat.weight == pytest.approx(0.6) and flat.others == pytest.approx(0.6)
    assert flat.specific == pytest.approx(0.0) and flat.looking == 1 and flat.everywhere
    # the raw ranking puts the head that looks at c from everywhere first
    assert rank_heads(attn[:, :, 1, 3])[0].head == 0


def test_rank_heads_specific_threshold_and_no_other_rows():
    # rows 2..5 give the target 0.3, 0.3, 0.05, 0.05 while the focus gives 0.5: half of them reach
    # half the focus's weight (0.25), so the head is flagged; with 0.2 they would not reach it
    attn = np.full((1, 1, 6, 6), 0.0)
    attn[0, 0, :, 1] = [0.5, 0.5, 0.3, 0.3, 0.05, 0.05]
    attn[0, 0, :, 0] = 1 - attn[0, 0, :, 1]
    flagged = rank_heads_specific(attn, 0, 1)[0]
    assert flagged.looking == pytest.approx(0.5) and flagged.everywhere
    attn[0, 0, 2:4, 1] = 0.2
    assert not rank_heads_specific(attn, 0, 1)[0].everywhere
    # small weights everywhere are not "looking": below LOOKS_AT_MIN (0.1)
    weak = np.full((1, 1, 4, 4), 0.25)
    weak[0, 0, :, 1] = [0.05, 0.05, 0.06, 0.06]
    weak[0, 0, :, 0] = 0.45 - weak[0, 0, :, 1] + 0.25
    assert not rank_heads_specific(weak, 0, 1)[0].everywhere
    # two tokens: no other rows
    pair = rank_heads_specific(np.full((2, 3, 2, 2), 0.5), 0, 1)
    assert len(pair) == 6 and all(x.others == 0 and x.specific == 0.5 and not x.everywhere for x in pair)
