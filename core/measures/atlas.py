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

A decoder (GPT-2) has no [CLS] or [SEP] and sees no next token, so its atlas has other statistics
(DECODER_STATS) and roles (DECODER_ROLES), measured with decoder=True:
- its first token's row is left out of every average: it can attend only to itself (its row is
  always [1]), so it says nothing about the head. Each sentence gives T - 1 rows;
- entropy_norm divides each row's entropy by log2 of the tokens that row can see (i + 1), not log2 T:
  an even spread over what a token sees is 1, as it is for an encoder;
- to_first: the share on the first token, the decoder's attention sink (Xiao et al. 2023, "Efficient
  Streaming Language Models with Attention Sinks"): core.measures.decoder_reads.first_token_share;
- induction: each head's prefix-matching score on a seeded sequence of random tokens repeated twice
  (Olsson et al. 2022; core.measures.induction), a test of its own rather than an average over the
  corpus: INDUCTION_LENGTH tokens (at most half the context) from INDUCTION_SEED, so it reproduces.
A head whose induction score is at least INDUCTION_SCORE is named "induction" whatever its shares
on the corpus; otherwise the share rule above applies to DECODER_SHARE_ROLES.

The disk cache (load_or_compute) keeps one .npz per (model key, model fingerprint, corpus text,
STATS_VERSION) under $XDG_CACHE_HOME/attention-explorer/atlas (or ~/.cache/...). The fingerprint
(model_fingerprint) changes when the model's files do (a local folder retrained in place, a Hub id
whose weights were replaced), so an old atlas is never shown for new weights. The engine is not in
the key: both engines give the same numbers (within 1e-5), so an atlas is the model's, whichever
engine computed it (HeadAtlas.engine says which; the page shows it). A file that cannot be read is
ignored and recomputed; a directory that cannot be written leaves the atlas in memory only (logged).
A decoder's file also holds to_first, induction and the test's length and seed; a decoder's file
without them (written before the atlas measured them) is ignored too, and recomputed. `python -m core
prepare` (core/prepare.py) writes these files ahead of time, as the atlas page would.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.measures.atlas_rows import is_punctuation, row_sums
from core.measures.cache_files import cache_dir, corpus_hash, model_fingerprint, write_npz_atomically
from core.measures.induction import Induction, induction, load_or_measure
from core.models.result import AttentionResult

LOG = logging.getLogger(__name__)

__all__ = ["ALL_ROLES", "ALL_STATS", "BROAD", "BROAD_ENTROPY", "DECODER_ROLES", "DECODER_SHARE_ROLES"]
__all__ += ["DECODER_STATS", "FIRST_TOKEN", "INDUCTION", "INDUCTION_LENGTH", "INDUCTION_SCORE"]
__all__ += ["INDUCTION_SEED", "MIXED", "ROLES", "ROLE_SHARE", "SHARE_ROLES", "STATS", "STATS_VERSION"]
__all__ += [
    "AtlasAccumulator",
    "HeadAtlas",
    "Progress",
    "cache_dir",
    "cache_path",
    "compute_atlas",
    "corpus_hash",
]
__all__ += ["head_roles", "is_punctuation", "load_atlas", "load_or_compute", "measure_induction"]
__all__ += ["measure_sentences", "model_fingerprint", "save_atlas", "write_npz_atomically"]

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

