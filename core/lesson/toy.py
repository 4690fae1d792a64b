"""The learn page's toy model: a word tokenizer, seeded embeddings and weights, and a step trace.

Nothing here is trained. Every number comes from a seeded random generator, so a sentence and a
seed always give the same matrices, and a teacher can reproduce a slide by sharing a link.
`trace` fills a core.lesson.trace.LayerTrace with every intermediate by name, so the page shows each of
the seven steps of the articles exactly as it shows a real BERT layer's.

References: Vaswani et al. 2017, "Attention Is All You Need" (eq. 1, section 3.2.2, and the
sinusoidal positional encoding of section 3.5); The Annotated Transformer; nanoGPT's GPTConfig
(one settings dataclass, invariants checked early with a message that says what to do).

Letters used in shape comments:
    T        number of tokens (T_q queries, T_k keys when they differ)
    d_model  width of a token vector       H    number of heads
    d_k      width of one head's queries, keys and values (d_v = d_k here)
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from dataclasses import dataclass

import numpy as np

from core.lesson.attention import MASK_KINDS, build_mask, softmax
from core.lesson.trace import LayerTrace, from_inputs
from core.text import clean_input

__all__ = [
    "MAX_TOKENS",
    "SaturationCurve",
    "Tokenized",
    "ToySettings",
    "ToyWeights",
    "clean_text",
    "embed",
    "positional_encoding",
    "softmax_saturation",
    "tokenize",
    "toy_weights",
    "trace",
]

MAX_TOKENS = 64  # the learn page shows every T x T matrix; beyond 64 rows nobody can read them

# ---- 0) text -> tokens ----------------------------------------------------------------------

_JOINERS = {"\u200d", "\u200c"}  # zero-width joiner / non-joiner: glue emoji sequences, Persian words
_APOSTROPHES = {"'", "\u2019"}
_SKIN_TONES = range(0x1F3FB, 0x1F400)  # emoji modifiers (category Sk) attach to the emoji before them
_TAGS = range(0xE0020, 0xE0080)  # tag characters spell subdivision flags (England, Scotland)
_REGIONAL = range(0x1F1E6, 0x1F200)  # two regional indicators make one flag


def clean_text(text: object) -> str:
    """Any object -> a str that is safe to tokenize and to send to the browser.

    The shared cleaning (core.text.clean_input: lone surrogates, which UTF-8 cannot encode, become
    U+FFFD), then NFC, so an accent typed as two code points is one letter. Never raises.
    """
    return unicodedata.normalize("NFC", clean_input(text)[0])


def _kind(ch: str) -> str:
    cat = unicodedata.category(ch)
    if cat[0] in "LN" or cat == "Pc":
        return "word"
    if cat[0] == "M" or ord(ch) in _SKIN_TONES or ord(ch) in _TAGS:
        return "mark"
    if ch in _JOINERS:
        return "joiner"
    if cat[0] == "Z" or cat in ("Cc", "Cf") or ch.isspace():
        # spaces, line breaks, control characters, and invisible format characters such as the
        # right-to-left override, which could otherwise reorder how a label is drawn
        return "space"
    return "symbol"


@dataclass(frozen=True)
class Tokenized:
    tokens: tuple[str, ...]  # at most max_tokens tokens, in order
    total: int  # how many tokens the whole text has

    @property
    def truncated(self) -> bool:
        return self.total > len(self.tokens)


def tokenize(text: object, max_tokens: int = MAX_TOKENS) -> Tokenized:
    """Split text into words and punctuation marks, keeping what a reader sees as one symbol together.

    A word is a run of letters, digits and underscores in any script (accents, Arabic, Hebrew, CJK),
    with inner apostrophes ("don't"). Every other visible character is a token of its own, except
    that emoji sequences stay whole (skin tones, ZWJ families, flags, keycaps). Never raises.
    """
    text = clean_text(text)
    tokens: list[str] = []
    current: list[str] = []
    current_kind = ""  # "word" or "symbol" while a token is open
    glue = False  # the last character was a joiner: the next one continues the token

    def flush() -> None:
        nonlocal current_kind, glue
        if current:
            tokens.append("".join(current))
            current.clear()
        current_kind, glue = "", False

    for i, ch in enumerate(text):
        kind = _kind(ch)
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch in _APOSTROPHES and current_kind == "word" and nxt and _kind(nxt) == "word":
            current.append(ch)  # don't, l'homme: the apostrophe stays inside the word
            continue
        if kind == "space":
            flush()
        elif kind == "mark":
            if current:
                current.append(ch)
            else:  # a mark with nothing before it is shown as a symbol of its own
                current.append(ch)
                current_kind = "symbol"
        elif kind == "joiner":
            if current and nxt and _kind(nxt) != "space":
                current.append(ch)
                glue = True
        elif kind == "word":
            if current_kind != "word" and not glue:
                flush()
            current.append(ch)
            current_kind, glue = "word", False
        else:  # a symbol: punctuation, emoji, maths, currency
            pair_flag = (
                current_kind == "symbol"
                and len(current) == 1
                and ord(current[0]) in _REGIONAL
                and ord(ch) in _REGIONAL
            )
            if not (glue or pair_flag):
                flush()
            current.append(ch)
            current_kind, glue = "symbol", False
    flush()
    return Tokenized(tokens=tuple(tokens[:max_tokens]), total=len(tokens))


# ---- settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToySettings:
    d_model: int = 8  # width of every token vector, and of the layer's output
    d_k: int | None = None  # width of one head's queries, keys and values; None = d_model // n_heads
    n_heads: int = 2  # heads that attend in parallel, each with its own W^Q_i, W^K_i, W^V_i
    seed: int = 0  # seeds embeddings and weights: same sentence + same seed = same numbers
    scale: bool = True  # divide the scores by sqrt(d_k) before the softmax (switch off to see why)
    mask: str = "none"  # which key positions a query may see: none, causal, local or strided
    window: int = 2  # local: how far each side a token sees; strided: the stride
    positional: bool = False  # add sinusoidal positional encodings to the embeddings
    ln_eps: float = 1e-5  # LayerNorm epsilon, inside the square root as in torch.nn.LayerNorm

    def __post_init__(self) -> None:
        problem = self.problem()
        if problem:
            raise ValueError(problem)

    def problem(self) -> str | None:
        """The first thing wrong with these settings, said so a user knows what to change; or None."""
        for name in ("d_model", "n_heads", "seed", "window"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                return f"{name} must be a whole number, got {value!r}"
        if not 1 <= self.d_model <= 1024:
            return f"d_model must be between 1 and 1024, got {self.d_model}"
        if not 1 <= self.n_heads <= 64:
            return f"n_heads must be between 1 and 64, got {self.n_heads}"
        if self.d_k is None:
            if self.d_model % self.n_heads:
                lower = self.d_model - self.d_model % self.n_heads
                upper = lower + self.n_heads
                fits = f"{lower} or {upper}" if lower else f"{upper}"
                return (
                    f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}) when d_k is "
                    f"automatic (d_k = d_model ÷ n_heads): choose d_model {fits}, another number of heads, "
                    f"or set d_k yourself"
                )
        elif (
            isinstance(self.d_k, bool)
            or not isinstance(self.d_k, int | np.integer)
            or not 1 <= self.d_k <= 1024
        ):
            return (
                f"d_k must be a whole number between 1 and 1024 (or None for d_model ÷ n_heads), "
                f"got {self.d_k!r}"
            )
        if not 0 <= self.seed < 2**32:
            return f"seed must be between 0 and {2**32 - 1}, got {self.seed}"
        if self.mask not in MASK_KINDS:
            return f"unknown mask kind {self.mask!r}; choose one of {', '.join(MASK_KINDS)}"
        if self.mask == "local" and self.window < 0:
            return f"the local window must be 0 or more, got {self.window}"
        if self.mask == "strided" and self.window < 1:
            return f"the stride must be 1 or more, got {self.window}"
        if not (isinstance(self.ln_eps, float | int) and self.ln_eps > 0):
            return f"ln_eps must be a positive number, got {self.ln_eps!r}"
        return None

    @property
    def head_dim(self) -> int:
        """d_k as used: the explicit value, or d_model // n_heads."""
        return self.d_k if self.d_k is not None else self.d_model // self.n_heads


