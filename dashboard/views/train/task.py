"""One task of the train page as page.py runs it: the same frame (the run picker, the settings,
Start / Pause / Reset, the live fragment, the step control) around each task's own text, record,
charts and findings. page.py holds the letter GPT-2's; translate.py the translator's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskView:
    title: str
    intro: str
    recorded: Callable[[], Any]  # () -> the shipped run's record, or None
    recorded_line: Callable[[Any], str]  # record -> one line on the recorded run's settings
    record_of: Callable[[Any], Any]  # a live run -> its record so far
    curves: Callable[[Any, int, int | None, bool], None]  # (record, total steps, step shown, big)
    maps: Callable[[Any, int, bool], None]  # (record, snapshot index, big)
    after: Callable[[Any, Any, bool, int], None]  # (record, own run or None, big, step shown)
