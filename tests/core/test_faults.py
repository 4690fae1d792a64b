"""Faults while loading a model (issue 5, section 4), each simulated, for both engines: no network,
a full disk, an unreadable folder, a damaged safetensors file, a bundled weights file whose sha256
is wrong, a config without attention heads. Each gives a ModelError whose message says what is
wrong, and once the fault is fixed the same call succeeds: nothing keeps the failure.

The page side (the message in the page, the bundled model or the learn page still working, a retry
in the same session) is tests/dashboard/test_faults.py.
"""

from __future__ import annotations

import builtins
import errno
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.models import bundled, registry
from core.models.bert import load_numpy
from core.models.errors import ModelError, ModelFilesError, ModelInputError, ModelNotFoundError
from core.models.pretrained import load_pretrained
from tests.tiny_bert import make_tiny_bert

LOADERS = {"torch": load_pretrained, "numpy": load_numpy}
HUB_ID = "google/bert_uncased_L-4_H-256_A-4"  # a curated id; its "download" is simulated


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory) -> Path:
    # hidden 24 is divisible by transformers' default of 12 heads: without a head count in its
    # config, this model would load silently with the wrong heads
    return make_tiny_bert(tmp_path_factory.mktemp("fault_tiny"), hidden_size=24, num_heads=3, num_layers=2)


@pytest.fixture
def tiny(tmp_path, tiny_source) -> Path:
    """A fresh copy of the tiny model, free to damage."""
    return Path(shutil.copytree(tiny_source, tmp_path / "model"))


def works(result, n_heads: int = 3) -> None:
    assert result.attentions.shape[1] == n_heads
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)


def hub(monkeypatch, behaviour) -> None:
    """Replace the Hub download: `behaviour` is an exception to raise or a folder to return."""
    import huggingface_hub

    def fake_snapshot_download(repo_id, allow_patterns=None, **kwargs):
        if isinstance(behaviour, BaseException):
            raise behaviour
        return str(behaviour)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)


# ---- no network, full disk ----------------------------------------------------------------------


def _offline():
    from huggingface_hub.errors import LocalEntryNotFoundError

    return LocalEntryNotFoundError("Cannot find the requested files in the local cache (connection error)")


def _proxy():
    import httpx2

    return httpx2.ProxyError("407 Proxy Authentication Required")


HUB_FAULTS = {
    "no network": (_offline, "cannot reach the Hugging Face Hub"),
    "disk full": (lambda: OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),
    "cache not writable": (lambda: PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
    "proxy refuses": (_proxy, "ProxyError"),
}


@pytest.mark.parametrize("engine", LOADERS)
@pytest.mark.parametrize("fault", HUB_FAULTS)
def test_hub_faults_are_reported_and_a_retry_after_the_fix_works(monkeypatch, tiny, engine, fault):
    make, says = HUB_FAULTS[fault]
    hub(monkeypatch, make())
    with pytest.raises(ModelNotFoundError, match=says) as caught:
        LOADERS[engine](HUB_ID)
    assert HUB_ID in str(caught.value)
    hub(monkeypatch, tiny)  # the network is back, the disk has room
    works(LOADERS[engine](HUB_ID).run("the cat sat on the mat"))


# ---- an unreadable folder -------------------------------------------------------------------------


def deny_reads_under(monkeypatch, folder: Path) -> None:
    """Reading any file under `folder` fails with EACCES, as for a folder without read permission
    (simulated: the tests run as root, for whom chmod removes nothing)."""
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):
        if isinstance(file, str | Path) and Path(file).resolve().is_relative_to(folder.resolve()):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    for module in (registry, bundled):  # their own `open` only: config.json, the bundled weights' sha256
        monkeypatch.setattr(module, "open", guarded_open, raising=False)


@pytest.mark.parametrize("engine", LOADERS)
def test_an_unreadable_folder_is_reported_and_works_once_readable(monkeypatch, tiny, engine):
    with monkeypatch.context() as patch:
        deny_reads_under(patch, tiny)
        with pytest.raises(ModelFilesError, match="Permission denied") as caught:
            LOADERS[engine](str(tiny))
        assert "config.json" in str(caught.value)
    works(LOADERS[engine](str(tiny)).run("the cat"))


# ---- damaged weights ---------------------------------------------------------------------------------

