"""How many threads NumPy's OpenBLAS uses for one matrix product, read and set at run time.

NumPy has no API for this. OpenBLAS exports openblas_get_num_threads / openblas_set_num_threads (with
a prefix and suffix in the scipy-openblas builds that NumPy's wheels ship), so this module finds the
OpenBLAS library the process has loaded and calls them through ctypes. Where that library cannot be
found (macOS with Accelerate, Windows, a NumPy built on MKL or BLIS), `available()` is False and
callers keep BLAS's own threading.

kernels() names the kernel set OpenBLAS runs (core/blas_kernels.py chooses it on some CPUs).

The NumPy BERT engine uses it to run its two halves of a long input on two Python threads with one
BLAS thread each (core.bert); the benchmarks use it to give torch the same thread count.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_PREFIXES = ("scipy_openblas_", "openblas_")  # NumPy's wheels, then a plain OpenBLAS
_SUFFIXES = ("64_", "")  # the ILP64 build NumPy uses, then the LP64 name
_lock = threading.Lock()  # one change of the process-wide setting at a time


@dataclass(frozen=True)
class _OpenBLAS:
    """The OpenBLAS library mapped into this process and the entry points this module calls."""

    library: ctypes.CDLL
    get_threads: ctypes._CFuncPtr
    set_threads: ctypes._CFuncPtr
    core_name: ctypes._CFuncPtr | None  # the kernel set in use, e.g. b"Haswell"


@cache
def _openblas() -> _OpenBLAS | None:
    """The OpenBLAS mapped into this process (NumPy's, once NumPy is imported), or None."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return None
    try:
        paths = sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps.read_text())))
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, get.argtypes = ctypes.c_int, []
                    put.restype, put.argtypes = None, [ctypes.c_int]
                    name = getattr(lib, f"{prefix}get_corename{suffix}", None)
                    if name is not None:
                        name.restype, name.argtypes = ctypes.c_char_p, []
                    return _OpenBLAS(lib, get, put, name)
    return None


def available() -> bool:
    """True when this process's BLAS is an OpenBLAS whose thread count can be read and set."""
    return _openblas() is not None


def library() -> ctypes.CDLL | None:
    """NumPy's OpenBLAS itself, for benchmarks that call its other entry points; None when unavailable."""
    openblas = _openblas()
    return None if openblas is None else openblas.library


def kernels() -> str | None:
    """The name of the kernel set OpenBLAS picked for this CPU (e.g. "Haswell"), or None when unknown.
    See core/blas_kernels.py for why it can differ from OpenBLAS's own choice."""
    openblas = _openblas()
    if openblas is None or openblas.core_name is None:
        return None
    return openblas.core_name().decode(errors="replace")


def get_threads() -> int | None:
    """OpenBLAS's thread count for one product, or None when unavailable."""
    openblas = _openblas()
    return None if openblas is None else int(openblas.get_threads())


@contextlib.contextmanager
def limited_to(n_threads: int) -> Iterator[bool]:
    """Within the block, OpenBLAS uses at most n_threads per product; yields False (and changes
    nothing) when the thread count cannot be set. The setting is process-wide: a product that another
    thread computes meanwhile also gets fewer threads (slower, never wrong)."""
    openblas = _openblas()
    if openblas is None:
        yield False
        return
    get, put = openblas.get_threads, openblas.set_threads
    with _lock:
        before = int(get())
        put(min(before, n_threads))
        try:
            yield True
        finally:
            put(before)
