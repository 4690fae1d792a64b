"""The head atlas: what every attention head of a model does, measured over a corpus of sentences.

The idea and most of the statistics are Clark, Khandelwal, Levy & Manning (2019), "What Does BERT
Look At? An Analysis of BERT's Attention" (§3: attention to [CLS], [SEP] and punctuation, to the
previous and next token, and the entropy of each head's attention). Pure NumPy, no Streamlit.

Letters: L layers, H heads, T tokens of one sentence. Attention arrays are [layer, head, query_pos,
key_pos]: row i = the token that attends ("from"), column j = the token attended to ("to").

Every statistic is an average over query rows, token-weighted: each row of each sentence counts
once, so a sentence of 30 tokens weighs three times one of 10. For one head and one row i:
- to_cls, to_sep, to_punct: the row's weight summed over [CLS], over [SEP], over punctuation tokens;
- to_self: a_ii; to_prev: a_i,i-1 and to_next: a_i,i+1, averaged over the rows that have that
  neighbour (T - 1 rows per sentence);
- entropy: -sum_j a_ij log2 a_ij, in bits; entropy_norm: the same divided by log2 T (0 = all the
  weight on one token, 1 = spread evenly over the sentence), comparable across lengths;
- distance: sum_j a_ij |i - j|, the average number of positions between a token and what it reads.
[CLS] is the special token that opens the input; [SEP] is every other special token. Punctuation
tokens are non-special tokens made only of Unicode punctuation (category P*, "##" removed).

Roles name a head after the largest share when it is at least ROLE_SHARE, else "broad" when its
entropy_norm is at least BROAD_ENTROPY, else "mixed" (head_roles).

The disk cache (load_or_compute) keeps one .npz per (model key, model fingerprint, corpus text,
STATS_VERSION) under $XDG_CACHE_HOME/attention-explorer/atlas (or ~/.cache/...). The fingerprint
(model_fingerprint) changes when the model's files do (a local folder retrained in place, a Hub id
whose weights were replaced), so an old atlas is never shown for new weights. The engine is not in
the key: both engines give the same numbers (within 1e-5), so an atlas is the model's, whichever
engine computed it (HeadAtlas.engine says which; the page shows it). A file that cannot be read is
ignored and recomputed; a directory that cannot be written leaves the atlas in memory only (logged).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.measures.analysis import piece_text
from core.models.result import AttentionResult

LOG = logging.getLogger(__name__)

__all__ = [
    "BROAD",
    "BROAD_ENTROPY",
    "MIXED",
    "ROLES",
    "ROLE_SHARE",
    "SHARE_ROLES",
    "STATS",
    "STATS_VERSION",
    "AtlasAccumulator",
    "HeadAtlas",
    "cache_dir",
    "cache_path",
    "compute_atlas",
    "corpus_hash",
    "head_roles",
    "is_punctuation",
    "load_atlas",
    "load_or_compute",
    "measure_sentences",
    "model_fingerprint",
    "save_atlas",
    "write_npz_atomically",
]

# Bump when a statistic's definition changes: old cache files then no longer match any key.
STATS_VERSION = 1
STATS = (
    "to_cls",
    "to_sep",
    "to_punct",
    "to_self",
    "to_prev",
    "to_next",
    "entropy",
    "entropy_norm",
    "distance",
)

# Role thresholds (shown on the page).
ROLE_SHARE = 0.5  # a head is named after a target when at least half of its attention goes there
BROAD_ENTROPY = 0.8  # "broad": mean entropy at least 80% of the uniform spread's (entropy_norm)
SHARE_ROLES = (  # (role, the share it is read from); on a tie the earlier one wins
    ("[CLS] sink", "to_cls"),
    ("[SEP] sink", "to_sep"),
    ("punctuation", "to_punct"),
    ("self", "to_self"),
    ("previous token", "to_prev"),
    ("next token", "to_next"),
)
BROAD, MIXED = "broad", "mixed"
ROLES = (*(role for role, _ in SHARE_ROLES), BROAD, MIXED)


@dataclass(frozen=True, eq=False)
class HeadAtlas:
    """Per-head averages over a corpus, each (L, H) float64 (see the module docstring)."""

    to_cls: np.ndarray  # share of a row's attention on [CLS]
    to_sep: np.ndarray  # share on [SEP] (every special token but the first)
    to_punct: np.ndarray  # share on punctuation tokens
    to_self: np.ndarray  # share on the token itself
    to_prev: np.ndarray  # share on the previous token (rows that have one)
    to_next: np.ndarray  # share on the next token (rows that have one)
    entropy: np.ndarray  # row entropy in bits
    entropy_norm: np.ndarray  # row entropy / log2 T, in [0, 1]
    distance: np.ndarray  # sum_j a_ij |i - j|, in positions
    n_sentences: int  # sentences measured
    n_rows: int  # query rows averaged over (tokens, [CLS] and [SEP] included)
    model: str  # the model key it was measured on
    corpus_hash: str  # corpus_hash() of the sentences
    engine: str = ""  # the engine that computed it ("numpy", "torch")

    def __post_init__(self) -> None:
        shapes = {np.shape(self.stat(name)) for name in STATS}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"every statistic must be one (L, H) array; got shapes {sorted(shapes)}")

    def stat(self, name: str) -> np.ndarray:
        if name not in STATS:
            raise KeyError(f"unknown statistic {name!r}; one of {', '.join(STATS)}")
        return getattr(self, name)

    @property
    def n_layers(self) -> int:
        return self.to_cls.shape[0]

    @property
    def n_heads(self) -> int:
        return self.to_cls.shape[1]


# ---- measuring ---------------------------------------------------------------------------------


def is_punctuation(token: str) -> bool:
    """A token made only of Unicode punctuation (categories Pc, Pd, Pe, Pf, Pi, Po, Ps), once the
    WordPiece "##" or a BPE space mark is removed: ".", ",", "'", "##!", "«"."""
    text = piece_text(token)
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


def token_classes(result: AttentionResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cls, sep, punct) boolean masks over the T tokens of a result."""
    special = np.asarray(result.special_mask, dtype=bool)
    cls = special & (np.arange(len(special)) == 0)
    sep = special & ~cls
    punct = ~special & np.array([is_punctuation(t) for t in result.tokens], dtype=bool)
    return cls, sep, punct


