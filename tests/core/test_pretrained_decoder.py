"""The torch reference engine for decoders (core/models/pretrained_decoder.py) against the NumPy
GPT-2 on checkpoints built here: the parity badge's two numbers (compare_results), the logits, the
same ablation, the loader's choice by architecture, and `attend --engine torch` on a decoder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.__main__ import main
from core.models.architectures import is_decoder, load_engine, load_torch_engine
from core.models.bert import TextError
from core.models.pretrained import PretrainedModel
from core.models.pretrained_decoder import PretrainedDecoder
from core.models.result import compare_results
from tests.tiny_bert import make_tiny_bert
from tests.tiny_gpt2 import make_tiny_gpt2

TEXT = "The trophy would not fit in the suitcase because it was too large."


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("torch_gpt2"), n_layer=3, n_head=4, n_embd=32)


@pytest.fixture(scope="module")
def engines(gpt2_dir):
    return load_engine(str(gpt2_dir)), load_torch_engine(str(gpt2_dir))


def test_both_engines_agree_within_1e_5(engines):
    numpy_engine, torch_engine = engines
    assert (
        isinstance(torch_engine, PretrainedDecoder) and is_decoder(torch_engine) and is_decoder(numpy_engine)
    )
    ours, theirs = numpy_engine.run(TEXT), torch_engine.run(TEXT)
    gaps = compare_results(ours, theirs)
    assert gaps["attentions"] < 1e-5 and gaps["hidden_states"] < 1e-5, gaps
    assert np.abs(ours.next_token_logits - theirs.next_token_logits).max() < 1e-5
    assert theirs.engine == "torch" and ours.tokens == theirs.tokens


def test_the_same_ablation_in_both(engines):
    numpy_engine, torch_engine = engines
    cut = {(0, 2), (2, 1)}
    ours, theirs = numpy_engine.run(TEXT, ablate=cut), torch_engine.run(TEXT, ablate=cut)
    assert compare_results(ours, theirs)["hidden_states"] < 1e-5
    assert np.abs(ours.hidden_states - numpy_engine.run(TEXT).hidden_states).max() > 1e-3  # it did cut
    assert theirs.meta["ablated"] == sorted(cut)


def test_bad_text_is_refused_as_by_the_numpy_engine(engines):
    for bad in ("", "  ", "\ud800"):
        with pytest.raises(TextError):
            engines[1].run(bad)


def test_an_encoder_still_gets_the_encoder_reference(tmp_path):
    bert = make_tiny_bert(tmp_path / "bert", hidden_size=16, num_heads=2, num_layers=1)
    engine = load_torch_engine(str(bert))
    assert isinstance(engine, PretrainedModel) and not is_decoder(engine)


def test_attend_with_the_torch_engine_on_a_decoder(capsys, gpt2_dir, engines):
    assert main(["attend", TEXT, "--model", str(gpt2_dir), "--engine", "torch"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["engine"] == "torch"
    np.testing.assert_allclose(payload["attentions"], engines[0].run(TEXT).attentions, atol=1e-5)
