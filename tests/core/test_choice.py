"""Which continuation a decoder prefers (core/measures/choice.py): each option's log-probability after
a prefix, read on the prefix's KV cache, against the same sum taken from transformers' logits of the
whole text (tiny GPT-2 and tiny Llama built here), a one-token option against next_tokens, the verdict
from the numbers, and the command line `choose`."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from core.__main__ import main
from core.measures.choice import Option, choose, log_softmax, verdict
from core.models.architectures import load_engine
from core.models.bert import TextError
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

PREFIX = "The trophy would not fit in the suitcase because it was too big. The thing that was too big was the"
OPTIONS = (" trophy", " suitcase", " big red box")


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def model_dir(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "gpt2":
        return make_tiny_gpt2(folder, n_layer=2, n_head=4, n_embd=32)
    return make_tiny_llama(folder)


def reference_logprob(model_dir, prefix_ids: list[int], option_ids: list[int]) -> float:
    """log P(option | prefix) from transformers' logits over the whole text, in float64."""
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64).eval()
    with torch.no_grad():
        logits = model(torch.tensor([prefix_ids + option_ids])).logits[0].numpy()
    logprobs = log_softmax(logits)
    n = len(prefix_ids)
    return float(sum(logprobs[n - 1 + j, t] for j, t in enumerate(option_ids)))


def test_each_option_is_the_sum_of_its_tokens_log_probabilities(model_dir):
    engine = load_engine(str(model_dir))
    prefix_tokens, options = choose(engine, PREFIX, OPTIONS)
    prefix_ids = list(engine.encode(PREFIX).ids)
    assert prefix_tokens == [engine.decode(i) for i in prefix_ids]
    assert [o.text for o in options] == list(OPTIONS)
    assert any(len(o.token_ids) > 1 for o in options)  # the cache path is exercised
    for option in options:
        assert option.token_ids == list(engine.tokenizer.encode(option.text).ids)
        assert option.tokens == [engine.decode(i) for i in option.token_ids]
        expected = reference_logprob(model_dir, prefix_ids, option.token_ids)
        assert option.logprob == pytest.approx(expected, abs=1e-4)


def test_a_one_token_option_is_the_next_token_probability(model_dir):
    engine = load_engine(str(model_dir))
    (token, prob), *_ = engine.next_tokens(PREFIX, 1)
    _, (option,) = choose(engine, PREFIX, [token])
    assert len(option.token_ids) == 1 and np.exp(option.logprob) == pytest.approx(prob, rel=1e-5)


def test_the_verdict_follows_the_numbers():
    a, b = Option(" trophy", [" trophy"], [1], -2.0), Option(" suitcase", [" suitcase"], [2], -4.0)
    assert verdict([a, b]).startswith("The model prefers 'trophy': 7.4× as probable as 'suitcase'")
    assert verdict([b, a]).startswith("The model prefers 'trophy'")
    longer = Option(" big box", [" big", " box"], [3, 4], -3.0)
    assert "differ in length" in verdict([a, longer]) and "differ" not in verdict([a, b])


def test_an_option_without_tokens_is_refused(model_dir):
    engine = load_engine(str(model_dir))
    with pytest.raises(TextError, match="has no tokens"):
        choose(engine, PREFIX, [" trophy", ""])


def test_the_command_line(capsys, model_dir):
    code = main(["choose", PREFIX, "--options", *OPTIONS, "--model", str(model_dir), "--format", "json"])
    out, err = capsys.readouterr()
    payload = json.loads(out)
    assert code == 0 and err == ""
    assert list(payload) == ["prefix_tokens", "options", "verdict"]
    assert [list(o) for o in payload["options"]] == [["text", "tokens", "logprob"]] * 3
    engine = load_engine(str(model_dir))
    expected = choose(engine, PREFIX, OPTIONS)[1]
    logprobs = [o["logprob"] for o in payload["options"]]
    assert logprobs == pytest.approx([o.logprob for o in expected], abs=1e-7)
    assert payload["verdict"] == verdict(expected)
    assert main(["choose", PREFIX, "--options", " x", "", "--model", str(model_dir)]) == 1
    assert capsys.readouterr().err.startswith("error: the option '' has no tokens")


def test_an_option_is_scored_without_the_tokens_a_tokenizer_puts_before_every_text():
    """The shipped letter model's tokenizer starts every text with <s>: an option is its own letters,
    scored from the logits after the prefix (the model's forward pass, read here directly)."""
    engine = load_engine("letters")
    prefix = "pqrstuvwxypqrstuvwx"
    assert engine.encode("y").tokens[0] == "<s>"  # what the option must not begin with
    _, (y, p) = choose(engine, prefix, (" y", "p"))
    assert (y.tokens, p.tokens) == (["y"], ["p"])
    after = log_softmax(
        engine.unembed(engine.forward(np.array(engine.encode(prefix).ids)).hidden_states[-1][-1])
    )
    assert y.logprob == pytest.approx(after[engine.tokenizer.token_to_id("y")], abs=1e-12)
    assert p.logprob == pytest.approx(after[engine.tokenizer.token_to_id("p")], abs=1e-12)
    assert y.logprob > np.log(0.9)  # a copy: the letter that followed "x" before
