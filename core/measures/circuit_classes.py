"""The circuit search's rules: which measured figures put a head in which class (Wang et al. 2022's
classes), as pure functions of (L, H) grids, so every rule is tested on grids built by hand.

Each class is decided by a path-patching figure (the restored fraction of the clean-vs-ABC logit
difference along the class's paths) and, where the paper names one, a figure of where the head
attends or what its OV circuit writes (core/measures/circuit_heads.py). A head is put in the first
class it passes, in the search's order (name mover, negative name mover, S-inhibition, induction,
duplicate-token, previous-token); every figure stays in the evidence whatever the class.

    name mover            direct >= direct threshold, END -> IO >= attention_io and > END -> S,
                          copy score >= copy
    negative name mover   direct <= -direct threshold, the same attention test, negative copy >= copy
    S-inhibition          restored through the name movers' queries >= s_inhibition
    induction             restored through the S-inhibition heads' keys + values >= kv, and
                          S2 -> S1 + 1 >= attention_s2 and >= S2 -> S1
    duplicate-token       the same path figure, and S2 -> S1 >= attention_s2 and > S2 -> S1 + 1
    previous-token        restored through the induction heads' keys >= previous, and
                          S1 + 1 -> S1 >= attention_previous

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

Head = tuple[int, int]

__all__ = [
    "Thresholds",
    "induction_duplicate",
    "mover_failures",
    "name_movers",
    "previous_token",
    "s_inhibition",
]


@dataclass(frozen=True)
class Thresholds:
    """The figures a head must reach; restored fractions are shares of the clean - ABC logit difference."""

    direct: float = 0.05  # |restored| along sender -> logits (other heads held clean)
    attention_io: float = 0.1  # mean attention END -> IO (and more than END -> S1 + S2)
    copy: float = 0.5  # share of name residuals whose OV output ranks the name first (last: negative)
    s_inhibition: float = 0.05  # restored along sender -> the name movers' queries
    kv: float = 0.05  # restored along sender -> the S-inhibition heads' keys, plus along -> their values
    attention_s2: float = 0.1  # S2 -> S1 + 1 (induction) or S2 -> S1 (duplicate-token)
    previous: float = 0.05  # restored along sender -> the induction heads' keys
    attention_previous: float = 0.2  # S1 + 1 -> S1

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _above(grid: np.ndarray, threshold: float, taken: Iterable[Head] = ()) -> list[Head]:
    """Heads whose figure is >= threshold (NaN never is), not already taken, largest figure first."""
    taken = set(taken)
    grid = np.asarray(grid, np.float64)
    passed = ~np.isnan(grid) & (grid >= threshold)
    heads = [(int(a), int(b)) for a, b in zip(*np.nonzero(passed), strict=True)]
    return sorted((x for x in heads if x not in taken), key=lambda x: -grid[x])


def name_movers(
    direct: np.ndarray,
    end_io: np.ndarray,
    end_s: np.ndarray,
    copy: np.ndarray,
    negative_copy: np.ndarray,
    t: Thresholds,
) -> tuple[list[Head], list[Head], list[Head]]:
    """(name movers, negative name movers, heads with a direct effect past the threshold that fail the
    attention or copy test), each largest |direct| first."""
    looks = (np.asarray(end_io) >= t.attention_io) & (np.asarray(end_io) > np.asarray(end_s))
    positive = _above(direct, t.direct)
    negative = _above(-np.asarray(direct, np.float64), t.direct)
    movers = [x for x in positive if looks[x] and copy[x] >= t.copy]
    negatives = [x for x in negative if looks[x] and negative_copy[x] >= t.copy and x not in movers]
    failed = [x for x in positive + negative if x not in movers and x not in negatives]
    return movers, negatives, sorted(failed, key=lambda x: -abs(direct[x]))


def mover_failures(
    x: Head,
    direct: np.ndarray,
    end_io: np.ndarray,
    end_s: np.ndarray,
    copy: np.ndarray,
    negative_copy: np.ndarray,
    t: Thresholds,
) -> list[str]:
    """Why a head with a direct effect is not a (negative) name mover: the tests it fails, in words."""
    io, s = float(end_io[x]), float(end_s[x])
    score, what = (copy[x], "copy score") if direct[x] > 0 else (negative_copy[x], "negative copy score")
    failed = []
    if io < t.attention_io:
        failed.append(f"END -> IO {io:.2f} < {t.attention_io:g}")
    if io <= s:
        failed.append(f"END -> S {s:.2f} >= END -> IO {io:.2f}")
    if score < t.copy:
        failed.append(f"{what} {float(score):.2f} < {t.copy:g}")
    return failed


def s_inhibition(q: np.ndarray, taken: Iterable[Head], t: Thresholds) -> list[Head]:
    """Heads acting on the logits through the name movers' queries."""
    return _above(q, t.s_inhibition, taken)


def induction_duplicate(
    kv: np.ndarray, s2_s1_next: np.ndarray, s2_s1: np.ndarray, taken: Iterable[Head], t: Thresholds
) -> tuple[list[Head], list[Head], list[Head]]:
    """(induction, duplicate-token, unassigned): heads acting through the S-inhibition heads' keys and
    values, split by what they attend to from S2; unassigned: the path figure without either pattern."""
    induction, duplicate, unassigned = [], [], []
    for x in _above(kv, t.kv, taken):
        after, same = s2_s1_next[x], s2_s1[x]
        if after >= t.attention_s2 and after >= same:
            induction.append(x)
        elif same >= t.attention_s2:
            duplicate.append(x)
        else:
            unassigned.append(x)
    return induction, duplicate, unassigned


def previous_token(k: np.ndarray, s1_next_s1: np.ndarray, taken: Iterable[Head], t: Thresholds) -> list[Head]:
    """Heads acting through the induction heads' keys that attend from S1 + 1 to S1."""
    return [x for x in _above(k, t.previous, taken) if s1_next_s1[x] >= t.attention_previous]