class AtlasAccumulator:
    """Running sums over sentences; `finish` divides by the row counts. Sentences of fewer than two
    tokens have no neighbours and no spread to measure: they are skipped (counted in `skipped`)."""

    def __init__(self) -> None:
        self.sums: dict[str, np.ndarray] = {}
        self.n_rows = 0  # rows, for every statistic but to_prev / to_next
        self.n_adjacent = 0  # rows with a previous (equally: a next) token
        self.n_sentences = 0
        self.skipped = 0

    @property
    def seen(self) -> int:
        """Sentences added so far, skipped ones included: where a resumed measurement goes on."""
        return self.n_sentences + self.skipped

    def add(self, result: AttentionResult) -> None:
        a = np.asarray(result.attentions, dtype=np.float64)  # (L, H, T, T)
        t = a.shape[-1]
        if t < 2:
            self.skipped += 1
            return
        cls, sep, punct = token_classes(result)
        pos = np.arange(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(a > 0, a * np.log2(np.where(a > 0, a, 1.0)), 0.0)
        row_entropy = -plogp.sum(axis=-1)  # (L, H, T) bits
        sums = {  # each (L, H): a per-row quantity summed over this sentence's rows
            "to_cls": a[..., cls].sum(axis=(-2, -1)),
            "to_sep": a[..., sep].sum(axis=(-2, -1)),
            "to_punct": a[..., punct].sum(axis=(-2, -1)),
            "to_self": np.diagonal(a, axis1=-2, axis2=-1).sum(axis=-1),
            "to_prev": np.diagonal(a, offset=-1, axis1=-2, axis2=-1).sum(axis=-1),  # a[i, i-1]
            "to_next": np.diagonal(a, offset=1, axis1=-2, axis2=-1).sum(axis=-1),  # a[i, i+1]
            "entropy": row_entropy.sum(axis=-1),
            "entropy_norm": row_entropy.sum(axis=-1) / np.log2(t),
            "distance": (a * np.abs(pos[:, None] - pos[None, :])).sum(axis=(-2, -1)),
        }
        for name, value in sums.items():
            self.sums[name] = self.sums[name] + value if name in self.sums else value
        self.n_rows += t
        self.n_adjacent += t - 1
        self.n_sentences += 1

    def finish(self, *, model: str, corpus_hash: str, engine: str = "") -> HeadAtlas:
        if not self.n_sentences:
            raise ValueError("no sentence of at least two tokens was measured")
        per_row = {
            name: value / (self.n_adjacent if name in ("to_prev", "to_next") else self.n_rows)
            for name, value in self.sums.items()
        }
        return HeadAtlas(
            **per_row,
            n_sentences=self.n_sentences,
            n_rows=self.n_rows,
            model=model,
            corpus_hash=corpus_hash,
            engine=engine,
        )


def compute_atlas(
    results: Iterable[AttentionResult], *, model: str, corpus_hash: str, engine: str = ""
) -> HeadAtlas:
    """The atlas of the given results (all from one model)."""
    acc = AtlasAccumulator()
    for result in results:
        acc.add(result)
    return acc.finish(model=model, corpus_hash=corpus_hash, engine=engine)


Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


def measure_sentences(
    run: Callable[[str], AttentionResult],
    sentences: Sequence[str],
    *,
    model: str,
    engine: str = "",
    progress: Progress | None = None,
    partial: AtlasAccumulator | None = None,
) -> HeadAtlas:
    """Run every sentence through `run` (an engine's run) and measure the atlas, reporting progress
    after each sentence. `partial`: an accumulator that already holds the first `partial.seen`
    sentences (of these same sentences, by this model); it is filled in place and the work goes on
    from there, so a measurement interrupted by an exception (a page rerun) resumes where it stopped."""
    acc = AtlasAccumulator() if partial is None else partial
    total = len(sentences)
    for done in range(acc.seen + 1, total + 1):
        acc.add(run(sentences[done - 1]))  # added whole or not at all: run() raises before any change
        if progress is not None:
            progress(done, total)
    return acc.finish(model=model, corpus_hash=corpus_hash(sentences), engine=engine)


def head_roles(atlas: HeadAtlas) -> np.ndarray:
    """(L, H) role names: the largest share among SHARE_ROLES when it is at least ROLE_SHARE (the
    earlier role on a tie), else BROAD when entropy_norm >= BROAD_ENTROPY, else MIXED."""
    shares = np.stack([atlas.stat(stat) for _, stat in SHARE_ROLES])  # (6, L, H)
    named = np.array([role for role, _ in SHARE_ROLES], dtype=object)[shares.argmax(axis=0)]
    spread = np.where(atlas.entropy_norm >= BROAD_ENTROPY, BROAD, MIXED)
    return np.where(shares.max(axis=0) >= ROLE_SHARE, named, spread).astype(object)


# ---- the disk cache ----------------------------------------------------------------------------


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


def cache_path(model: str, corpus: str, *, fingerprint: str, directory: Path | None = None) -> Path:
    """The cache file of (model key, model fingerprint, corpus hash, STATS_VERSION)."""
    key = f"v{STATS_VERSION}\n{model}\n{fingerprint}\n{corpus}".encode("utf-8", "surrogatepass")
    return (directory or cache_dir()) / f"atlas-{hashlib.sha256(key).hexdigest()[:32]}.npz"


_META = ("n_sentences", "n_rows", "model", "corpus_hash", "engine")


def write_npz_atomically(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Write `arrays` to `path` as .npz through a temporary file in the same folder and os.replace,
    so a reader never sees half a file. False, logged, when the folder cannot be written."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".cache-", suffix=".tmp", delete=False) as f:
            tmp = f.name
            np.savez(f, **arrays)
        os.replace(tmp, path)
        return True
    except OSError as err:
        LOG.warning("cannot write the cache file %s (%s); keeping it in memory only", path, err)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False


def save_atlas(atlas: HeadAtlas, path: Path) -> bool:
    """Write the atlas atomically; False, logged, when the folder cannot be written."""
    arrays = {name: atlas.stat(name) for name in STATS}
    meta = {name: np.asarray(getattr(atlas, name)) for name in _META}
    return write_npz_atomically(path, {"version": np.asarray(STATS_VERSION), **arrays, **meta})


def load_atlas(path: Path, *, model: str, corpus: str) -> HeadAtlas | None:
    """The cached atlas at `path` if it is readable, whole, and of this model, corpus and
    STATS_VERSION; otherwise None (logged), and the caller recomputes."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != STATS_VERSION:
                raise ValueError(f"stats version {int(data['version'])}")
            arrays = {name: np.array(data[name], dtype=np.float64) for name in STATS}
            meta = {name: data[name].item() for name in _META}
        atlas = HeadAtlas(
            **arrays,
            n_sentences=int(meta["n_sentences"]),
            n_rows=int(meta["n_rows"]),
            model=str(meta["model"]),
            corpus_hash=str(meta["corpus_hash"]),
            engine=str(meta["engine"]),
        )
        if atlas.model != model or atlas.corpus_hash != corpus:
            raise ValueError("another model or corpus")
        if atlas.n_rows < 1 or not all(np.isfinite(atlas.stat(name)).all() for name in STATS):
            raise ValueError("empty or not finite")
        return atlas
    except Exception as err:  # a damaged file of any kind: zip, npy header, key, type, value
        LOG.warning("ignoring the atlas cache file %s (%s: %s); recomputing", path, type(err).__name__, err)
        return None


def load_or_compute(
    model: str,
    sentences: Sequence[str],
    compute: Callable[[], HeadAtlas],
    *,
    fingerprint: str,
    directory: Path | None = None,
) -> tuple[HeadAtlas, str]:
    """The atlas of `model` (whose files have `fingerprint`) on `sentences` from the disk cache, or
    from compute() (then saved). Returns (atlas, where from): "disk", "computed" or "computed, not saved"."""
    corpus = corpus_hash(sentences)
    path = cache_path(model, corpus, fingerprint=fingerprint, directory=directory)
    cached = load_atlas(path, model=model, corpus=corpus)
    if cached is not None:
        return cached, "disk"
    atlas = compute()
    return atlas, "computed" if save_atlas(atlas, path) else "computed, not saved"
