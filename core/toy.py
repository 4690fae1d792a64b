"""The learn page's toy model: a word tokenizer, seeded embeddings and weights, and a step trace.

Nothing here is trained. Every number comes from a seeded random generator, so a sentence and a
seed always give the same matrices, and a teacher can reproduce a slide by sharing a link.
The trace keeps every intermediate by name, like TransformerLens' hook points (scores before the
softmax, probs after), so the page can show each of the seven steps of the articles.

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
import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from core.attention import (
    MASK_KINDS,
    build_mask,
    merge_heads,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from core.layers import layer_norm, linear, residual

__all__ = [
    "MAX_TOKENS",
    "STEP_NAMES",
    "SaturationCurve",
    "Tokenized",
    "ToySettings",
    "ToyWeights",
    "Trace",
    "clean_text",
    "embed",
    "positional_encoding",
    "softmax_saturation",
    "tokenize",
    "toy_weights",
    "trace",
    "trace_from_inputs",
    "trace_from_projections",
]

MAX_TOKENS = 64  # the learn page shows every T x T matrix; beyond 64 rows nobody can read them

# Names of the intermediates a trace can hold, in the order the page shows them.
STEP_NAMES = (
    "embeddings",  # (T, d_model) one seeded vector per token string
    "positions",  # (T, d_model) sinusoidal positional encoding (zeros when switched off)
    "X",  # (T, d_model) the input of the attention layer: embeddings + positions
    "W_Q",  # (d_model, H*d_k)
    "W_K",  # (d_model, H*d_k)
    "W_V",  # (d_model, H*d_k)
    "W_O",  # (H*d_k, d_model)
    "Q",  # (H, T, d_k)
    "K",  # (H, T, d_k)
    "V",  # (H, T, d_k)
    "scores",  # (H, T_q, T_k) Q K^T
    "scaled",  # (H, T_q, T_k) scores / sqrt(d_k), or the scores unchanged when scaling is off
    "probs",  # (H, T_q, T_k) softmax of the scaled scores, masked entries exactly 0
    "context",  # (H, T_q, d_k) probs V, one block per head
    "concat",  # (T_q, H*d_k) the heads side by side
    "output",  # (T_q, d_model) concat W^O
    "residual",  # (T_q, d_model) X + output
    "normed",  # (T_q, d_model) LayerNorm(X + output)
)


# ---- 0) text -> tokens ----------------------------------------------------------------------

_JOINERS = {"\u200d", "\u200c"}  # zero-width joiner / non-joiner: glue emoji sequences, Persian words
_APOSTROPHES = {"'", "\u2019"}
_SKIN_TONES = range(0x1F3FB, 0x1F400)  # emoji modifiers (category Sk) attach to the emoji before them
_TAGS = range(0xE0020, 0xE0080)  # tag characters spell subdivision flags (England, Scotland)
_REGIONAL = range(0x1F1E6, 0x1F200)  # two regional indicators make one flag
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: object) -> str:
    """Any object -> a str that is safe to tokenize and to send to the browser.

    NFC-normalises (so an accent typed as two code points is one letter), replaces lone
    surrogates, which UTF-8 cannot encode, with U+FFFD, and never raises.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    text = _SURROGATE.sub("\ufffd", text)
    return unicodedata.normalize("NFC", text)


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


@dataclass(frozen=True, eq=False)
class Trace:
    """Every intermediate of one attention layer, by name (see STEP_NAMES)."""

    query_tokens: tuple[str, ...]  # rows of scores / probs: the tokens that attend ("from")
    key_tokens: tuple[str, ...]  # columns: the tokens attended to ("to")
    arrays: dict[str, np.ndarray]  # name -> array; steps an example does not have are absent
    n_heads: int
    d_k: int
    scale: bool  # whether the scores were divided by sqrt(d_k)
    mask: np.ndarray | None = None  # bool (T_q, T_k), True = may attend; None = no mask
    ln_eps: float = 1e-5
    given: tuple[str, ...] = field(default=())  # names that were inputs rather than computed

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __contains__(self, name: object) -> bool:
        return name in self.arrays

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.key_tokens


def _as_2d(name: str, a: object) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains a value that is not a finite number")
    return arr


def _attend(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    *,
    scale: bool,
    mask: np.ndarray | None,
    x: np.ndarray | None,
    w_o: np.ndarray | None,
    ln_eps: float,
) -> dict[str, np.ndarray]:
    """Steps 3 to 7 from per-head projections (H, T, d_k): the part every trace shares."""
    d_k = query.shape[-1]
    # 3) scores: every query against every key
    scores = query @ np.swapaxes(key, -1, -2)  # (H, T_q, T_k)
    # 4) scale, so the scores' spread does not grow with d_k
    scaled = scores / math.sqrt(d_k) if scale else scores.copy()
    # 5) + 6) softmax and weighted sum, by the core function (masking included)
    context, probs = scaled_dot_product_attention(query, key, value, mask, scale=scale)  # (H, T_q, d_k)
    out = {"scores": scores, "scaled": scaled, "probs": probs, "context": context}
    # 7) merge heads, output projection, residual, layer norm
    out["concat"] = merge_heads(context)  # (T_q, H*d_k)
    if w_o is not None:
        if w_o.shape[0] != out["concat"].shape[-1]:
            raise ValueError(
                f"W_O must have {out['concat'].shape[-1]} rows (heads × d_k) to multiply the "
                f"concatenated heads, got shape {w_o.shape}"
            )
        out["output"] = linear(out["concat"], w_o)  # (T_q, d_model)
        if x is not None:
            if x.shape != out["output"].shape:
                raise ValueError(
                    f"the residual adds X {x.shape} to the output {out['output'].shape}: "
                    "their shapes must match"
                )
            out["residual"] = residual(x, out["output"])
            out["normed"] = layer_norm(out["residual"], eps=ln_eps)
    return out