# ---- 1) embeddings and weights --------------------------------------------------------------


def _token_seed(token: str) -> int:
    # A stable hash (Python's hash() changes between runs). Case-folded like an uncased vocabulary,
    # so "The" and "the" share a vector: the page shows what that means without positions.
    digest = hashlib.blake2b(token.casefold().encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def embed(tokens: tuple[str, ...] | list[str], d_model: int, seed: int) -> np.ndarray:
    """One seeded N(0, 1) vector per token string: the same word gets the same vector wherever it is."""
    out = np.empty((len(tokens), d_model))  # (T, d_model)
    for i, token in enumerate(tokens):
        out[i] = np.random.default_rng([seed, _token_seed(token)]).standard_normal(d_model)
    return out


def positional_encoding(t: int, d_model: int) -> np.ndarray:
    """Sinusoidal encoding: PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)."""
    pos = np.arange(t)[:, None]  # (T, 1)
    i = np.arange(0, d_model, 2)[None, :]  # (1, ceil(d_model / 2))
    angle = pos / np.power(10000.0, i / d_model)
    pe = np.zeros((t, d_model))  # (T, d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


@dataclass(frozen=True, eq=False)
class ToyWeights:
    w_q: np.ndarray  # (d_model, H*d_k)
    w_k: np.ndarray  # (d_model, H*d_k)
    w_v: np.ndarray  # (d_model, H*d_k)
    w_o: np.ndarray  # (H*d_k, d_model)


def toy_weights(settings: ToySettings) -> ToyWeights:
    """Seeded weights with standard deviation 1/sqrt(d_in), so that a projection of N(0, 1) inputs
    has entries of variance about 1: then Q K^T has variance about d_k, the effect scaling undoes."""
    d, inner = settings.d_model, settings.n_heads * settings.head_dim

    def draw(tag: int, d_in: int, d_out: int) -> np.ndarray:
        rng = np.random.default_rng([settings.seed, 0x70C, tag])  # one stream per matrix
        return rng.standard_normal((d_in, d_out)) / math.sqrt(d_in)

    return ToyWeights(
        w_q=draw(1, d, inner), w_k=draw(2, d, inner), w_v=draw(3, d, inner), w_o=draw(4, inner, d)
    )


# ---- the trace ------------------------------------------------------------------------------


def trace(tokens: tuple[str, ...] | list[str], settings: ToySettings) -> LayerTrace:
    """The toy model on a token list: seeded embeddings (+ positions), seeded weights, every step."""
    tokens = tuple(tokens)
    if not tokens:
        raise ValueError("there are no tokens to attend over: type a sentence")
    t = len(tokens)
    # 1) embeddings (+ positions)
    embeddings = embed(tokens, settings.d_model, settings.seed)  # (T, d_model)
    positions = positional_encoding(t, settings.d_model) if settings.positional else np.zeros_like(embeddings)
    w = toy_weights(settings)
    return from_inputs(
        embeddings + positions,
        w.w_q,
        w.w_k,
        w.w_v,
        w.w_o,
        tokens=tokens,
        n_heads=settings.n_heads,
        scale=settings.scale,
        mask=build_mask(settings.mask, t, settings.window),
        ln_eps=settings.ln_eps,
        extra={"embeddings": embeddings, "positions": positions},
    )


# ---- why scale: softmax saturation ----------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SaturationCurve:
    d_k: np.ndarray  # (N,) the head widths tried
    n_keys: int  # keys per softmax row
    n_trials: int  # random rows averaged for each d_k
    max_weight_scaled: np.ndarray  # (N,) mean over trials of the largest weight in a row
    max_weight_unscaled: np.ndarray  # (N,)
    entropy_scaled: np.ndarray  # (N,) mean entropy of a row, in bits; log2(n_keys) = uniform
    entropy_unscaled: np.ndarray  # (N,)


def softmax_saturation(
    seed: int,
    d_ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
    n_keys: int = 8,
    n_trials: int = 1000,
) -> SaturationCurve:
    """How peaked the softmax gets as d_k grows, with and without dividing by sqrt(d_k).

    Query and key entries are N(0, 1), as the toy projections are. A dot product of two such
    d_k-vectors has variance d_k, so unscaled scores spread further apart as d_k grows and the
    softmax puts nearly all its weight on one key (its gradient then vanishes). Divided by
    sqrt(d_k) the variance stays 1 and the rows keep the same spread whatever d_k is.

    Sampling shortcut: for a fixed query q, the dot products q·k_j with independent N(0, 1) keys
    are independent N(0, |q|^2), and |q|^2 follows a chi-square law with d_k degrees of freedom.
    Drawing |q| and n_keys standard normals gives exactly the same scores as drawing whole
    vectors, at a cost that does not grow with d_k.
    """
    rng = np.random.default_rng([seed, 0x5A7])
    out = {k: [] for k in ("ms", "mu", "es", "eu")}
    for d_k in d_ks:
        q_norm = np.sqrt(rng.chisquare(d_k, size=(n_trials, 1)))  # (N, 1): |q|
        scores = q_norm * rng.standard_normal((n_trials, n_keys))  # (N, n_keys): q·k_j
        for suffix, s in (("s", scores / math.sqrt(d_k)), ("u", scores)):
            p = softmax(s, axis=-1)
            logp = np.log2(np.where(p > 0, p, 1.0))  # 0 · log 0 counts as 0
            out["m" + suffix].append(p.max(axis=-1).mean())
            out["e" + suffix].append(-(p * logp).sum(axis=-1).mean())
    return SaturationCurve(
        d_k=np.asarray(d_ks),
        n_keys=n_keys,
        n_trials=n_trials,
        max_weight_scaled=np.asarray(out["ms"]),
        max_weight_unscaled=np.asarray(out["mu"]),
        entropy_scaled=np.asarray(out["es"]),
        entropy_unscaled=np.asarray(out["eu"]),
    )
