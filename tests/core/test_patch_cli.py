"""python -m core patch: its JSON holds what core.measures.patching computes (heads at every position
or at one, the residual grid; a decoder with and without options, the bundled BERT's pronoun test),
and its errors are one line on stderr."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.__main__ import main
from core.measures.patching import (
    next_token_shift,
    option_metric,
    patch_heads,
    patch_residual,
    pronoun_metric,
)
from core.models.architectures import load_engine
from tests.tiny_gpt2 import make_tiny_gpt2

CLEAN = "The trophy would not fit in the suitcase because it was too large."
CORRUPT = "The trophy would not fit in the bank because it was too large."
KEYS = ["model", "metric", "tokens_clean", "tokens_corrupt", "metric_clean", "metric_corrupt", "restored"]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("patch_cli"), n_layer=2, n_head=4, n_embd=32)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_heads_json_is_the_measure_with_options(capsys, gpt2_dir):
    argv = ["patch", CLEAN, CORRUPT, "--model", str(gpt2_dir), "--options", " trophy", " suitcase"]
    code, out, err = run(capsys, *argv, "--position", "7")
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert list(payload) == KEYS
    engine = load_engine(str(gpt2_dir))
    clean, corrupt = engine.encode(CLEAN).ids, engine.encode(CORRUPT).ids
    found = patch_heads(engine, clean, corrupt, option_metric(engine, [" trophy", " suitcase"])[0], 7)
    assert payload["tokens_clean"] == [engine.decode(i) for i in clean]
    assert payload["tokens_corrupt"][7] == " bank" and payload["tokens_clean"][7] == " suitcase"
    assert payload["metric_clean"] == pytest.approx(found.metric_clean, abs=1e-7)
    assert payload["metric_corrupt"] == pytest.approx(found.metric_corrupt, abs=1e-7)
    np.testing.assert_allclose(payload["restored"], found.restored, atol=1e-7)
    assert np.asarray(payload["restored"]).shape == (2, 4)  # [layer][head]
    assert "log p(' trophy') - log p(' suitcase')" in payload["metric"]


def test_residual_json_without_options_is_the_distribution_shift(capsys, gpt2_dir):
    code, out, _ = run(capsys, "patch", CLEAN, CORRUPT, "--model", str(gpt2_dir), "--what", "residual")
    assert code == 0
    payload = json.loads(out)
    engine = load_engine(str(gpt2_dir))
    clean, corrupt = engine.encode(CLEAN).ids, engine.encode(CORRUPT).ids
    found = patch_residual(engine, clean, corrupt, next_token_shift(engine, engine.hidden_states(clean)))
    assert payload["metric_clean"] == 0.0 and payload["metric"].startswith("total variation")
    np.testing.assert_allclose(payload["restored"], found.restored, atol=1e-7)
    assert np.asarray(payload["restored"]).shape == (2, len(clean))  # [layer][position]
    # the corrupt embedding at the one token that differs: all of the shift, to float32 rounding
    assert payload["restored"][0][7] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_bert_json_is_the_pronoun_test(capsys):
    clean, corrupt = (
        "The trophy did not fit in the suitcase: it was too big.",
        "The trophy did not fit in the suitcase: it was too small.",
    )
    argv = ["patch", clean, corrupt, "--focus", "it", "--options", "trophy", "suitcase", "--layer", "4"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    payload = json.loads(out)
    engine = load_engine("bundled")
    metric = pronoun_metric(engine.run(clean), "it", "trophy", "suitcase", 4)
    found = patch_heads(engine, engine.encode(clean).ids, engine.encode(corrupt).ids, metric)
    assert payload["tokens_clean"] == list(engine.encode(clean).tokens)
    np.testing.assert_allclose(payload["restored"], found.restored, atol=1e-7)
    assert np.asarray(payload["restored"]).shape == (6, 12)


@pytest.mark.parametrize(
    ("extra", "code", "says"),
    [
        (["--what", "lines"], 2, "invalid choice: 'lines'"),
        (["--options", " trophy"], 2, "expected 2 arguments"),
        (["--options", "", " suitcase"], 1, "an option is empty"),
        (["--options", " trophy", " trophy"], 1, "start with the same token"),
        (["--position", "99"], 1, "the position must be in 0..13"),
        (["--what", "residual", "--position", "3"], 1, "the residual grid has every position"),
        (["--focus", "it"], 1, "a decoder is scored on its next token"),
    ],
)
def test_bad_flags_are_one_line(capsys, gpt2_dir, extra, code, says):
    got, out, err = run(capsys, "patch", CLEAN, CORRUPT, "--model", str(gpt2_dir), *extra)
    assert got == code and out == ""
    assert err.startswith("error: ") and says in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("clean", "corrupt", "says"),
    [
        (CLEAN, CLEAN, "error: nothing to restore: the two sentences are the same"),
        (CLEAN, CLEAN[:-1], "different lengths (14 and 13 tokens)"),
        ("", CLEAN, "CLEAN is empty"),
    ],
)
def test_bad_pairs_are_one_line(capsys, gpt2_dir, clean, corrupt, says):
    code, out, err = run(capsys, "patch", clean, corrupt, "--model", str(gpt2_dir))
    assert code == 1 and out == "" and says in err and err.count("\n") == 1


def test_a_bert_needs_the_pronoun_tests_words(capsys):
    code, _, err = run(capsys, "patch", "it was big", "it was small")
    assert code == 1 and "give --focus WORD and --options TARGET RIVAL" in err
