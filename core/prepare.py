"""Prepare before class: compute what the pages would otherwise compute on their first open, once per
machine, and keep it on disk where they look for it.

    python -m core prepare [--model smollm2 ...]   every offline model when no --model is given
    python -m core prepare --check [--model M ...] what is on disk for each model, computing nothing

For each model, in the cache folder of core/measures/cache_files.py (~/.cache/attention-explorer/atlas):
- the corpus vectors behind explore's nearest words and query/key space (core/measures/neighbours.py);
- the head atlas on the built-in corpus (core/measures/atlas.py);
- a decoder's induction test (core/measures/induction.py), which the atlas of a user's sentence reuses.
One pass over the corpus gives both the vectors and the atlas (each sentence run once). The files are
named exactly as the dashboard names them (dashboard/corpus_vectors.py, dashboard/views/atlas/compute.py):
the model key, the fingerprint of its files (files_fingerprint, as dashboard/engines.py's), the corpus
hash. The corpus is the dashboard's (dashboard/content/atlas_corpus.txt, read as a file: core imports
no UI). Progress goes to stderr as a counting line with the time left; the summary to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from core.measures.atlas import (
    INDUCTION_LENGTH,
    INDUCTION_SEED,
    AtlasAccumulator,
    cache_path,
    load_atlas,
    measure_induction,
    save_atlas,
)
from core.measures.cache_files import cache_dir, corpus_hash, model_fingerprint
from core.measures.induction import induction_path
from core.measures.neighbours import collect, counted, hidden_path, load_vectors, save_vectors, vectors_path
from core.models import architectures, shipped, smollm2
from core.models.bundled import BUNDLED_SHA256
from core.models.registry import BUNDLED_KEY, ModelSpec, parse_model_choice, prepare_model_files, read_config

__all__ = ["CORPUS_FILE", "Prepared", "ProgressLine", "add_prepare_command", "corpus", "files_fingerprint"]
__all__ += ["offline_models", "prepare", "prepare_command", "status"]

CORPUS_FILE = Path(__file__).resolve().parents[1] / "dashboard" / "content" / "atlas_corpus.txt"
VECTORS, ATLAS, INDUCTION = "corpus vectors", "head atlas", "induction test"
Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


def corpus(path: Path = CORPUS_FILE) -> tuple[str, ...]:
    """The built-in sentences, as dashboard.content.atlas.corpus reads them: a line each, blank lines
    and lines starting with # left out."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def offline_models() -> list[str]:
    """The models that load with no network (dashboard.engines.offline_models): the bundled BERT, the
    letter GPT-2 where this copy holds it, SmolLM2 where its package is installed."""
    return (
        [BUNDLED_KEY]
        + ([shipped.SHIPPED_KEY] if shipped.shipped_model_dir() else [])
        + ([smollm2.SMOLLM2_KEY] if smollm2.packaged_gguf() else [])
    )


def files_fingerprint(model_key: str) -> str:
    """The fingerprint the dashboard keys its files with (dashboard.engines.files_fingerprint): the
    bundled model's and SmolLM2's pinned sha256, else core.measures.cache_files.model_fingerprint of
    the model's folder."""
    spec = parse_model_choice(model_key)
    if spec.kind == "bundled":
        return f"sha256:{BUNDLED_SHA256}"
    if spec.kind == "smollm2":
        return f"sha256:{smollm2.SMOLLM2_SHA256}"
    return model_fingerprint(prepare_model_files(spec))


