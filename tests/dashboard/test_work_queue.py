"""The model-pass queue (dashboard/work_queue.py): first come first served, a fixed number of
workers, each waiting job's place, and a failing job that frees its worker. No timing thresholds:
the jobs are held on events, and every wait has a generous deadline only so a bug fails rather
than hangs."""

from __future__ import annotations

import threading

import pytest

from dashboard.work_queue import WorkQueue, holding_turn, ordinal, place_line

DEADLINE_S = 30.0


def gate_job(started: list, gate: threading.Event, name: str):
    def job():
        started.append(name)
        assert gate.wait(DEADLINE_S)
        return name

    return job


def wait_until(condition) -> None:
    done = threading.Event()
    for _ in range(int(DEADLINE_S / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("the condition never held")


def test_jobs_start_in_the_order_asked_and_no_more_at_once_than_the_workers():
    queue = WorkQueue(2, name="test-order")
    gates = [threading.Event() for _ in range(5)]
    started: list[str] = []
    jobs = [queue.submit(gate_job(started, gates[i], f"job{i}")) for i in range(5)]
    wait_until(lambda: len(started) == 2)
    assert sorted(started) == ["job0", "job1"]  # two workers: the other three wait
    assert [queue.place(j) for j in jobs] == [0, 0, 1, 2, 3]
    gates[1].set()
    assert queue.wait(jobs[1]) == "job1"
    wait_until(lambda: len(started) == 3)
    assert started[2] == "job2" and [queue.place(j) for j in jobs[2:]] == [0, 1, 2]
    for gate in gates:
        gate.set()
    assert [queue.wait(j) for j in jobs] == [f"job{i}" for i in range(5)]
    assert started == [f"job{i}" for i in range(5)]


def test_a_waiting_caller_is_shown_its_place_as_it_moves_up():
    queue = WorkQueue(1, name="test-place")
    gate = threading.Event()
    started: list[str] = []
    first = queue.submit(gate_job(started, gate, "first"))
    wait_until(lambda: started == ["first"])
    second = queue.submit(gate_job(started, threading.Event(), "second"))  # held until released below
    shown: list[int] = []
    result: list = []
    waiter = threading.Thread(target=lambda: result.append(queue.run(lambda: "mine", shown.append)))
    waiter.start()
    wait_until(lambda: shown[-1:] == [2])  # behind "second"
    assert queue.withdraw(second) and not second.done.is_set()  # a job not started can leave the line
    wait_until(lambda: shown[-1:] == [1])
    gate.set()
    waiter.join(DEADLINE_S)
    assert result == ["mine"]
    assert shown == [2, 1, 0]  # the line is cleared once its turn came
    assert queue.wait(first) == "first"


def test_an_error_in_one_job_reaches_its_caller_and_frees_the_worker():
    queue = WorkQueue(1, name="test-error")

    def fails():
        raise ValueError("this text cannot be read")

    with pytest.raises(ValueError, match="cannot be read"):
        queue.run(fails)
    assert queue.run(lambda: "next") == "next"  # the only worker took the next job


def test_in_turn_holds_a_worker_for_the_block_and_gives_it_back():
    queue = WorkQueue(1, name="test-hold")
    inside = threading.Event()
    leave = threading.Event()
    shown: list[int] = []

    def hold():
        with queue.in_turn():
            assert holding_turn()
            assert queue.run(lambda: "nested") == "nested"  # already holding: runs at once
            inside.set()
            assert leave.wait(DEADLINE_S)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(DEADLINE_S)
    assert not holding_turn()  # this thread holds nothing
    waiter = threading.Thread(target=lambda: queue.run(lambda: None, shown.append))
    waiter.start()
    wait_until(lambda: shown == [1])  # the only worker is held by the block
    leave.set()
    holder.join(DEADLINE_S)
    waiter.join(DEADLINE_S)
    assert shown == [1, 0]


def test_an_error_inside_in_turn_gives_the_worker_back():
    queue = WorkQueue(1, name="test-hold-error")
    with pytest.raises(RuntimeError), queue.in_turn():
        raise RuntimeError("the sweep failed")
    assert queue.run(lambda: "after") == "after"


def test_places_are_said_as_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
    ]  # fmt: skip


def test_the_place_line_draws_nothing_outside_a_streamlit_run():
    show = place_line(2)
    show(3)  # no script run here: nothing to draw into, and no error
    show(0)
