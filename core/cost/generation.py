"""What generating one more token costs a decoder at context n, with the KV cache and without it
(recomputing the whole context), measured on the engine itself; and what the cache holds.

With the cache, the new token's query meets n cached keys and values: one position's projections
and MLP plus one row of attention, so the time grows slowly with n. Without it, every step runs all
n + 1 positions again. The cache keeps, for every layer and head, a key and a value vector per
position: 2 · L · H · d_head · n numbers.

Letters: n context length, L layers, H heads, d_head = D / H.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.cost.price import MB, Curve, measure

__all__ = ["CONTEXTS", "cache_megabytes", "cache_numbers", "megabytes", "next_token_curves"]

CONTEXTS = (16, 32, 64, 128, 256, 512, 1023)  # 1023 + 1 fills GPT-2's 1024 positions


def cache_numbers(n_layers: int, n_heads: int, d_head: int, n: int) -> int:
    """How many numbers the KV cache holds at context n: a key and a value per layer, head and position."""
    return 2 * n_layers * n_heads * d_head * n


def cache_megabytes(engine, n: int, bytes_per_number: int = 4, *, kv_heads: int | None = None) -> float:
    """The loaded decoder's cache at context n, in MB (10**6 bytes; float32 by default): its key/value heads
    (fewer than its query heads under grouped-query attention), or `kv_heads` to price another
    choice (kv_heads=engine.n_heads: the same model with full multi-head attention)."""
    heads = engine.kv_heads if kv_heads is None else kv_heads
    return cache_numbers(engine.n_layers, heads, engine.head_size, n) * bytes_per_number / MB


def megabytes(mb: float) -> str:
    """A size in MB as the pages print it: two decimals, or three significant digits below 1 MB (a
    tiny model's cache)."""
    return f"{mb:,.2f}" if mb >= 1 else f"{mb:.3g}"


def next_token_curves(
    engine, contexts: Sequence[int] = CONTEXTS, repeats: int = 3, seed: int = 0
) -> tuple[Curve, Curve]:
    """(with the cache, without it): the time of one more token at each context n, the last
    position's logits included, as generate computes them (the fastest of `repeats`: other work on
    the machine only adds time). Contexts past the model's length are left out."""
    contexts = [n for n in contexts if n + 1 <= engine.max_tokens]
    rng = np.random.default_rng(seed)
    cached, recomputed = [], []
    for n in contexts:
        ids = rng.integers(0, engine.config.vocab_size, size=n + 1)
        past = engine.forward(ids[:n]).cache

        def with_cache(new=ids[n:], past=past):
            engine.unembed(engine.forward(new, past=past).hidden_states[-1, -1])

        def without_cache(ids=ids):
            engine.unembed(engine.forward(ids).hidden_states[-1, -1])

        cached.append(measure(with_cache, repeats, fastest=True))
        recomputed.append(measure(without_cache, repeats, fastest=True))
    lengths = tuple(contexts)
    return (
        Curve("with the KV cache", lengths, tuple(s for s, _ in cached), tuple(b for _, b in cached)),
        Curve(
            "recomputing the context",
            lengths,
            tuple(s for s, _ in recomputed),
            tuple(b for _, b in recomputed),
        ),
    )
