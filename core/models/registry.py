"""Model registry: the model choices a user may make, and validation of what users type.

What a user may choose, and how it is read (`parse_model_choice`):
- "letters": the letter GPT-2 this product trains and ships (core/models/shipped.py), offline.
- "bundled" (or an empty string): the bundled model, all-MiniLM-L6-v2, offline. Where its files come
  from (its package, the Hugging Face cache, or a verified download at a pinned revision) is
  core.models.bundled's job.
- A Hugging Face Hub id, "name" or "owner/name" (the Hub's own form, as huggingface_hub's
  validate_repo_id checks it): downloaded once into the Hub cache, safetensors files only.
- A local directory, written as a path that starts with "/", "./" or "~/": must exist, be a directory
  and hold config.json and safetensors weights.
Refused with a message: URLs, ".." path components (path traversal), control characters.

Every engine loads from a local directory (`prepare_model_files`), so the NumPy engine and the
torch engine read the same files. Only safetensors weights are fetched or read: never pickles.
The errors (ModelError and its kinds) are defined in core/models/errors.py.
References: huggingface_hub's validate_repo_id; transformers' from_pretrained(use_safetensors=True).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.models import bundled, shipped, smollm2
from core.models.errors import ModelFilesError, ModelInputError, ModelNotFoundError, first_line

__all__ = ["BUNDLED_KEY", "BUNDLED_NAME", "BUNDLED_SPEC", "CURATED_HUB_MODELS", "HUB_FILE_PATTERNS"]
__all__ += ["SHIPPED_SPEC", "SMOLLM2_SPEC"]
__all__ += ["HUB_ID_RE", "MAX_CHOICE_CHARS", "CuratedModel", "ModelSpec", "is_hub_id", "parse_model_choice"]
__all__ += ["load_choice", "prepare_model_files", "read_config"]

BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled, offline)"
BUNDLED_KEY = "bundled"  # how the bundled model is written in URLs and cache keys


@dataclass(frozen=True)
class CuratedModel:
    summary: str  # one line for the picker's help text
    download: str  # rough size of the safetensors download, said before it starts
    # Offered in hosted mode (the public demo, Streamlit Community Cloud's smallest tier: 690 MB).
    # False when the Cloud simulation with the model loaded passes the hosted server's 500 MB peak
    # RSS target (tests/e2e/test_cloud.py, bench/README.md's "The hosted demo's memory").
    hosted: bool = True


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
    # The two decoders: model.safetensors as the Hub lists it (353 MB and 548 MB: the parameters in
    # float32 plus each block's 4 MB causal-mask buffer, which the files still carry). Not hosted:
    # beside the bundled model, the simulated hosted server peaked at 957 MB with distilgpt2 and
    # 1,336 MB with gpt2 (665 MB and 874 MB resident after the page).
    "distilbert/distilgpt2": CuratedModel(
        "DistilGPT2: 6 layers × 12 heads, a decoder (causal attention) distilled from GPT-2 small",
        "about 353 MB",
        hosted=False,
    ),
    "gpt2": CuratedModel(
        "GPT-2 small: 12 layers × 12 heads, a decoder (causal attention)", "about 548 MB", hosted=False
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


@dataclass(frozen=True)
class ModelSpec:
    """A validated model choice."""

    kind: Literal["bundled", "shipped", "smollm2", "hub", "local"]
    source: str  # "bundled", "letters", "smollm2", the Hub id, or the absolute local path

    @property
    def key(self) -> str:
        """How the choice is written in URLs and cache keys."""
        return self.source

    @property
    def label(self) -> str:
        """How the choice is shown in the page."""
        if self.kind == "bundled":
            return BUNDLED_NAME
        if self.kind == "shipped":
            return shipped.SHIPPED_NAME
        if self.kind == "smollm2":
            return smollm2.SMOLLM2_NAME
        if self.kind == "local":
            return f"local folder {self.source}"
        return self.source


BUNDLED_SPEC = ModelSpec("bundled", BUNDLED_KEY)
SHIPPED_SPEC = ModelSpec("shipped", shipped.SHIPPED_KEY)
SMOLLM2_SPEC = ModelSpec("smollm2", smollm2.SMOLLM2_KEY)


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
    if raw in {shipped.SHIPPED_KEY, shipped.SHIPPED_NAME}:
        return SHIPPED_SPEC
    if raw in {smollm2.SMOLLM2_KEY, smollm2.SMOLLM2_NAME}:
        return SMOLLM2_SPEC
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
        if path.resolve() == shipped.SHIPPED_DIR.resolve():
            return SHIPPED_SPEC  # the shipped model's own folder: the picker's "letters" entry, not "Other"
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
        raise ModelNotFoundError(f"downloading {repo_id} failed: {first_line(err)}") from err
    except Exception as err:  # the HTTP client's own errors (a proxy refusing, a connection cut mid-file)
        raise ModelNotFoundError(
            f"downloading {repo_id} failed ({type(err).__name__}: {first_line(err)}); "
            "check the network connection and try again"
        ) from err


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
        model_dir = bundled.bundled_files(say, progress_fraction or (lambda done: None))
    elif spec.kind == "shipped":
        if (model_dir := shipped.shipped_model_dir()) is None:
            raise ModelFilesError(f"this copy lacks the letter GPT-2; make it: {shipped.SHIPPED_COMMAND}")
    elif spec.kind == "smollm2":
        model_dir = smollm2.smollm2_model_dir(say, progress_fraction or (lambda done: None))
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


def load_choice(
    choice: ModelSpec | str | Path | None,
    load_dir: Callable[..., object],
    *,
    check_config: Callable[[dict], None],
    into: str,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
):
    """An engine for a model choice (a ModelSpec, or what the user typed: "bundled", a Hub id, a
    folder): its files prepared and its config checked (prepare_model_files), then
    load_dir(model_dir, name=...), with "Loading the weights into {into}…" said first. Every
    engine's loader is this with its own check and load_dir."""
    spec = choice if isinstance(choice, ModelSpec) else parse_model_choice(str(choice or ""))
    model_dir = prepare_model_files(spec, check_config=check_config, progress=progress)
    if progress:
        progress(f"Loading the weights into {into}…")
    return load_dir(model_dir, name=name or spec.label)
