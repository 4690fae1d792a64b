"""python -m core generate with --top-k and --top-p: each step's `kept` is the distribution the
engine drew from (core/models/sampling.py, itself checked against transformers in
test_sampling.py), a seed repeats the text, and bad values exit 2 with one line naming the flag."""

from __future__ import annotations

import json

import pytest

from core.__main__ import main
from core.models.architectures import load_engine
from tests.tiny_gpt2 import make_tiny_gpt2

PROMPT = "The bank approved the"


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("cli_sampling"), n_layer=1, n_head=2, n_embd=16)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_kept_is_the_distribution_drawn_from_and_the_seed_repeats_it(capsys, gpt2_dir):
    engine = load_engine(str(gpt2_dir))
    argv = ("generate", PROMPT, "--model", gpt2_dir, "--tokens", 4, "--temperature", 0.8)
    argv += ("--top-k", 12, "--top-p", 0.7, "--seed", 5)
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    payload = json.loads(out)
    found = engine.generate(PROMPT, 4, temperature=0.8, top_k=12, top_p=0.7, seed=5)
    assert payload["generated"] == found.generated
    for step, theirs in zip(payload["steps"], found.steps, strict=True):
        assert [k["token"] for k in step["kept"]] == [t for t, _p in theirs.kept]
        assert [k["prob"] for k in step["kept"]] == pytest.approx([p for _t, p in theirs.kept], abs=1e-8)
        assert step["n_kept"] == len(step["kept"]) <= 12
        assert sum(k["prob"] for k in step["kept"]) == pytest.approx(1.0, abs=1e-6)
    assert json.loads(run(capsys, *argv)[1]) == payload
    greedy = json.loads(run(capsys, "generate", PROMPT, "--model", gpt2_dir, "--tokens", 2)[1])
    for step in greedy["steps"]:  # greedy: all on the likeliest token
        assert step["kept"] == [{"token": step["token"], "prob": 1.0}] and step["n_kept"] == 1


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--temperature", 1, "--top-k", -1), "--top-k must be a whole number, 0 (off) or more, got -1"),
        (("--temperature", 1, "--top-p", 0), "--top-p must be above 0 and at most 1 (1: off), got 0"),
        (("--temperature", 1, "--top-p", 1.5), "--top-p must be above 0 and at most 1"),
        (("--temperature", 0), "--temperature must be above 0"),
        (("--top-k", 5), "give --temperature T to sample"),
        (("--temperature", 1, "--top-k", "many"), "argument --top-k: invalid int value"),
    ],
)
def test_bad_values_exit_2_naming_the_flag(capsys, gpt2_dir, flags, said):
    code, out, err = run(capsys, "generate", PROMPT, "--model", gpt2_dir, *flags)
    assert code == 2 and out == "" and err.startswith("error: ") and said in err and err.count("\n") == 1
