"""Files the measures keep on disk: where they go, what names them, and how they are written.

The head atlas (core/measures/atlas.py), its induction test (core/measures/induction.py) and the
corpus neighbours (core/measures/neighbours.py: an .npz index beside an .npy of the vectors, which a
reader maps rather than reads) keep their files in one folder, $XDG_CACHE_HOME/attention-explorer/atlas
(or ~/.cache/...), keyed by the model, a fingerprint of its files and a hash of the corpus. A file is
written through a temporary file and os.replace, so a reader never sees half of one; a folder that
cannot be written is logged, not raised. `python -m core prepare` (core/prepare.py) fills the folder
ahead of time.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import numpy as np

LOG = logging.getLogger(__name__)

__all__ = ["cache_dir", "corpus_hash", "model_fingerprint", "release_freed_memory", "write_npy_atomically"]
__all__ += ["write_npz_atomically"]


def corpus_hash(sentences: Sequence[str]) -> str:
    """sha256 of the sentences, one per line: any edit of the corpus gives another atlas."""
    return hashlib.sha256("\n".join(sentences).encode("utf-8", "surrogatepass")).hexdigest()


def model_fingerprint(model_dir: Path) -> str:
    """sha256 of a model folder's config.json bytes and its weights files' names, sizes and
    modification times (*.safetensors): cheap (no weights read), and it changes when the model is
    retrained or re-downloaded in place. A file that cannot be read counts as absent."""
    digest = hashlib.sha256()
    model_dir = Path(model_dir)
    try:
        digest.update((model_dir / "config.json").read_bytes())
    except OSError:
        digest.update(b"no config.json")
    for path in sorted(model_dir.glob("*.safetensors")):
        try:
            info = path.stat()  # follows the Hub cache's symlinks to the blob
        except OSError:
            continue
        digest.update(f"\n{path.name}\t{info.st_size}\t{info.st_mtime_ns}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/attention-explorer/atlas, or ~/.cache/attention-explorer/atlas."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attention-explorer" / "atlas"


def write_npz_atomically(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Write `arrays` to `path` as .npz through a temporary file in the same folder and os.replace,
    so a reader never sees half a file. False, logged, when the folder cannot be written."""
    return _write_atomically(path, lambda f: np.savez(f, **arrays))


def write_npy_atomically(path: Path, array: np.ndarray) -> bool:
    """Write one array to `path` as .npy (which np.load can map: mmap_mode="r"), as above."""
    return _write_atomically(path, lambda f: np.save(f, array))


def _write_atomically(path: Path, write: Callable[[IO[bytes]], None]) -> bool:
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".cache-", suffix=".tmp", delete=False) as f:
            tmp = f.name
            write(f)
        os.replace(tmp, path)
        return True
    except OSError as err:
        LOG.warning("cannot write the cache file %s (%s); keeping it in memory only", path, err)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False


def release_freed_memory() -> None:
    """Give the memory a computation freed back to the system (glibc's malloc_trim). Arrays of under
    32 MB come from the heap, and glibc keeps what is freed there: after the corpus vectors are
    computed in half-megabyte pieces per sentence and saved, a server would otherwise stay 137 MB
    larger on SmolLM2 although it now reads them mapped from disk. Elsewhere (no glibc): nothing."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