# A decoder's: no [CLS], no [SEP], no next token (the causal mask hides it: its share is always 0).
DECODER_STATS = ("to_first", "induction", "to_punct", "to_self", "to_prev", *STATS[-3:])
ALL_STATS = (*STATS, "to_first", "induction")
FIRST_TOKEN, INDUCTION = "first-token sink", "induction"
DECODER_SHARE_ROLES = (  # the same rule as SHARE_ROLES; the first token is where a decoder's heads park
    (FIRST_TOKEN, "to_first"),
    ("punctuation", "to_punct"),
    ("self", "to_self"),
    ("previous token", "to_prev"),
)
# The induction test: one copy's length and the seed of its random tokens (the CLI's defaults).
INDUCTION_LENGTH, INDUCTION_SEED = 50, 0
# The induction score is a share of attention too (from the second copy, on the token that followed
# the same token last time), so the same "half or more" rule names a head after it; an even spread
# over what a token of the second copy sees gives about ln 2 / n there (0.014 for n = 50). It wins
# over the corpus's shares: in prose an induction head mostly has nothing to copy and parks its
# attention elsewhere (often on the first token), so on the corpus alone it can look like a sink.
INDUCTION_SCORE = 0.5
DECODER_ROLES = (INDUCTION, *(role for role, _ in DECODER_SHARE_ROLES), BROAD, MIXED)
ALL_ROLES = (*ROLES, INDUCTION, FIRST_TOKEN)  # every role of either kind (the role map's colours)


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
    # a decoder's (None for an encoder; both or neither):
    to_first: np.ndarray | None = None  # share on the first token (rows 1..T-1): the attention sink
    induction: np.ndarray | None = None  # prefix-matching score on repeated random tokens
    induction_length: int = 0  # one copy's length in that test
    induction_seed: int = 0  # the seed of its random tokens

    def __post_init__(self) -> None:
        if (self.to_first is None) != (self.induction is None):
            raise ValueError("a decoder's atlas has both to_first and induction; an encoder's neither")
        shapes = {np.shape(getattr(self, name)) for name in (*STATS, *self.stats)}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"every statistic must be one (L, H) array; got shapes {sorted(shapes)}")

    @property
    def decoder(self) -> bool:
        return self.to_first is not None

    @property
    def stats(self) -> tuple[str, ...]:
        """The statistics that mean something for this kind of model, in the page's order."""
        return DECODER_STATS if self.decoder else STATS

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles head_roles can give this kind of model."""
        return DECODER_ROLES if self.decoder else ROLES

    def stat(self, name: str) -> np.ndarray:
        if name not in self.stats:
            raise KeyError(f"unknown statistic {name!r}; one of {', '.join(self.stats)}")
        return getattr(self, name)

    @property
    def n_layers(self) -> int:
        return self.to_cls.shape[0]

    @property
    def n_heads(self) -> int:
        return self.to_cls.shape[1]


# ---- measuring ---------------------------------------------------------------------------------


class AtlasAccumulator:
    """Running sums over sentences; `finish` divides by the row counts. Sentences of fewer than two
    tokens have no neighbours and no spread to measure: they are skipped (counted in `skipped`).
    decoder=True: a causal model's statistics (see the module docstring)."""

    def __init__(self, decoder: bool = False) -> None:
        self.decoder = decoder
        self.sums: dict[str, np.ndarray] = {}
        self.n_rows = 0  # rows, for every statistic but to_prev / to_next (a decoder: T - 1 a sentence)
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
        for name, value in row_sums(a, result, self.decoder).items():
            self.sums[name] = self.sums[name] + value if name in self.sums else value
        self.n_rows += t - 1 if self.decoder else t
        self.n_adjacent += t - 1
        self.n_sentences += 1

    def finish(
        self, *, model: str, corpus_hash: str, engine: str = "", induction: Induction | None = None
    ) -> HeadAtlas:
        """The atlas; a decoder's needs `induction` (measure_induction's), an encoder's none."""
        if not self.n_sentences:
            raise ValueError("no sentence of at least two tokens was measured")
        if self.decoder != (induction is not None):
            raise ValueError("a decoder's atlas needs its induction scores; an encoder's takes none")
        per_row = {
            name: value / (self.n_adjacent if name in ("to_prev", "to_next") else self.n_rows)
            for name, value in self.sums.items()
        }
        if induction is not None:
            per_row["induction"] = np.asarray(induction.scores, dtype=np.float64)
        return HeadAtlas(
            **per_row,
            n_sentences=self.n_sentences,
            n_rows=self.n_rows,
            model=model,
            corpus_hash=corpus_hash,
            engine=engine,
            induction_length=0 if induction is None else induction.length,
            induction_seed=0 if induction is None else induction.seed,
        )


