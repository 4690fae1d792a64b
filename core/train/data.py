"""The training data: seeded sequences of random letters in which a stretch of letters comes back
later in the same sequence, at a distance that changes from sequence to sequence.

    <s> f q x | b k e w r | m | b k e w r | z o a ...
        fresh    a segment  gap  its copy    fresh

A letter of the copy (after its first) can be predicted only by finding where the letter before it
stood earlier and reading what came next there: copying by content, which an induction head does
(Olsson et al. 2022). Because the segment's length and the gap change every sequence, a head that
copies from a fixed distance back gains nothing. Every other letter is fresh: uniformly random,
unpredictable (log 26 ≈ 3.26 nats at best). Each target is labelled a repeat or a first occurrence,
so the loss on each can be followed apart.

Letters: B sequences, T positions (the model's context).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

__all__ = ["LETTERS", "START", "VOCAB_SIZE", "Batch", "letter_batch", "probe_sequence"]

LETTERS = string.ascii_lowercase
START = len(LETTERS)  # the start token's id, after a..z (0..25): every sequence begins with it
START_TEXT = "<s>"
VOCAB_SIZE = len(LETTERS) + 1


@dataclass(frozen=True)
class Batch:
    inputs: np.ndarray  # (B, T) token ids, inputs[:, 0] the start token
    targets: np.ndarray  # (B, T) the next token at each position: inputs shifted by one
    repeat: np.ndarray  # (B, T) True where the target can be copied from earlier in the sequence


def _sequence(
    rng: np.random.Generator, length: int, segment: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """One sequence of `length` letters (no start token) holding a segment and its copy, and which
    positions hold a predictable letter (the copy's, after its first)."""
    n = int(rng.integers(segment[0], min(segment[1], length // 2) + 1))  # the segment's length
    spare = length - 2 * n  # fresh letters before, between and after
    before, gap = sorted(rng.integers(0, spare + 1, size=2))
    gap -= before
    letters = rng.integers(0, len(LETTERS), size=length)
    start = before + n + gap  # where the copy begins
    letters[start : start + n] = letters[before : before + n]
    repeat = np.zeros(length, dtype=bool)
    repeat[start + 1 : start + n] = True
    return letters, repeat


def letter_batch(
    rng: np.random.Generator, size: int, context: int, segment: tuple[int, int] = (4, 30)
) -> Batch:
    """`size` sequences of `context` + 1 tokens (the start token, then letters), cut into inputs and
    targets; segment: the shortest and longest repeated stretch."""
    rows = [_sequence(rng, context, segment) for _ in range(size)]
    letters = np.stack([r[0] for r in rows])  # (B, T)
    tokens = np.concatenate([np.full((size, 1), START), letters], axis=1)  # (B, T + 1)
    return Batch(tokens[:, :-1], tokens[:, 1:], np.stack([r[1] for r in rows]))


def probe_sequence(length: int, seed: int = 0) -> np.ndarray:
    """The fixed probe the heads are scored on: <s>, `length` random letters, the same letters
    again: (1 + 2 length,) ids. Its copy starts at position 1 + length."""
    first = np.random.default_rng(seed).integers(0, len(LETTERS), size=length)
    return np.concatenate([[START], first, first])
