"""python -m core nextword, generate and induction on a GPT-2 built here, attend on a decoder, and
their errors as one line on stderr: each command's JSON equals what the engine and the measure
compute (themselves checked against transformers in test_gpt2.py and test_induction.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.__main__ import main
from core.measures.induction import induction
from core.models.gpt2 import GPT2Numpy
from tests.tiny_gpt2 import make_tiny_gpt2

PROMPT = "The bank approved the"


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("cli_gpt2"), n_layer=2, n_head=4, n_embd=32, n_positions=64)


@pytest.fixture(scope="module")
def engine(gpt2_dir):
    return GPT2Numpy.from_pretrained(gpt2_dir)


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
        (["ablate", PROMPT, "--model", "GPT2"], 2, "runs on BERT encoders"),
        (["attend", PROMPT, "--model", "GPT2", "--pair", "x"], 2, "a decoder reads one text"),
    ],
)
def test_errors_are_one_line(capsys, gpt2_dir, argv, code, says):
    if "bundled" in says or (argv[0] == "nextword" and "--model" not in argv):
        pass
    argv = [gpt2_dir if a == "GPT2" else a for a in argv]
    got, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert got == code and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert out == ""
