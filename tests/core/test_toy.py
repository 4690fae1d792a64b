"""The learn page's toy model: tokenizer, seeded embeddings and weights, settings, the step trace.

The trace is checked against the core's own multi_head_attention (an independent path through the
same math) and against invariants: rows of probs sum to 1, masked entries are 0, permuting the
tokens permutes every output when there is no positional encoding, and scaling identities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.lesson.attention import MASK_KINDS, build_mask, multi_head_attention
from core.lesson.layers import layer_norm
from core.lesson.toy import (
    MAX_TOKENS,
    ToySettings,
    clean_text,
    embed,
    positional_encoding,
    softmax_saturation,
    tokenize,
    toy_weights,
    trace,
)
from core.lesson.trace import STEP_OF
from core.lesson.trace import from_inputs as trace_from_inputs
from core.lesson.trace import from_projections as trace_from_projections

SENTENCE = ("The", "cat", "sat", "on", "the", "mat")

# ---- tokenizer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat", "."]),
        ("I don't love NLP!!", ["I", "don't", "love", "NLP", "!", "!"]),
        ("l’homme", ["l’homme"]),
        ("3.14", ["3", ".", "14"]),
        ("<script>alert(1)</script>", ["<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]),
        ("**bold** $x$", ["*", "*", "bold", "*", "*", "$", "x", "$"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("שלום עולם", ["שלום", "עולם"]),
        ("日本語", ["日本語"]),
    ],
)
def test_tokenize_words_and_punctuation(text, tokens):
    assert list(tokenize(text).tokens) == tokens


def test_emoji_sequences_stay_whole():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
    thumbs = "\U0001f44d\U0001f3fd"  # thumbs up, medium skin tone
    flag = "\U0001f1eb\U0001f1f7"  # regional indicators F R
    keycap = "1\ufe0f\u20e3"
    tok = tokenize(f"{family} {thumbs}{flag} {keycap} ok")
    assert list(tok.tokens) == [family, thumbs, flag, keycap, "ok"]


def test_accents_are_one_letter_whatever_the_encoding():
    composed, decomposed = "café", "cafe\u0301"
    assert tokenize(decomposed).tokens == tokenize(composed).tokens == ("café",)


def test_invisible_direction_controls_are_dropped():
    assert tokenize("\u202eevil\u202c txt").tokens == ("evil", "txt")


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", None, "\u200b\u200b"])
def test_empty_text_gives_no_tokens(text):
    tok = tokenize(text)
    assert tok.tokens == () and tok.total == 0 and not tok.truncated


def test_long_text_is_cut_at_64_and_says_so():
    tok = tokenize(" ".join(f"w{i}" for i in range(100)))
    assert len(tok.tokens) == MAX_TOKENS == 64
    assert tok.total == 100 and tok.truncated
    assert tok.tokens[-1] == "w63"


def test_lone_surrogates_become_replacement_characters():
    text = clean_text("a\ud800b")
    assert text == "a\ufffdb"
    text.encode("utf-8")  # would raise if a surrogate were left


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_tokenize_never_raises_and_tokens_are_clean(text):
    tok = tokenize(text)
    assert len(tok.tokens) <= MAX_TOKENS
    for t in tok.tokens:
        assert t and not any(c.isspace() for c in t)
        t.encode("utf-8")  # sendable to the browser


# ---- embeddings, positions, weights ---------------------------------------------------------


def test_same_word_same_vector_wherever_it_stands():
    x = embed(SENTENCE, 8, seed=0)
    np.testing.assert_array_equal(x[0], x[4])  # "The" and "the": case-folded
    np.testing.assert_array_equal(embed(("mat",), 8, 0)[0], x[5])  # position does not matter
    assert not np.allclose(x[1], x[2])
    np.testing.assert_array_equal(x, embed(SENTENCE, 8, seed=0))  # deterministic
    assert not np.allclose(x, embed(SENTENCE, 8, seed=1))


def test_sinusoidal_positional_encoding():
    pe = positional_encoding(5, 6)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(pe[:, 0], np.sin(np.arange(5)))
    np.testing.assert_allclose(pe[3, 3], math.cos(3 / 10000 ** (2 / 6)))
    assert positional_encoding(4, 7).shape == (4, 7)  # odd widths work too


def test_weights_are_seeded_and_shaped_for_x_at_w():
    s = ToySettings(d_model=6, n_heads=2, d_k=5, seed=3)
    w = toy_weights(s)
    assert w.w_q.shape == w.w_k.shape == w.w_v.shape == (6, 10)
    assert w.w_o.shape == (10, 6)
    np.testing.assert_array_equal(w.w_q, toy_weights(s).w_q)
    assert not np.allclose(w.w_q, w.w_k)


# ---- settings -------------------------------------------------------------------------------


def test_indivisible_d_model_is_explained():
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by n_heads \(3\)") as err:
        ToySettings(d_model=10, n_heads=3)
    assert "9 or 12" in str(err.value)  # says what to choose


def test_explicit_d_k_lifts_the_divisibility_rule():
    s = ToySettings(d_model=10, n_heads=3, d_k=4)
    assert s.head_dim == 4
    assert ToySettings(d_model=12, n_heads=3).head_dim == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mask": "diagonal"}, "unknown mask kind"),
        ({"seed": -1}, "seed must be between"),
        ({"d_model": 0}, "d_model must be between"),
        ({"n_heads": 0}, "n_heads must be between"),
        ({"d_k": 0}, "d_k must be"),
        ({"mask": "strided", "window": 0}, "stride must be 1 or more"),
        ({"mask": "local", "window": -1}, "window must be 0 or more"),
        ({"d_model": 2.5}, "whole number"),
    ],
)
def test_bad_settings_fail_early_with_a_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ToySettings(**kwargs)


# ---- the trace ------------------------------------------------------------------------------


def test_trace_keeps_every_step_by_name_with_its_shape():
    s = ToySettings(d_model=8, n_heads=2, positional=True)
    tr = trace(SENTENCE, s)
    optional = {"masked", "b_q", "b_k", "b_v", "b_o", "ln_gamma", "ln_beta"}  # a mask, a real model's
    assert set(STEP_OF) - optional | {"embeddings", "positions"} <= set(tr.arrays)
    t, d, h, dk = 6, 8, 2, 4
    assert tr["x"].shape == (t, d)
    for name in ("query", "key", "value", "context"):
        assert tr[name].shape == (h, t, dk)
    for name in ("scores", "scaled", "probs"):
        assert tr[name].shape == (h, t, t)
    assert tr["concat"].shape == (t, h * dk)
    for name in ("output", "residual", "normed"):
        assert tr[name].shape == (t, d)
    np.testing.assert_allclose(tr["x"], tr["embeddings"] + tr["positions"])


def test_trace_steps_follow_the_formulas():
    tr = trace(SENTENCE, ToySettings(d_model=8, n_heads=2))
    q, k, v = tr["query"], tr["key"], tr["value"]
    np.testing.assert_allclose(tr["scores"], q @ np.swapaxes(k, -1, -2))
    np.testing.assert_allclose(tr["scaled"], tr["scores"] / 2.0)  # sqrt(d_k = 4)
    e = np.exp(tr["scaled"] - tr["scaled"].max(-1, keepdims=True))
    np.testing.assert_allclose(tr["probs"], e / e.sum(-1, keepdims=True))
    np.testing.assert_allclose(tr["context"], tr["probs"] @ v)
    np.testing.assert_allclose(tr["concat"], np.concatenate(list(tr["context"]), axis=-1))
    np.testing.assert_allclose(tr["output"], tr["concat"] @ tr["w_o"])
    np.testing.assert_allclose(tr["residual"], tr["x"] + tr["output"])
    np.testing.assert_allclose(tr["normed"], layer_norm(tr["residual"], eps=1e-5))
    np.testing.assert_allclose(tr["normed"].mean(-1), 0, atol=1e-12)


def test_trace_matches_the_core_multi_head_attention():
    s = ToySettings(d_model=12, n_heads=3, seed=5, mask="causal")
    tr = trace(SENTENCE, s)
    mha = multi_head_attention(
        tr["x"], tr["x"], tr["x"], tr["w_q"], tr["w_k"], tr["w_v"], tr["w_o"], 3, mask=build_mask("causal", 6)
    )
    for name in ("query", "scores", "scaled", "masked", "probs", "context", "output"):
        np.testing.assert_allclose(tr[name], mha[name], atol=1e-12)


def test_scaling_off_passes_the_scores_through():
    tr = trace(SENTENCE, ToySettings(scale=False))
    np.testing.assert_array_equal(tr["scaled"], tr["scores"])


@pytest.mark.parametrize("kind", [k for k in MASK_KINDS if k != "none"])
def test_masked_entries_get_zero_weight(kind):
    tr = trace(SENTENCE, ToySettings(mask=kind, window=2))
    allowed = build_mask(kind, 6, 2)
    np.testing.assert_array_equal(tr.mask, allowed)
    assert np.all(tr["probs"][:, ~allowed] == 0.0)
    np.testing.assert_allclose(tr["probs"].sum(-1), 1.0)


def test_trace_from_inputs_reproduces_the_seeded_trace():
    s = ToySettings(d_model=8, n_heads=2, seed=7)
    tr = trace(SENTENCE, s)
    w = toy_weights(s)
    again = trace_from_inputs(tr["x"], w.w_q, w.w_k, w.w_v, w.w_o, tokens=SENTENCE, n_heads=2)
    for name in ("scores", "probs", "context", "normed"):
        np.testing.assert_array_equal(again[name], tr[name])


def test_trace_from_projections_allows_fewer_queries_than_keys():
    tr = trace_from_projections(
        [[2.0]],
        [[1.0], [2.0], [3.0]],
        [[2.0], [4.0], [6.0]],
        query_tokens=["love"],
        key_tokens=["I", "love", "NLP"],
    )
    assert tr["probs"].shape == (1, 1, 3)
    assert "output" not in tr  # no W^O given: the trace stops at the weighted sum
    assert tr.given == ("query", "key", "value")


def _inputs(t: int = 2, w_rows: int = 4, w_cols: int = 2, n_heads: int = 1):
    w = np.ones((w_rows, w_cols))
    return trace_from_inputs(np.ones((2, 4)), w, w, w, None, tokens="abcdef"[:t], n_heads=n_heads)


def _projections(q=1.0, x=None, w_o=None):
    one = [[1.0]]
    return trace_from_projections([[q]], one, one, query_tokens="a", key_tokens="a", x=x, w_o=w_o)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: _inputs(w_rows=3), "W_Q must have d_model = 4 rows"),
        (lambda: _inputs(t=3), "X has 2 rows but there are 3 tokens"),
        (lambda: _inputs(w_cols=3, n_heads=2), "cannot share equally"),
        (lambda: _projections(q=np.nan), "not a finite number"),
        (lambda: _projections(x=np.ones((1, 3)), w_o=np.ones((1, 2))), "shapes must match"),
        (lambda: trace((), ToySettings()), "no tokens"),
    ],
)
def test_bad_shapes_are_explained(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- properties (hypothesis) ----------------------------------------------------------------

WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "a", "dog", "ran", ".", ",", "it", "bank"])
SETTINGS = st.builds(
    ToySettings,
    d_model=st.sampled_from([4, 6, 8, 12]),
    n_heads=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**31 - 1),
    scale=st.booleans(),
    mask=st.sampled_from(MASK_KINDS),
    window=st.integers(1, 3),
    positional=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=10), SETTINGS)
def test_rows_sum_to_one_and_masked_entries_are_zero(tokens, s):
    tr = trace(tokens, s)
    np.testing.assert_allclose(tr["probs"].sum(-1), 1.0, rtol=0, atol=1e-12)
    assert np.all(tr["probs"] >= 0)
    if tr.mask is not None:
        assert np.all(tr["probs"][:, ~tr.mask] == 0.0)
    assert np.isfinite(tr["normed"]).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=2, max_size=8), st.randoms(use_true_random=False), st.integers(0, 2**31 - 1))
def test_permuting_tokens_permutes_every_output_without_positions(tokens, rnd, seed):
    s = ToySettings(d_model=8, n_heads=2, seed=seed, positional=False)
    perm = list(range(len(tokens)))
    rnd.shuffle(perm)
    a = trace(tokens, s)
    b = trace([tokens[i] for i in perm], s)
    for name in ("query", "context"):
        np.testing.assert_allclose(b[name], a[name][:, perm], atol=1e-12)
    np.testing.assert_allclose(b["probs"], a["probs"][:, perm][:, :, perm], atol=1e-12)
    np.testing.assert_allclose(b["normed"], a["normed"][perm], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.integers(0, 2**31 - 1), st.floats(0.25, 4.0))
def test_scaling_identities(tokens, seed, alpha):
    s = ToySettings(d_model=8, n_heads=2, seed=seed)
    w = toy_weights(s)
    x = trace(tokens, s)["x"]
    on = trace_from_inputs(x, w.w_q, w.w_k, w.w_v, w.w_o, tokens=tokens, n_heads=2, scale=True)
    # dividing W^Q by sqrt(d_k) and switching scaling off is the same layer
    off = trace_from_inputs(x, w.w_q / 2.0, w.w_k, w.w_v, w.w_o, tokens=tokens, n_heads=2, scale=False)
    np.testing.assert_allclose(off["probs"], on["probs"], atol=1e-12)
    # scores depend on W^Q and W^K only through their product: alpha and 1/alpha cancel
    moved = trace_from_inputs(x, w.w_q * alpha, w.w_k / alpha, w.w_v, w.w_o, tokens=tokens, n_heads=2)
    np.testing.assert_allclose(moved["probs"], on["probs"], atol=1e-10)


# ---- saturation -----------------------------------------------------------------------------


def test_unscaled_softmax_saturates_and_scaled_does_not():
    c = softmax_saturation(seed=0)
    assert c.d_k[0] == 1 and c.d_k[-1] == 512
    np.testing.assert_allclose(c.max_weight_scaled[0], c.max_weight_unscaled[0])  # sqrt(1) = 1
    assert c.max_weight_unscaled[-1] > 0.9  # nearly all weight on one key
    assert c.entropy_unscaled[-1] < 0.5  # bits; 3 would be an even spread over 8 keys
    assert np.all(np.abs(c.max_weight_scaled - c.max_weight_scaled[0]) < 0.1)  # flat
    assert np.all(c.entropy_scaled > 2.3)
    assert np.all(np.diff(c.max_weight_unscaled) > 0)  # grows with d_k
    np.testing.assert_array_equal(c.max_weight_unscaled, softmax_saturation(seed=0).max_weight_unscaled)