def _induction_length(spec: ModelSpec) -> int | None:
    """A decoder's induction-test length (atlas.measure_induction's: at most half its context), read
    from its config.json without loading the weights; None for an encoder."""
    if spec.kind in ("bundled", "smollm2"):  # a BERT; a Llama of 8,192 positions
        return None if spec.kind == "bundled" else INDUCTION_LENGTH
    folder = shipped.shipped_model_dir() if spec.kind == "shipped" else None
    config = read_config(folder or (Path(spec.source) if spec.kind == "local" else prepare_model_files(spec)))
    if config.get("model_type") not in architectures.DECODER_TYPES:
        return None
    context = config.get("n_positions") or config.get("max_position_embeddings") or 2 * INDUCTION_LENGTH
    return min(INDUCTION_LENGTH, int(context) // 2)


@dataclass(frozen=True)
class Prepared:
    """One file (or pair of files) a page reads, and whether it is on disk."""

    model: str
    what: str  # VECTORS, ATLAS or INDUCTION
    paths: tuple[Path, ...]  # the vectors: the index and the .npy beside it
    ready: bool  # on disk, whole and of this model (checked as the pages check it)

    @property
    def size(self) -> int:
        """Bytes on disk (0 where missing)."""
        return sum(p.stat().st_size for p in self.paths if p.is_file())


def status(
    model_key: str, sentences: Sequence[str] | None = None, *, directory: Path | None = None
) -> list[Prepared]:
    """What the pages would find on disk for `model_key` on `sentences` (the built-in corpus), each
    file checked as the page reads it (a damaged one is not ready). Computes nothing."""
    spec = parse_model_choice(model_key)
    key, length = spec.key, _induction_length(spec)
    digest = corpus_hash(corpus() if sentences is None else tuple(sentences))
    fingerprint = files_fingerprint(key)
    vectors = vectors_path(key, digest, fingerprint=fingerprint, directory=directory)
    atlas = cache_path(key, digest, fingerprint=fingerprint, directory=directory)
    vectors_ready = load_vectors(vectors, model=key, corpus=digest) is not None
    atlas_ready = load_atlas(atlas, model=key, corpus=digest, decoder=length is not None) is not None
    found = [
        Prepared(key, VECTORS, (vectors, hidden_path(vectors)), vectors_ready),
        Prepared(key, ATLAS, (atlas,), atlas_ready),
    ]
    if length is not None:
        test = induction_path(key, length, INDUCTION_SEED, fingerprint=fingerprint, directory=directory)
        found.append(Prepared(key, INDUCTION, (test,), test.is_file()))
    return found


def prepare(
    model_key: str,
    sentences: Sequence[str] | None = None,
    *,
    directory: Path | None = None,
    progress: Progress | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> list[Prepared]:
    """Compute and save what status() finds missing for `model_key` (the NumPy engine, loaded here):
    a decoder's induction test, then one pass over the sentences for the vectors and the atlas.
    progress(done, total) after each sentence; say(line) before each stage. Returns status() after."""
    key = parse_model_choice(model_key).key
    sentences = corpus() if sentences is None else tuple(sentences)
    missing = {p.what for p in status(key, sentences, directory=directory) if not p.ready}
    if missing:
        say(f"{key}: loading the model")
        engine = architectures.load_engine(key)
        fingerprint = files_fingerprint(key)
        test = None
        if architectures.is_decoder(engine):
            say(f"{key}: the induction test")  # from its file when only the corpus's part is missing
            test = measure_induction(engine, model=key, fingerprint=fingerprint, directory=directory)
        if missing & {VECTORS, ATLAS}:
            say(f"{key}: reading the {len(sentences)} corpus sentences")
            where = _Where(key, corpus_hash(sentences), fingerprint, directory)
            _one_pass(engine, sentences, where, missing, test, progress)
    return status(key, sentences, directory=directory)


@dataclass(frozen=True)
class _Where:
    model: str
    corpus: str
    fingerprint: str
    directory: Path | None


def _one_pass(engine, sentences: Sequence[str], where: _Where, missing: set[str], test, progress) -> None:
    """Run each sentence once; save the corpus vectors and the atlas when they are `missing`."""
    acc = AtlasAccumulator(decoder=test is not None)

    def run(sentence: str):
        result = engine.run(sentence)
        if ATLAS in missing:
            acc.add(result)
        return result

    results = counted(run, sentences, progress)
    paths = {"fingerprint": where.fingerprint, "directory": where.directory}
    if VECTORS in missing:
        found = collect(results, model=where.model, corpus=where.corpus)
        save_vectors(found, vectors_path(where.model, where.corpus, **paths))
        del found  # SmolLM2's are 137 MB
    else:
        for _ in results:  # the atlas alone
            pass
    if ATLAS in missing:
        atlas = acc.finish(model=where.model, corpus_hash=where.corpus, engine="numpy", induction=test)
        save_atlas(atlas, cache_path(where.model, where.corpus, **paths))


# ---- the command line ------------------------------------------------------------------------------


class ProgressLine:
    """A counting line with the time left, on a terminal rewritten in place ("smollm2: sentence 120
    of 287, about 1 min 10 s left"); elsewhere (a log) a line every `every` seconds and at the end."""

    def __init__(self, label: str, stream: TextIO | None = None, every: float = 10.0) -> None:
        self.label, self.stream, self.every = label, stream or sys.stderr, every
        self.start = self.shown = time.monotonic()
        self.live = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0:  # the pass begins: the time left is counted from here, not from the model's loading
            self.start = now
            return
        if done < total and now - self.shown < (0.2 if self.live else self.every):
            return
        self.shown = now
        left = (now - self.start) / done * (total - done)
        tail = f"about {_duration(left)} left" if done < total else f"done in {_duration(now - self.start)}"
        line = f"{self.label}: sentence {done} of {total}, {tail}"
        end = "\n" if done == total or not self.live else ""
        self.stream.write(("\r\x1b[K" if self.live else "") + line + end)
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def add_prepare_command(commands) -> None:
    command = commands.add_parser(
        "prepare",
        help="compute, once, what the pages would compute on their first open (before class)",
        description="Compute and keep on disk each model's corpus vectors (explore's similarity and "
        "query/key views), head atlas and, for a decoder, induction test: what those pages otherwise "
        "compute on their first open. Files already there are kept. --check lists them, computing nothing.",
    )
    command.add_argument(
        "--model",
        action="append",
        metavar="KEY",
        help="bundled, letters, smollm2, a Hub id or a folder; repeated for more (default: the offline ones)",
    )
    command.add_argument("--check", action="store_true", help="list what is on disk; compute nothing")
    command.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    command.set_defaults(out=None)  # the summary goes to standard output


def prepare_command(args) -> str:
    """Prepare (or with --check, list) each model; the summary as text or JSON. Progress on stderr."""
    import json

    found = []
    for model in args.model or offline_models():
        if args.check:
            found += status(model)
            continue
        key = parse_model_choice(model).key
        found += prepare(key, progress=ProgressLine(key), say=lambda line: print(line, file=sys.stderr))
    if args.format == "json":
        rows = [
            {
                "model": p.model,
                "what": p.what,
                "ready": p.ready,
                "bytes": p.size,
                "files": [str(f) for f in p.paths],
            }
            for p in found
        ]
        return json.dumps({"folder": str(cache_dir()), "prepared": rows})
    width = max((len(p.model) for p in found), default=5)
    lines = [
        f"{p.model:<{width}}  {p.what:<14}  {'ready' if p.ready else 'missing':<7}  {_bytes(p.size):>9}"
        for p in found
    ]
    return "\n".join([*lines, f"{_bytes(sum(p.size for p in found))} in {cache_dir()}"])


def _bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB" if n else "-"
