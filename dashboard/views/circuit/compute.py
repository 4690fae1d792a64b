"""Where the page's circuit comes from: the shipped file (dashboard/content/circuits/smollm2_ioi.json,
written by `python -m core circuit`), or a search run again here on SmolLM2 (core.measures.circuit's
find_circuit), and the first step of the search on a sentence of the user's own (core.measures.paths'
path_patch to the logits, on the item core.measures.ioi's parse_prompt makes of it).

Nothing long starts by itself (dashboard/long_work.py): both runs ask first, saying how long, and
count with a bar. Their results are kept for every session of the server (long_work.shelf), so a
class that runs the teacher's search finds it done. The estimate of the search's time starts from
the shipped file's own record (what the search took when it was written), the best prior there is.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import streamlit as st

from core.models.smollm2 import SMOLLM2_KEY, packaged_gguf
from dashboard import long_work
from dashboard.content import circuit as text
from dashboard.engines import load_engine
from dashboard.hosted import current_limits
from dashboard.views.circuit.data import Circuit, parse, read_file

ROOT = Path(__file__).resolve().parents[3]
CIRCUIT_FILE = ROOT / "dashboard" / "content" / "circuits" / "smollm2_ioi.json"
ENGINE = "numpy"  # path patching is an argument of the NumPy engines' forward pass
SWEEPS = 4  # path-patching sweeps of the search: to the logits, to q, to k, to v
# A sender's patched run recomputes only the layers after it, at the positions that change, many senders
# in one batch: it costs about 1 / RUN_SHARE of a full pass over its prompts (an estimate before the
# first search; the shipped file's record, or a search run here, sets the next one)
RUN_SHARE = 24
TOKENS_PER_PROMPT = 20  # an IOI prompt in SmolLM2's tokenizer, about
SEARCHES_KEPT = 4
OWN_KEPT = 16
_calibrated: set = set()
_lock = threading.Lock()


def smollm2_here() -> bool:
    """Whether SmolLM2 can run here (its package installed), so the search can run again."""
    return packaged_gguf() is not None and not current_limits().hosted


@st.cache_data(max_entries=4, show_spinner=False)
def _shipped(path: str, stamp: float) -> Circuit:
    return read_file(Path(path))


def shipped() -> Circuit:
    """The shipped circuit (read once per version of the file); FileNotFoundError, CircuitFileError."""
    return _shipped(str(CIRCUIT_FILE), CIRCUIT_FILE.stat().st_mtime)


# ---- the search, run again ----------------------------------------------------------------------------


def search_work(engine, prompts: int) -> long_work.Work:
    """The search's runs: SWEEPS sweeps over every head as a sender, each run over the prompts as one
    batch at about 1 / RUN_SHARE of a full pass's cost."""
    layers, width, _ = long_work.model_shape(engine)
    runs = SWEEPS * engine.n_layers * engine.n_heads
    positions = max(1, prompts * TOKENS_PER_PROMPT // RUN_SHARE)
    return long_work.Work("circuit", SMOLLM2_KEY, runs, positions, layers, width, batched=True)


def calibrate(engine, record: dict) -> None:
    """The search's first estimate from the shipped file's record (once per process): the time it took
    for its number of prompts, when the record says."""
    seconds = next(
        (record[k] for k in ("seconds", "time_s", "took_s") if isinstance(record.get(k), int | float)), None
    )
    prompts = record.get("prompts")
    with _lock:
        if seconds is None or not isinstance(prompts, int) or "search" in _calibrated:
            return
        _calibrated.add("search")
    long_work.record(search_work(engine, prompts), float(seconds))


def search_key(prompts: int, seed: int) -> tuple:
    return (SMOLLM2_KEY, int(prompts), int(seed))


def searched(prompts: int, seed: int) -> Circuit | None:
    return long_work.shelf("circuit", SEARCHES_KEPT).get(search_key(prompts, seed))


def search(prompts: int, seed: int) -> Circuit:
    """find_circuit on SmolLM2 with a counting bar (ask first: may_search); kept for every session."""
    from core.measures.circuit import find_circuit  # the search is only loaded when it is asked for

    engine = load_engine(SMOLLM2_KEY, ENGINE)
    work = search_work(engine, prompts)
    with long_work.counting(work, text.RECOMPUTE_PROGRESS) as progress:
        found = parse(find_circuit(engine, prompts=prompts, seed=seed, progress=progress))
    long_work.shelf("circuit", SEARCHES_KEPT).put(search_key(prompts, seed), found)
    return found


def may_search(prompts: int, seed: int, record: dict) -> bool:
    engine = load_engine(SMOLLM2_KEY, ENGINE)
    calibrate(engine, dict(record))
    work = search_work(engine, prompts)
    what = text.RECOMPUTE_ASK.format(n=prompts)
    return long_work.may_start(work, search_key(prompts, seed), what, text.RECOMPUTE_BUTTON.format(n=prompts))


# ---- one's own sentence: the direct effect -----------------------------------------------------------


def own_key(sentence: str) -> tuple:
    return (SMOLLM2_KEY, sentence)


def parse_own(sentence: str):
    """(item, io, s) for the user's sentence; ValueError with a message that says what is wrong."""
    from core.measures.ioi import parse_prompt

    return parse_prompt(load_engine(SMOLLM2_KEY, ENGINE), sentence)


def own_work(engine, n_tokens: int) -> long_work.Work:
    """One sweep to the logits on one prompt: a run per head as a sender (a whole pass's fixed costs
    each, the prompt alone being too short to share them)."""
    layers, width, _ = long_work.model_shape(engine)
    runs = engine.n_layers * engine.n_heads
    return long_work.Work("circuit_own", SMOLLM2_KEY, runs, max(1, n_tokens // RUN_SHARE), layers, width)


def own_direct(sentence: str, item):
    """path_patch to the logits on the one item, every head a sender, with a counting bar; kept."""
    from core.measures.paths import path_patch

    shelf = long_work.shelf("circuit_own", OWN_KEPT)
    if (done := shelf.get(own_key(sentence))) is not None:
        return done
    engine = load_engine(SMOLLM2_KEY, ENGINE)
    with long_work.counting(own_work(engine, len(item.clean)), text.OWN_PROGRESS) as progress:
        found = path_patch(engine, [item], progress=progress)
    shelf.put(own_key(sentence), found)
    return found


def own_done(sentence: str):
    return long_work.shelf("circuit_own", OWN_KEPT).get(own_key(sentence))


def finite(grid: np.ndarray) -> bool:
    return bool(np.isfinite(grid).any())
