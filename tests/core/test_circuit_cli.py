"""`python -m core circuit` (core/circuit_cli.py): the JSON with its record, the steps on stderr, and
one-line errors for a wrong command line, a BERT, and a tokenizer without the task's names."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from core.__main__ import main
from core.measures.circuit import CLASSES
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_ioi import make_ioi_llama

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(make_ioi_llama(tmp_path_factory.mktemp("circuit-cli"), layers=2, heads=4, kv_heads=2))


def test_the_command_writes_the_circuit_and_its_record(model, tmp_path, capsys):
    out = tmp_path / "circuit.json"
    argv = ["circuit", "--model", model, "--task", "ioi", "--prompts", "2", "--seed", "3"]
    assert main([*argv, "--format", "json", "--out", str(out)]) == 0
    found = json.loads(out.read_text())
    assert found["task"] == "ioi" and len(found["prompts"]) == 2 and tuple(found["classes"]) == CLASSES
    assert len(found["direct"]) == 2 and all(len(row) == 4 for row in found["direct"])
    record = found["record"]
    assert (
        record["command"]
        == f"python -m core circuit --model {model} --task ioi --prompts 2 --seed 3 --format json"
    )
    assert (record["seed"], record["prompts"]) == (3, 2) and record["seconds"] >= 0
    assert {"commit", "version", "date"} <= set(record) and record["date"].endswith("Z")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    assert record["version"] == pyproject["project"]["version"]
    err = capsys.readouterr().err
    assert "circuit: step 1/6" in err and "circuit: step 6/6" in err and "error" not in err


def test_the_same_seed_gives_the_same_circuit(model, capsys):
    argv = ["circuit", "--model", model, "--prompts", "2", "--seed", "1"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    first.pop("record"), again.pop("record")
    assert first == again


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["--prompts", "0"], 1, "--prompts must be in 1..64"),
        (["--prompts", "65"], 1, "--prompts must be in 1..64"),
        (["--task", "sva"], 2, "invalid choice"),
        (["--prompts", "two"], 2, "invalid int value"),
    ],
)
def test_a_wrong_command_line_is_one_line(model, capsys, argv, status, message):
    assert main(["circuit", "--model", model, *argv]) == status
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and "\n" not in err


def test_a_bert_or_a_tokenizer_without_the_names_is_one_line(tmp_path, capsys):
    plain = make_tiny_gpt2(tmp_path / "plain", n_layer=1, n_head=2, n_embd=16)  # its tokenizer: no names
    capsys.readouterr()
    assert main(["circuit", "--model", "bundled", "--prompts", "1"]) == 1
    assert "needs a decoder" in capsys.readouterr().err
    assert main(["circuit", "--model", str(plain), "--prompts", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "single tokens" in err and "\n" not in err
