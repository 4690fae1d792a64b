"""python -m core's decoder commands (nextword, generate, induction, attend, ablate, attribute) on a
GPT-2 and on a Llama with grouped-query attention, both built here, and their errors as one line on
stderr: each command's JSON equals what the engine and the measure compute (themselves checked against
transformers in test_gpt2.py, test_llama.py and test_induction.py). SmolLM2 by name: test_smollm2.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.__main__ import main
from core.measures.ablation import head_effects
from core.measures.attribution import attribution
from core.measures.induction import induction
from core.models.architectures import load_engine
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

PROMPT = "The bank approved the"
BUILDERS = {
    "gpt2": lambda folder: make_tiny_gpt2(folder, n_layer=2, n_head=4, n_embd=32, n_positions=64),
    "llama": lambda folder: make_tiny_llama(folder, layers=2, heads=4, kv_heads=2, width=32, positions=64),
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def gpt2_dir(request, tmp_path_factory):
    """A decoder's folder: a GPT-2, then a Llama (the name stays: most tests here began on GPT-2)."""
    return BUILDERS[request.param](tmp_path_factory.mktemp(f"cli_{request.param}"))


@pytest.fixture(scope="module")
def engine(gpt2_dir):
    return load_engine(str(gpt2_dir))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_nextword_is_the_engines_top_k(capsys, gpt2_dir, engine):
    code, out, err = run(capsys, "nextword", PROMPT, "--model", gpt2_dir, "--top", 3)
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert payload["tokens"] == [engine.decode(i) for i in engine.encode(PROMPT).ids]
    expected = engine.next_tokens(PROMPT, 3)
    assert [n["token"] for n in payload["next"]] == [t for t, _ in expected]
    assert [n["prob"] for n in payload["next"]] == pytest.approx([p for _, p in expected], abs=1e-8)
    assert payload["next"][0]["prob"] >= payload["next"][-1]["prob"]


def test_generate_greedy_and_sampled(capsys, gpt2_dir, engine):
    code, out, _ = run(capsys, "generate", PROMPT, "--model", gpt2_dir, "--tokens", 4)
    payload = json.loads(out)
    assert code == 0 and list(payload) == ["tokens", "generated", "steps"]
    assert payload["generated"] == engine.generate(PROMPT, 4).generated
    n_prompt = len(payload["tokens"])
    for i, step in enumerate(payload["steps"]):
        attentions = np.array(step["attentions"])
        assert attentions.shape == (2, 4, n_prompt + i)  # [layer][head][the tokens seen so far]
        np.testing.assert_allclose(attentions.sum(-1), 1.0, atol=1e-6)
        assert step["token"] == payload["generated"][i] and len(step["top"]) == 5
    argv = ("generate", PROMPT, "--model", gpt2_dir, "--tokens", 4, "--temperature", 1.5, "--seed", 7)
    sampled = json.loads(run(capsys, *argv)[1])
    assert sampled["generated"] == engine.generate(PROMPT, 4, temperature=1.5, seed=7).generated
    assert sampled == json.loads(run(capsys, *argv)[1])  # the seed reproduces it


def test_induction_is_the_measure(capsys, gpt2_dir, engine):
    code, out, _ = run(capsys, "induction", "--model", gpt2_dir, "--length", 20, "--seed", 3)
    payload = json.loads(out)
    found = induction(engine, 20, 3)
    assert code == 0 and payload["length"] == 20 and payload["seed"] == 3
    assert payload["ids"] == found.token_ids.tolist()  # the tokens it drew, both copies
    np.testing.assert_allclose(payload["scores"], found.scores, atol=1e-8)
    assert payload["loss_first"] == pytest.approx(found.loss_first) and payload[
        "loss_repeat"
    ] == pytest.approx(found.loss_repeat)


def test_attend_runs_a_decoder(capsys, gpt2_dir):
    payload = json.loads(run(capsys, "attend", PROMPT, "--model", gpt2_dir)[1])
    attentions = np.array(payload["attentions"])
    assert np.triu(attentions[0, 0], k=1).max() == 0.0  # causal


def test_ablate_on_a_decoder_is_the_measure(capsys, gpt2_dir, engine):
    code, out, err = run(capsys, "ablate", PROMPT, "--model", gpt2_dir)
    payload = json.loads(out)
    assert code == 0 and err == ""
    expected = head_effects(engine, engine.run(PROMPT))  # total variation of the next-token probabilities
    np.testing.assert_allclose(payload["effect"], expected, atol=1e-8)
    assert np.array(payload["effect"]).shape == (2, 4) and np.array(payload["effect"]).max() > 0


def test_attribute_on_a_decoder_is_the_measure(capsys, gpt2_dir, engine):
    code, out, _ = run(capsys, "attribute", PROMPT, "--model", gpt2_dir)
    payload = json.loads(out)
    found = attribution(engine, engine.run(PROMPT))
    assert code == 0 and payload["tokens"] == list(engine.run(PROMPT).tokens)
    np.testing.assert_allclose(payload["loo"], found.loo, atol=1e-8)
    np.testing.assert_allclose(payload["attention"], found.columns["attention"], atol=1e-8)


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["nextword", PROMPT], 2, "needs a decoder"),  # the bundled model is a BERT
        (["generate", "", "--model", "GPT2"], 1, "empty"),
        (["generate", PROMPT, "--model", "GPT2", "--tokens", 0], 2, "--tokens must be in 1..1024"),
        (["generate", PROMPT, "--model", "GPT2", "--temperature", 0], 2, "--temperature must be above 0"),
        (["generate", "the bank " * 30, "--model", "GPT2", "--tokens", 20], 1, "generate at most"),
        (["induction", "--model", "GPT2", "--length", 40], 1, "context"),
        (["nextword", PROMPT, "--model", "GPT2", "--top", 0], 2, "--top must be in 1..100"),
        (["fill", "The [MASK] sat.", "--model", "GPT2"], 2, "masked-LM head"),
        (["attend", PROMPT, "--model", "GPT2", "--pair", "x"], 2, "a decoder reads one text"),
    ],
)
def test_errors_are_one_line(capsys, gpt2_dir, argv, code, says):
    argv = [gpt2_dir if a == "GPT2" else a for a in argv]
    got, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert got == code and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert out == ""