def trace_from_inputs(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray | None,
    *,
    tokens: tuple[str, ...] | list[str],
    n_heads: int = 1,
    scale: bool = True,
    mask: np.ndarray | None = None,
    ln_eps: float = 1e-5,
    extra: dict[str, np.ndarray] | None = None,
) -> Trace:
    """The whole layer from an explicit X (T, d_model) and weights (x @ W, W shaped (d_in, d_out)).

    The seeded toy model and a presenter's edited numbers both run through here.
    extra: arrays to keep in the trace as they are (the toy model's embeddings and positions).
    """
    x = _as_2d("X", x)
    w_q, w_k, w_v = _as_2d("W_Q", w_q), _as_2d("W_K", w_k), _as_2d("W_V", w_v)
    tokens = tuple(tokens)
    if len(tokens) != x.shape[0]:
        raise ValueError(f"X has {x.shape[0]} rows but there are {len(tokens)} tokens")
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        if w.shape[0] != x.shape[1]:
            raise ValueError(
                f"{name} must have d_model = {x.shape[1]} rows to multiply X, got shape {w.shape}"
            )
        if w.shape[1] % n_heads:
            raise ValueError(f"{name} has {w.shape[1]} columns, which {n_heads} heads cannot share equally")
    if w_q.shape != w_k.shape:
        raise ValueError(f"W_Q {w_q.shape} and W_K {w_k.shape} must have the same shape (queries meet keys)")
    w_o = None if w_o is None else _as_2d("W_O", w_o)
    # 2) project, then give each head its own block of columns
    query = split_heads(linear(x, w_q), n_heads)  # (H, T, d_k)
    key = split_heads(linear(x, w_k), n_heads)  # (H, T, d_k)
    value = split_heads(linear(x, w_v), n_heads)  # (H, T, d_v)
    arrays = dict(extra or {})
    arrays.update({"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": query, "K": key, "V": value})
    if w_o is not None:
        arrays["W_O"] = w_o
    arrays.update(_attend(query, key, value, scale=scale, mask=mask, x=x, w_o=w_o, ln_eps=ln_eps))
    return Trace(
        query_tokens=tokens,
        key_tokens=tokens,
        arrays=arrays,
        n_heads=n_heads,
        d_k=query.shape[-1],
        scale=scale,
        mask=None if mask is None else np.asarray(mask, dtype=bool),
        ln_eps=ln_eps,
        given=("X", "W_Q", "W_K", "W_V", "W_O"),
    )


def trace_from_projections(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    *,
    query_tokens: tuple[str, ...] | list[str],
    key_tokens: tuple[str, ...] | list[str],
    scale: bool = True,
    mask: np.ndarray | None = None,
    x: np.ndarray | None = None,
    w_o: np.ndarray | None = None,
    ln_eps: float = 1e-5,
) -> Trace:
    """The layer from steps 3 on, when Q, K and V are given instead of X and weights.

    This is how the articles present their examples: they print Q, K, V but not W^Q, W^K, W^V.
    query (T_q, d_k), key (T_k, d_k), value (T_k, d_v), one head; or (H, T, d) for H heads.
    x (T_q, d_model), when given with w_o, adds the residual and the layer norm.
    """
    arrs = []
    for name, a in (("Q", query), ("K", key), ("V", value)):
        arr = np.asarray(a, dtype=np.float64)
        if arr.ndim == 2:
            arr = arr[None]  # one head: (1, T, d)
        if arr.ndim != 3:
            raise ValueError(f"{name} must be (T, d) or (H, T, d), got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains a value that is not a finite number")
        arrs.append(arr)
    query, key, value = arrs
    query_tokens, key_tokens = tuple(query_tokens), tuple(key_tokens)
    if query.shape[1] != len(query_tokens) or key.shape[1] != len(key_tokens):
        raise ValueError("Q needs one row per query token and K, V one row per key token")
    arrays: dict[str, np.ndarray] = {"Q": query, "K": key, "V": value}
    given = ["Q", "K", "V"]
    if x is not None:
        x = _as_2d("X", x)
        arrays["X"] = x
        given.append("X")
    if w_o is not None:
        w_o = _as_2d("W_O", w_o)
        arrays["W_O"] = w_o
        given.append("W_O")
    arrays.update(_attend(query, key, value, scale=scale, mask=mask, x=x, w_o=w_o, ln_eps=ln_eps))
    return Trace(
        query_tokens=query_tokens,
        key_tokens=key_tokens,
        arrays=arrays,
        n_heads=query.shape[0],
        d_k=query.shape[-1],
        scale=scale,
        mask=None if mask is None else np.asarray(mask, dtype=bool),
        ln_eps=ln_eps,
        given=tuple(given),
    )


def trace(tokens: tuple[str, ...] | list[str], settings: ToySettings) -> Trace:
    """The toy model on a token list: seeded embeddings (+ positions), seeded weights, every step."""
    tokens = tuple(tokens)
    if not tokens:
        raise ValueError("there are no tokens to attend over: type a sentence")
    t = len(tokens)
    # 1) embeddings (+ positions)
    embeddings = embed(tokens, settings.d_model, settings.seed)  # (T, d_model)
    positions = positional_encoding(t, settings.d_model) if settings.positional else np.zeros_like(embeddings)
    w = toy_weights(settings)
    return trace_from_inputs(
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