def measure_induction(
    engine, *, model: str | None = None, fingerprint: str | None = None, directory: Path | None = None
) -> Induction:
    """The atlas's induction test on a decoder engine (forward, unembed): core.measures.induction
    on INDUCTION_LENGTH random tokens (at most half the model's context) from INDUCTION_SEED, twice.
    Given the model key and its files' fingerprint, kept on disk (core.measures.induction.load_or_measure)."""
    length = min(INDUCTION_LENGTH, engine.max_tokens // 2)
    if model is None or fingerprint is None:
        return induction(engine, length, INDUCTION_SEED)
    return load_or_measure(
        engine, model, length, INDUCTION_SEED, fingerprint=fingerprint, directory=directory
    )


def compute_atlas(
    results: Iterable[AttentionResult],
    *,
    model: str,
    corpus_hash: str,
    engine: str = "",
    induction: Induction | None = None,
) -> HeadAtlas:
    """The atlas of the given results (all from one model); `induction` given for a decoder's."""
    acc = AtlasAccumulator(decoder=induction is not None)
    for result in results:
        acc.add(result)
    return acc.finish(model=model, corpus_hash=corpus_hash, engine=engine, induction=induction)


Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


def measure_sentences(
    run: Callable[[str], AttentionResult],
    sentences: Sequence[str],
    *,
    model: str,
    engine: str = "",
    progress: Progress | None = None,
    partial: AtlasAccumulator | None = None,
    induction: Induction | None = None,
) -> HeadAtlas:
    """Run every sentence through `run` (an engine's run) and measure the atlas, reporting progress
    after each sentence. `partial`: an accumulator that already holds the first `partial.seen`
    sentences (of these same sentences, by this model); it is filled in place and the work goes on
    from there, so a measurement interrupted by an exception (a page rerun) resumes where it stopped.
    `induction`: a decoder's induction test (measure_induction); then `partial` has decoder=True."""
    acc = AtlasAccumulator(decoder=induction is not None) if partial is None else partial
    total = len(sentences)
    for done in range(acc.seen + 1, total + 1):
        acc.add(run(sentences[done - 1]))  # added whole or not at all: run() raises before any change
        if progress is not None:
            progress(done, total)
    return acc.finish(model=model, corpus_hash=corpus_hash(sentences), engine=engine, induction=induction)


def head_roles(atlas: HeadAtlas) -> np.ndarray:
    """(L, H) role names: the largest share among SHARE_ROLES (a decoder's: DECODER_SHARE_ROLES)
    when it is at least ROLE_SHARE (the earlier role on a tie), else BROAD when entropy_norm >=
    BROAD_ENTROPY, else MIXED; a decoder's head whose induction score is at least INDUCTION_SCORE
    is INDUCTION whatever its shares."""
    share_roles = DECODER_SHARE_ROLES if atlas.decoder else SHARE_ROLES
    shares = np.stack([atlas.stat(stat) for _, stat in share_roles])  # (roles, L, H)
    named = np.array([role for role, _ in share_roles], dtype=object)[shares.argmax(axis=0)]
    spread = np.where(atlas.entropy_norm >= BROAD_ENTROPY, BROAD, MIXED)
    roles = np.where(shares.max(axis=0) >= ROLE_SHARE, named, spread).astype(object)
    if atlas.decoder:
        roles[atlas.induction >= INDUCTION_SCORE] = INDUCTION
    return roles


# ---- the disk cache ----------------------------------------------------------------------------


def cache_path(model: str, corpus: str, *, fingerprint: str, directory: Path | None = None) -> Path:
    """The cache file of (model key, model fingerprint, corpus hash, STATS_VERSION)."""
    key = f"v{STATS_VERSION}\n{model}\n{fingerprint}\n{corpus}".encode("utf-8", "surrogatepass")
    return (directory or cache_dir()) / f"atlas-{hashlib.sha256(key).hexdigest()[:32]}.npz"


_META = ("n_sentences", "n_rows", "model", "corpus_hash", "engine")
_DECODER_ARRAYS, _DECODER_META = ("to_first", "induction"), ("induction_length", "induction_seed")


def save_atlas(atlas: HeadAtlas, path: Path) -> bool:
    """Write the atlas atomically; False, logged, when the folder cannot be written."""
    names = (*STATS, *_DECODER_ARRAYS, *_DECODER_META) if atlas.decoder else STATS
    arrays = {name: np.asarray(getattr(atlas, name)) for name in (*names, *_META)}
    return write_npz_atomically(path, {"version": np.asarray(STATS_VERSION), **arrays})


def load_atlas(path: Path, *, model: str, corpus: str, decoder: bool = False) -> HeadAtlas | None:
    """The cached atlas at `path` if it is readable, whole, and of this model, corpus, STATS_VERSION
    and kind (a decoder's file holds to_first and induction: one written before it had them is not
    used); otherwise None (logged), and the caller recomputes."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != STATS_VERSION:
                raise ValueError(f"stats version {int(data['version'])}")
            names = (*STATS, *_DECODER_ARRAYS) if decoder else STATS
            arrays = {name: np.array(data[name], dtype=np.float64) for name in names}
            meta = {name: data[name].item() for name in (*_META, *(_DECODER_META if decoder else ()))}
        atlas = HeadAtlas(
            **arrays,
            n_sentences=int(meta["n_sentences"]),
            n_rows=int(meta["n_rows"]),
            model=str(meta["model"]),
            corpus_hash=str(meta["corpus_hash"]),
            engine=str(meta["engine"]),
            induction_length=int(meta.get("induction_length", 0)),
            induction_seed=int(meta.get("induction_seed", 0)),
        )
        if atlas.model != model or atlas.corpus_hash != corpus:
            raise ValueError("another model or corpus")
        if atlas.n_rows < 1 or not all(np.isfinite(getattr(atlas, name)).all() for name in names):
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
    decoder: bool = False,
) -> tuple[HeadAtlas, str]:
    """The atlas of `model` (whose files have `fingerprint`; `decoder`: a causal model's) on
    `sentences` from the disk cache, or from compute() (then saved). Returns (atlas, where from):
    "disk", "computed" or "computed, not saved"."""
    corpus = corpus_hash(sentences)
    path = cache_path(model, corpus, fingerprint=fingerprint, directory=directory)
    cached = load_atlas(path, model=model, corpus=corpus, decoder=decoder)
    if cached is not None:
        return cached, "disk"
    atlas = compute()
    return atlas, "computed" if save_atlas(atlas, path) else "computed, not saved"
