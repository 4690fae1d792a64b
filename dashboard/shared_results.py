"""Results shared by every session: computed once per input, however many sessions ask at once, and
kept within a budget in bytes.

Thirty students opening the teacher's example ask for one forward pass: the first request queues it
(dashboard/work_queue.py) and every identical request that arrives meanwhile waits for that same job
instead of queuing its own ("single flight"). The results are kept while they fit in the budget, the
least recently read going first; a result read by two sessions or more (the teacher's example) goes
only after every result a single session has read (the students' own sentences), so the room's own
sentences do not push it out before the rest of the room has read it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from dashboard.work_queue import QUEUE, Job, WorkQueue, holding_turn


def nbytes_of(value: Any, _seen: set[int] | None = None) -> int:
    """The bytes of the NumPy arrays inside `value` (through dataclass fields, dicts, lists and
    tuples), each array counted once; what a cached result costs, the rest being small."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes_of(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sum(nbytes_of(v, seen) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes_of(v, seen) for v in value)
    return 0


@dataclasses.dataclass
class _Entry:
    value: Any
    nbytes: int
    readers: set[str]


class SharedResults:
    """A process-wide cache of computed results, keyed by their input; see the module docstring."""

    def __init__(self, queue: WorkQueue = QUEUE):
        self.queue = queue
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._pending: dict[Hashable, Job] = {}
        self.computed = 0  # how many results were computed (the single-flight test counts them)

    def get(
        self,
        key: Hashable,
        compute: Callable[[], Any],
        budget: int,
        reader: str = "",
        show: Callable[[int], None] | None = None,
    ) -> Any:
        """The result for `key`: kept, else the one being computed, else compute() queued for a
        worker (at once where this thread already holds a turn). `budget` bounds the kept results in
        bytes; `reader` names the session (a result two sessions read is kept longer)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                entry.readers.add(reader)
                return entry.value
            job = self._pending.get(key)
            # a thread holding a turn computes itself rather than wait on a job still in line behind it:
            # that same job, taken out of the line (its other waiters get its outcome), or a new one
            inline = holding_turn() and (job is None or self.queue.withdraw(job))
            if job is None:
                job = Job(lambda: None)
                job.fn = lambda: self._computed(job, key, compute, budget, reader)
                self._pending[key] = job
                if not inline:
                    self.queue.enqueue(job)
        if inline:
            job.execute()
            return job.outcome()
        return self.queue.wait(job, show)

    def _computed(self, job: Job, key: Hashable, compute: Callable[[], Any], budget: int, reader: str) -> Any:
        try:
            value = compute()
        except BaseException:
            with self._lock:
                self._forget(job, key)  # an error is not kept: the next request tries again
            raise
        with self._lock:
            self._forget(job, key)
            self.computed += 1
            self._entries[key] = _Entry(value, nbytes_of(value), {reader})
            self._entries.move_to_end(key)
            self._evict(budget)
        return value

    def _forget(self, job: Job, key: Hashable) -> None:
        if self._pending.get(key) is job:
            del self._pending[key]

    def _evict(self, budget: int) -> None:
        """Drop results until the rest fit in `budget` bytes: those a single session read first,
        each group least recently read first."""
        total = sum(e.nbytes for e in self._entries.values())
        while total > budget and self._entries:
            single = next((k for k, e in self._entries.items() if len(e.readers) < 2), None)
            key = single if single is not None else next(iter(self._entries))
            total -= self._entries.pop(key).nbytes

    def kept_bytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def trim_to_budget(kept: dict, budget: int, size: Callable[[Any], int] = nbytes_of) -> None:
    """Drop `kept`'s oldest entries (insertion order) until the rest fit in `budget` bytes; the
    newest too if it alone does not fit. What one session keeps (engines.session_result, compare's
    patched grids) is bounded this way."""
    sizes = {k: size(v) for k, v in kept.items()}
    total = sum(sizes.values())
    for k in list(kept):
        if total <= budget:
            break
        del kept[k]
        total -= sizes[k]