DAMAGE = {
    "garbage": lambda good: b"this is not a safetensors file" * 20,
    "cut in half": lambda good: good[: len(good) // 2],
    "empty": lambda good: b"",
    "header length wrong": lambda good: (10**12).to_bytes(8, "little") + good[8:],
}


@pytest.mark.parametrize("engine", LOADERS)
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_safetensors_file_is_reported_and_works_once_replaced(tiny, engine, damage):
    weights = tiny / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(DAMAGE[damage](good))
    with pytest.raises(ModelFilesError, match=r"model\.safetensors|weights file") as caught:
        LOADERS[engine](str(tiny))
    assert "damaged" in str(caught.value) or "deserializing" in str(caught.value)
    weights.write_bytes(good)
    works(LOADERS[engine](str(tiny)).run("the cat"))


def test_weights_that_make_nan_are_refused_by_the_torch_engine(tiny):
    """A flipped byte inside a tensor can make a NaN, which no header check sees: the torch engine
    refuses to hand out NaN attention (its load-time probe already runs the model once)."""
    from safetensors.numpy import load_file, save_file

    weights = tiny / "model.safetensors"
    tensors = load_file(weights)
    name = next(k for k in tensors if k.endswith("attention.self.query.weight"))
    tensors[name][0, 0] = np.nan
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(ModelFilesError, match="not numbers"):
        load_pretrained(str(tiny))


# ---- the bundled model's sha256 --------------------------------------------------------------------


def make_damaged_bundled(folder: Path, monkeypatch) -> Path:
    """A copy of the bundled model, in place of the installed one, whose weights differ from the
    published file by one byte inside a tensor (the file still parses: only the sha256 check can
    tell), in a process that has verified nothing yet."""
    source = bundled.bundled_model_dir()
    assert source is not None, "the bundled model package is not installed"
    copy = folder / "bundled"
    copy.mkdir()
    for item in source.iterdir():
        if item.name != "model.safetensors":
            (copy / item.name).symlink_to(item)
    data = bytearray((source / "model.safetensors").read_bytes())
    data[-1000] ^= 0x01
    (copy / "model.safetensors").write_bytes(bytes(data))
    monkeypatch.setattr(bundled, "bundled_model_dir", lambda: copy)
    monkeypatch.setattr(bundled, "_VERIFIED_BUNDLED", set())
    return copy


def repair_bundled(copy: Path) -> None:
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1000] ^= 0x01
    weights.write_bytes(bytes(data))


@pytest.fixture
def damaged_bundled(tmp_path, monkeypatch) -> Path:
    return make_damaged_bundled(tmp_path, monkeypatch)


@pytest.mark.parametrize("engine", LOADERS)
def test_a_wrong_sha256_for_the_bundled_weights_is_reported_and_not_remembered(damaged_bundled, engine):
    with pytest.raises(ModelFilesError, match="may be damaged") as caught:
        LOADERS[engine]("bundled")
    assert "sha256" in str(caught.value) and "pip install --force-reinstall" in str(caught.value)
    assert damaged_bundled not in bundled._VERIFIED_BUNDLED
    with pytest.raises(ModelFilesError, match="may be damaged"):  # checked again, not cached as good
        LOADERS[engine]("bundled")
    repair_bundled(damaged_bundled)
    model = LOADERS[engine]("bundled")
    assert damaged_bundled in bundled._VERIFIED_BUNDLED
    works(model.run("the cat sat on the mat"), n_heads=12)


def test_an_unreadable_bundled_weights_file_is_reported(damaged_bundled, monkeypatch):
    deny_reads_under(monkeypatch, damaged_bundled)
    with pytest.raises(ModelFilesError, match="cannot read the bundled weights"):
        load_numpy("bundled")


# ---- a config without attention heads ---------------------------------------------------------------


@pytest.mark.parametrize("engine", LOADERS)
@pytest.mark.parametrize("heads", ["missing", None, 0, "3", 5])
def test_a_config_without_usable_heads_is_refused_and_works_once_fixed(tiny, engine, heads):
    path = tiny / "config.json"
    good = path.read_text()
    config = json.loads(good)
    if heads == "missing":
        del config["num_attention_heads"]
    else:
        config["num_attention_heads"] = heads
    path.write_text(json.dumps(config))
    with pytest.raises(ModelError) as caught:
        LOADERS[engine](str(tiny))
    message = str(caught.value)
    assert "head" in message or "num_attention_heads" in message, message
    path.write_text(good)
    works(LOADERS[engine](str(tiny)).run("the cat"))


# ---- folder paths the file system itself refuses ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("~nosuchuser/model", "not a home folder"),  # expanduser raises RuntimeError
        ("/" + "a" * 299, "File name too long"),  # stat raises ENAMETOOLONG
        ("./" + "日" * 100, "File name too long"),  # 300 bytes in UTF-8
    ],
)
def test_folder_paths_the_file_system_refuses_are_input_errors(path, says):
    with pytest.raises(ModelInputError, match=says):
        registry.parse_model_choice(path)
