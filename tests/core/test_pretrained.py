"""The reference engine: tiny random BERTs built on disk (no download) and the bundled model, loaded
through the same code the page uses; plus every refusal the page turns into a message."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from core.models.errors import ModelFilesError, ModelInputError, ModelNotFoundError
from core.models.pretrained import (
    NoAttentionError,
    NotAnEncoderError,
    PretrainedModel,
    check_encoder_config,
    load_pretrained,
)
from tests.conftest import ROOT
from tests.tiny_bert import make_tiny_bert

SENTENCE = "The trophy wouldn't fit in the suitcase because it was too large."


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), hidden_size=24, num_heads=3, num_layers=2)


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    return load_pretrained(str(tiny_dir))


def assert_valid(result, n_layers, n_heads, hidden):
    t = result.n_tokens
    assert result.attentions.shape == (n_layers, n_heads, t, t)
    assert result.hidden_states.shape == (n_layers + 1, t, hidden)
    assert result.attentions.dtype == np.float32 and result.hidden_states.dtype == np.float32
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.special_mask[0] and result.special_mask[-1] and not result.special_mask[1:-1].any()
    assert result.word_ids[0] is None and result.word_ids[-1] is None
    assert result.engine == "torch"


def test_tiny_bert_shapes_and_rows(tiny):
    result = tiny.run(SENTENCE)
    assert_valid(result, 2, 3, 24)
    assert not result.truncated
    assert (tiny.n_layers, tiny.n_heads, tiny.max_tokens) == (2, 3, 512)


def test_tokens_round_trip(tiny, tiny_dir):
    from tokenizers import BertWordPieceTokenizer

    # an independent WordPiece tokenizer built from the same vocabulary
    reference = BertWordPieceTokenizer(str(tiny_dir / "vocab.txt"), lowercase=True)
    result = tiny.run(SENTENCE)
    assert result.tokens == reference.encode(SENTENCE).tokens
    assert "[UNK]" not in result.tokens
    words = "".join(t.removeprefix("##") for t in result.tokens[1:-1])
    assert words == SENTENCE.lower().replace(" ", "")


def test_matches_a_direct_transformers_forward(tiny, tiny_dir):
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(tiny_dir, attn_implementation="eager").eval()
    result = tiny.run("i love nlp")
    ids = torch.tensor([tiny.tokenizer.convert_tokens_to_ids(result.tokens)])
    with torch.inference_mode():
        out = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
    expected = np.stack([a[0].numpy() for a in out.attentions])
    np.testing.assert_allclose(result.attentions, expected, atol=1e-6)
    np.testing.assert_allclose(result.hidden_states[-1], out.last_hidden_state[0].numpy(), atol=1e-5)


def test_no_padding_and_truncation_at_the_models_limit(tiny):
    short = tiny.run("the cat sat")
    assert short.n_tokens == 5  # no padding to a fixed length
    long = tiny.run("the cat sat on the mat . " * 100)  # 700 words
    assert long.n_tokens == 512 and long.truncated
    assert long.meta["n_tokens_input"] == 702
    assert long.tokens[-1] == "[SEP]"
    np.testing.assert_allclose(long.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_truncation_follows_the_position_table(tmp_path):
    small = load_pretrained(str(make_tiny_bert(tmp_path / "short", max_position_embeddings=64, num_layers=1)))
    assert small.max_tokens == 64
    result = small.run("word " * 100)
    assert result.n_tokens == 64 and result.truncated


def test_sentence_pairs_get_type_ids_and_distinct_words(tiny):
    result = tiny.run("i love nlps", "it was small")
    assert result.tokens == ["[CLS]", "i", "love", "nlp", "##s", "[SEP]", "it", "was", "small", "[SEP]"]
    assert result.token_type_ids.tolist() == [0] * 6 + [1] * 4
    assert result.word_ids == [None, 0, 1, 2, 2, None, 3, 4, 5, None]


def test_concurrent_sessions_share_one_model(tiny):
    """Fast tokenizers raise "Already borrowed" when used from two threads; the lock prevents it."""
    expected = tiny.run(SENTENCE).attentions
    errors, same = [], []

    def worker():
        try:
            for _ in range(5):
                same.append(np.array_equal(tiny.run(SENTENCE).attentions, expected))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and all(same) and len(same) == 20


def test_decoders_are_refused_before_weights_are_read(tmp_path):
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_head=2, n_embd=8).save_pretrained(tmp_path)  # config only: no weights
    with pytest.raises(NotAnEncoderError, match="not an encoder"):
        load_pretrained(str(tmp_path))


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"model_type": "t5", "is_encoder_decoder": True}, "encoder-decoder"),
        ({"model_type": "bert", "is_decoder": True}, "not an encoder"),
        ({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}, "LlamaForCausalLM"),
        ({"architectures": ["Mystery"]}, "model_type"),
    ],
)
def test_encoder_check(config, says):
    with pytest.raises((NotAnEncoderError, ModelFilesError), match=says):
        check_encoder_config(config)


@pytest.mark.parametrize("config", [{"model_type": t} for t in ("bert", "roberta", "distilbert", "electra")])
def test_encoders_pass(config):
    check_encoder_config(config)


def test_a_model_without_attention_weights_is_refused(tiny_dir):
    from transformers import AutoModel, AutoTokenizer

    sdpa = AutoModel.from_pretrained(tiny_dir, attn_implementation="sdpa").eval()
    with pytest.raises(NoAttentionError, match="no attention weights"):
        PretrainedModel(sdpa, AutoTokenizer.from_pretrained(tiny_dir), "sdpa model")


def test_pickle_only_folder_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04")
    with pytest.raises(ModelFilesError, match="safetensors"):
        load_pretrained(str(tmp_path))


@pytest.mark.parametrize(
    ("choice", "error"),
    [
        ("nobody-here/no-such-model", ModelNotFoundError),  # offline here: cannot reach the Hub
        ("../secrets", ModelInputError),
        ("https://huggingface.co/bert-base-uncased", ModelInputError),
        ("/no/such/folder", ModelInputError),
    ],
)
def test_bad_choices_raise_model_errors(choice, error):
    with pytest.raises(error):
        load_pretrained(choice)


def test_importing_core_does_not_import_torch():
    code = (
        "import sys, core, core.measures.analysis, core.models.registry, core.models.pretrained; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def bundled():
    return load_pretrained("bundled")


@pytest.mark.slow
def test_bundled_model_offline(bundled):
    result = bundled.run(SENTENCE)
    assert_valid(result, 6, 12, 384)
    assert result.tokens[:4] == ["[CLS]", "the", "trophy", "wouldn"]
    assert result.model.startswith("all-MiniLM-L6-v2")


@pytest.mark.slow
def test_bundled_tokenizer_neither_pads_nor_stops_at_128(bundled):
    assert bundled.run("hello").n_tokens == 3
    result = bundled.run("word " * 300)
    assert result.n_tokens == 302 and not result.truncated
    longer = bundled.run("word " * 600)
    assert longer.n_tokens == 512 and longer.truncated


# ---- layer_weights: each head's projections, for the norms and the neuron view ----------------------


def test_layer_weights_reproduce_the_layers_query_key_and_value(tiny, tiny_dir):
    """x @ W + b with the returned weights equals the model's own Linear layers on the layer input,
    and the NumPy engine reads the same numbers from the same checkpoint."""
    import torch

    from core.models.bert import BertNumpy

    result = tiny.run("the cat sat")
    numpy_engine = BertNumpy.from_pretrained(tiny_dir)
    for layer in range(tiny.n_layers):
        w = tiny.layer_weights(layer)
        assert (w.n_heads, w.d_k) == (3, 8)
        x = result.hidden_states[layer]  # (T, D): the layer's input
        attention = tiny.model.encoder.layer[layer].attention
        with torch.no_grad():
            for ours, linear in (
                ("q", attention.self.query),
                ("k", attention.self.key),
                ("v", attention.self.value),
            ):
                expected = linear(torch.from_numpy(x)).numpy()
                got = x @ getattr(w, f"w_{ours}") + getattr(w, f"b_{ours}")
                np.testing.assert_allclose(got, expected, atol=1e-5)
        mine = numpy_engine.layer_weights(layer)
        for name in ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"):
            np.testing.assert_array_equal(getattr(mine, name), getattr(w, name))
    with pytest.raises(ValueError, match=r"0\.\.1"):
        tiny.layer_weights(2)


def test_layer_weights_of_distilbert_and_an_unknown_layout(tmp_path, tiny):
    """DistilBERT names its projections q_lin/k_lin/v_lin/out_lin; a layout the engine does not know
    raises a ModelError with a message for the page."""
    import torch
    from transformers import DistilBertConfig, DistilBertModel

    from core.models.errors import ModelError
    from core.models.pretrained import PretrainedModel

    config = DistilBertConfig(
        vocab_size=len(tiny.tokenizer),
        dim=16,
        n_heads=2,
        n_layers=1,
        hidden_dim=20,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    distil = PretrainedModel(DistilBertModel(config).eval(), tiny.tokenizer, "tiny distilbert")
    w = distil.layer_weights(0)
    lin = distil.model.transformer.layer[0].attention.out_lin
    np.testing.assert_array_equal(w.w_o, lin.weight.detach().numpy().T)
    assert (w.n_heads, w.d_k, w.w_q.shape) == (2, 8, (16, 16))

    class Unknown:
        n_layers, n_heads, name = 1, 2, "odd model"
        model = torch.nn.Module()

    with pytest.raises(ModelError, match="not laid out like BERT"):
        PretrainedModel.layer_weights(Unknown(), 0)
