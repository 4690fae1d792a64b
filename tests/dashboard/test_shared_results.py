"""Results shared across sessions (dashboard/shared_results.py): identical requests at once cost
one computation, the kept results stay within their byte budget, and a result the room shares
outlasts the students' own. Also the byte budget of what one session keeps (trim_to_budget)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pytest

from dashboard.shared_results import SharedResults, nbytes_of, trim_to_budget
from dashboard.work_queue import WorkQueue

DEADLINE_S = 30.0
KB = 1024


def array(kb: int) -> np.ndarray:
    return np.zeros(kb * KB, dtype=np.uint8)


def test_identical_requests_at_once_compute_once_and_get_the_same_object():
    results = SharedResults(WorkQueue(2, name="test-single-flight"))
    gate = threading.Event()
    calls: list[int] = []

    def compute():
        calls.append(1)
        assert gate.wait(DEADLINE_S)  # held until every student has asked
        return array(4)

    got: list[np.ndarray] = []
    students = [
        threading.Thread(target=lambda i=i: got.append(results.get("preset", compute, 10 * KB, f"s{i}")))
        for i in range(30)
    ]
    for s in students:
        s.start()
    for _ in range(int(DEADLINE_S / 0.01)):  # every student is waiting on the one job
        if len(calls) == 1 and "preset" in results._pending:
            break
        threading.Event().wait(0.01)
    gate.set()
    for s in students:
        s.join(DEADLINE_S)
    assert len(got) == 30 and len(calls) == 1 and results.computed == 1
    assert all(g is got[0] for g in got)
    assert results.get("preset", compute, 10 * KB, reader="late") is got[0]  # kept for later readers


def test_an_error_is_raised_to_every_waiter_and_not_kept():
    results = SharedResults(WorkQueue(1, name="test-shared-error"))
    attempts: list[int] = []

    def fails():
        attempts.append(1)
        raise ValueError("unreadable")

    with pytest.raises(ValueError):
        results.get("bad", fails, 10 * KB)
    assert results.get("bad", lambda: "fine now", 10 * KB) == "fine now"  # tried again
    assert len(attempts) == 1


def test_kept_results_stay_within_the_budget_the_least_recently_read_first_out():
    results = SharedResults(WorkQueue(1, name="test-budget"))
    for name in "abc":
        results.get(name, lambda: array(4), 10 * KB)
    assert results.kept_bytes() <= 10 * KB
    assert "a" not in results and "b" in results and "c" in results
    results.get("b", lambda: array(4), 10 * KB)  # read again: now the most recent
    results.get("d", lambda: array(4), 10 * KB)
    assert "c" not in results and "b" in results and "d" in results


def test_a_result_the_room_shares_outlasts_a_flood_of_own_sentences():
    results = SharedResults(WorkQueue(1, name="test-shared-first"))
    results.get("preset", lambda: array(4), 12 * KB, reader="student0")
    results.get("preset", lambda: array(4), 12 * KB, reader="student1")  # two sessions read it
    for i in range(20):  # the room's own sentences, one each
        results.get(f"own{i}", lambda: array(4), 12 * KB, reader=f"student{i}")
    assert "preset" in results and "own19" in results and "own0" not in results
    assert results.kept_bytes() <= 12 * KB


@dataclass
class Held:
    grid: np.ndarray
    more: dict


def test_nbytes_of_counts_each_array_once_through_dataclasses_and_dicts():
    shared = array(2)
    held = Held(array(3), {"a": shared, "b": [shared, array(1)], "note": "text"})
    assert nbytes_of(held) == 6 * KB


def test_trim_to_budget_drops_the_oldest_first_and_an_entry_too_large_alone():
    kept = {"old": array(4), "mid": array(4), "new": array(4)}
    trim_to_budget(kept, 9 * KB)
    assert list(kept) == ["mid", "new"]
    kept["huge"] = array(20)
    trim_to_budget(kept, 9 * KB)
    assert kept == {}
