"""The training data: seeded sequences in which a random cycle of different letters repeats, its
length changing from sequence to sequence.

    <s> q f w k | q f w k | q f w k | q f ...     (a cycle of n = 4 letters; n is 3 to 12)

Once the cycle has been seen, every letter can be predicted by finding where the current letter
stood before and reading what came next there: copying by content, which an induction head does
(Olsson et al. 2022). Because n changes every sequence, a head that copies from a fixed distance
back gains nothing; because a cycle's letters are different, each letter has one earlier occurrence
and what followed it is certain. The first pass through the cycle cannot be predicted (a letter not
seen yet, at best log 26 ≈ 3.26 nats down to log 15): those targets are the first occurrences, the
rest are repeats, and the loss on each is followed apart.

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
CYCLE = (3, 12)  # the shortest and longest cycle: the copy's distance changes from sequence to sequence


@dataclass(frozen=True)
class Batch:
    inputs: np.ndarray  # (B, T) token ids, inputs[:, 0] the start token
    targets: np.ndarray  # (B, T) the next token at each position: inputs shifted by one
    repeat: np.ndarray  # (B, T) True where the target can be copied from earlier in the sequence


def _sequence(rng: np.random.Generator, length: int, cycle: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """`length` letters: a cycle of n different letters repeated, n drawn from `cycle`; and which
    targets can be copied: from the second pass's second letter on (its first letter follows the
    cycle's last, which has not been seen followed yet)."""
    n = int(rng.integers(cycle[0], cycle[1] + 1))
    letters = np.resize(rng.permutation(len(LETTERS))[:n], length)
    return letters, np.arange(length) >= n + 1


def letter_batch(rng: np.random.Generator, size: int, context: int, cycle: tuple[int, int] = CYCLE) -> Batch:
    """`size` sequences of `context` + 1 tokens (the start token, then letters), cut into inputs and
    targets; cycle: the shortest and longest run of different letters that repeats."""
    rows = [_sequence(rng, context, cycle) for _ in range(size)]
    letters = np.stack([r[0] for r in rows])  # (B, T)
    tokens = np.concatenate([np.full((size, 1), START), letters], axis=1)  # (B, T + 1)
    return Batch(tokens[:, :-1], tokens[:, 1:], np.stack([r[1] for r in rows]))


def probe_sequence(length: int, seed: int = 0) -> np.ndarray:
    """The fixed probe the heads are scored on: <s>, `length` different letters, the same letters
    again: (1 + 2 length,) ids. Its copy starts at position 1 + length; its letters being different,
    each has one earlier occurrence to match, so a prefix-matching score is unambiguous."""
    if not 2 <= length <= len(LETTERS):
        raise ValueError(f"the probe holds 2 to {len(LETTERS)} different letters, got {length}")
    first = np.random.default_rng(seed).permutation(len(LETTERS))[:length]
    return np.concatenate([[START], first, first])
