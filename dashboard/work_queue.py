"""Model passes take turns: one process-wide, first-come-first-served queue in front of a fixed number
of workers, one per core the process may use.

Thirty students on the hosted demo (two cores) asking for thirty forward passes within a minute
gained nothing from running them at once: each pass got a fifteenth of a core, every one finished
late, and each thread doing a pass kept its own allocator arena and its own expanded weights
(bench/README.md, the classroom on SmolLM2). Here at most `workers` passes run at once, on the
queue's own threads (so only those threads allocate a pass's large arrays), in the order asked; the
others wait in line, and a waiting page can say which place it has ("Waiting for the model: 4th in
line", `place_line`).

Two ways in:
- `run_in_turn(fn, show)`: fn() runs on a worker; the caller waits (its page can stop or rerun
  meanwhile: the work still finishes, for whoever shares its result) and gets fn's value or error.
  For work that draws nothing (a forward pass: dashboard.engines.compute_attention).
- `with in_turn(show):` holds a worker for the block, which runs in the caller's thread: for long
  work that draws as it goes (a sweep with a progress bar).
Either one called from inside the other (or from a worker) runs at once: a turn already held is not
queued for again, which would deadlock.

core/models/llama.py also lets at most COMPACT_PASSES (2) passes into one compact engine at once;
with every dashboard pass queued here that bound is not reached through the dashboard, and it stays
as the engine's own guard for callers outside it (the prepare command, the tests).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

POLL_S = 0.25  # how often a waiting page re-reads its place and checks whether it should stop


def cores() -> int:
    """The cores this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Job:
    """One piece of work in the queue, and its outcome once done."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.started = False
        self.value: Any = None
        self.error: BaseException | None = None

    def execute(self) -> None:
        """Run the job here, keeping its value or its error for whoever waits on it."""
        self.started = True
        try:
            self.value = self.fn()
        except BaseException as err:  # handed to the waiters: the worker goes on to the next job
            self.error = err
        finally:
            self.fn = None  # the closure may hold large arrays
            self.done.set()

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


_LOCAL = threading.local()  # .holding: this thread is a worker or holds a turn (`in_turn`)


def holding_turn() -> bool:
    return getattr(_LOCAL, "holding", False)


class WorkQueue:
    """`workers` threads taking jobs first come, first served."""

    def __init__(self, workers: int, name: str = "model-pass"):
        self.workers = workers
        self._cond = threading.Condition()
        self._waiting: deque[Job] = deque()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        _LOCAL.holding = True
        while True:
            with self._cond:
                while not self._waiting:
                    self._cond.wait()
                job = self._waiting.popleft()
                job.started = True
                self._cond.notify_all()  # every waiting job moved up one place
            job.execute()

    def submit(self, fn: Callable[[], Any]) -> Job:
        return self.enqueue(Job(fn))

    def enqueue(self, job: Job) -> Job:
        with self._cond:
            self._waiting.append(job)
            self._cond.notify_all()
        return job

    def place(self, job: Job) -> int:
        """0 once the job has started (or finished); else its place in line, 1 for the next to start."""
        with self._cond:
            try:
                return self._waiting.index(job) + 1
            except ValueError:
                return 0

    def withdraw(self, job: Job) -> bool:
        """Take a job that has not started out of the line; False when it already started."""
        with self._cond:
            try:
                self._waiting.remove(job)
            except ValueError:
                return False
            self._cond.notify_all()
            return True

    def wait(self, job: Job, show: Callable[[int], None] | None = None, poll_s: float = POLL_S) -> Any:
        """The job's value (or its error raised), calling show(place) each time its place changes
        (0 once it runs) and, in a Streamlit run, letting the run stop or rerun between polls (the
        job still runs: its result may be shared)."""
        self._await(job, job.done, show, poll_s)
        return job.outcome()

    def _await(self, job: Job, ready: threading.Event, show, poll_s: float = POLL_S) -> None:
        check = _run_yield_check()
        shown = None
        while not ready.wait(poll_s if (show or check) else None):
            place = self.place(job)
            if show is not None and place != shown:
                show(place)
                shown = place
            if check is not None:
                check()  # raises when the session asks for a rerun or stops
        if show is not None and shown:
            show(0)

    def run(self, fn: Callable[[], Any], show: Callable[[int], None] | None = None) -> Any:
        """fn() on a worker, in turn; at once where this thread already holds a turn."""
        if holding_turn():
            return fn()
        return self.wait(self.submit(fn), show)

    @contextlib.contextmanager
    def in_turn(self, show: Callable[[int], None] | None = None) -> Iterator[None]:
        """Hold a worker while the block runs in this thread (the worker waits, idle, until it ends)."""
        if holding_turn():
            yield
            return
        admitted, finished = threading.Event(), threading.Event()

        def hold() -> None:
            admitted.set()
            finished.wait()

        job = self.submit(hold)
        try:
            self._await(job, admitted, show)
            _LOCAL.holding = True
            yield
        finally:
            _LOCAL.holding = False
            if not self.withdraw(job):
                finished.set()  # the worker goes back to the line


def _run_yield_check() -> Callable[[], None] | None:
    """The current Streamlit run's stop-or-rerun check; None outside a run and inside a cached
    function (stopping there would throw away the outer computation, as Streamlit's own cache locks
    reason)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import (
            get_run_yield_check,
            in_cached_function,
        )
    except ImportError:  # another Streamlit version: no early stop, the wait just ends with the job
        return None
    return None if in_cached_function.get() else get_run_yield_check()


QUEUE = WorkQueue(cores())


def run_in_turn(fn: Callable[[], Any], show: Callable[[int], None] | None = None) -> Any:
    """fn() on one of the process's workers, in turn (see the module's docstring)."""
    return QUEUE.run(fn, show)


def in_turn(show: Callable[[int], None] | None = None) -> contextlib.AbstractContextManager[None]:
    """Hold one of the process's workers while the block runs (see the module's docstring)."""
    return QUEUE.in_turn(show)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


WAITING = "Waiting for the model: {place} in line. The demo runs {workers} at a time, in the order asked."


def place_line(workers: int | None = None) -> Callable[[int], None]:
    """A `show` for the queue that writes the waiting page's place in an st.empty line, made only if
    the page has to wait and emptied once its turn comes. Outside a Streamlit run, or inside a
    cached function (whose drawing Streamlit would replay), it draws nothing."""
    slot = None
    workers = workers or QUEUE.workers

    def show(place: int) -> None:
        nonlocal slot
        if slot is None:
            if place == 0 or not _may_draw():
                return
            import streamlit as st

            slot = st.empty()
        if place == 0:
            slot.empty()
        else:
            slot.info(WAITING.format(place=ordinal(place), workers=workers), icon=":material/hourglass_top:")

    return show


def _may_draw() -> bool:
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import (
            get_script_run_ctx,
            in_cached_function,
        )
    except ImportError:
        return False
    return get_script_run_ctx(suppress_warning=True) is not None and not in_cached_function.get()
