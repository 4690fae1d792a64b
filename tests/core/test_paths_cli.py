"""python -m core patch --what paths: its JSON holds what core.measures.paths.path_patch computes (to
the logits, and to receivers through q, k or v, null where a head cannot reach them), and its errors
are one line on stderr."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.__main__ import main
from core.measures.paths import PathItem, path_patch
from core.models.architectures import load_engine
from tests.tiny_llama import make_tiny_llama

CLEAN = "The trophy would not fit in the suitcase because it was too large."
CORRUPT = "The trophy would not fit in the bank because it was too large."
OPTIONS = [" trophy", " suitcase"]
KEYS = ["model", "metric", "tokens_clean", "tokens_corrupt", "metric_clean", "metric_corrupt", "restored"]


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("paths_cli"), layers=3, heads=4, kv_heads=2)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _item(engine):
    clean, corrupt = engine.encode(CLEAN).ids, engine.encode(CORRUPT).ids
    answer, rival = (engine.encode(option).ids[0] for option in OPTIONS)
    return PathItem(clean, corrupt, answer, rival)


@pytest.mark.parametrize(("to", "via"), [(None, None), ("2.1,1.3", "k")])
def test_paths_json_is_the_measure(capsys, llama_dir, to, via):
    argv = ["patch", CLEAN, CORRUPT, "--model", str(llama_dir), "--options", *OPTIONS, "--what", "paths"]
    code, out, err = run(capsys, *argv, *(["--to", to, "--via", via] if to else []))
    assert code == 0 and err == ""
    payload = json.loads(out)  # strict JSON: no NaN
    assert list(payload) == [*KEYS, "to", "via"]
    engine = load_engine(str(llama_dir))
    receivers = [(2, 1), (1, 3)] if to else []
    found = path_patch(engine, [_item(engine)], to=receivers, via=via)
    assert payload["to"] == [list(pair) for pair in receivers] and payload["via"] == via
    assert payload["metric_clean"] == pytest.approx(found.metric_clean, abs=1e-7)
    assert payload["metric_corrupt"] == pytest.approx(found.metric_corrupt, abs=1e-7)
    restored = np.array([[np.nan if v is None else v for v in row] for row in payload["restored"]])
    assert restored.shape == (3, 4)  # [layer][head]
    np.testing.assert_allclose(restored, found.restored, atol=1e-7)  # NaN where found is NaN
    # with receivers in layers 1 and 2, the last layer's heads reach none: null
    assert (payload["restored"][2] == [None] * 4) == bool(to) and None not in payload["restored"][0]
    assert "along the paths" in payload["metric"]


@pytest.mark.parametrize(
    ("extra", "code", "says"),
    [
        (["--what", "paths", "--to", "2.1"], 1, "--to and --via go together"),
        (["--what", "paths", "--via", "q"], 1, "--to and --via go together"),
        (["--to", "2.1", "--via", "q"], 1, "add --what paths"),
        (["--what", "paths", "--to", "2:1", "--via", "q"], 1, "layer.head, 0-indexed"),
        (["--what", "paths", "--to", "3.0", "--via", "q"], 1, "head (3, 0) is not in this model"),
        (["--what", "paths", "--to", "1.4", "--via", "v"], 1, "head (1, 4) is not in this model"),
        (["--what", "paths", "--to", "1.0", "--via", "o"], 2, "invalid choice: 'o'"),
        (["--what", "paths", "--position", "2"], 1, "the paths grid has every position"),
    ],
)
def test_bad_flags_are_one_line(capsys, llama_dir, extra, code, says):
    argv = ["patch", CLEAN, CORRUPT, "--model", str(llama_dir), "--options", *OPTIONS, *extra]
    got, out, err = run(capsys, *argv)
    assert got == code and out == ""
    assert err.startswith("error: ") and says in err and err.count("\n") == 1


def test_paths_need_options_and_a_decoder(capsys, llama_dir):
    code, out, err = run(capsys, "patch", CLEAN, CORRUPT, "--model", str(llama_dir), "--what", "paths")
    assert code == 1 and out == "" and "give --options A B" in err and err.count("\n") == 1
    code, out, err = run(
        capsys, "patch", "it was big", "it was small", "--what", "paths", "--options", "a", "b"
    )
    assert code == 1 and out == "" and "runs on a decoder" in err and "is a BERT" in err
