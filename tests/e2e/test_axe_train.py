"""axe-core (WCAG 2.1 A/AA) on the train page: both tasks (the letter GPT-2's induction, the
translator's alignment) on their recorded runs, in page and presenter mode, at 1280x800 and 390x844,
and the asking state of a run of one's own (issue 50)."""

from __future__ import annotations

from tests.e2e.axe import sweep

STATES = [
    ("letters", "/train"),
    ("translate", "/train?task=translate"),
    ("letters · own run", "/train?run=own&steps=50"),
    ("letters · presenter", "/train?present=1"),
    ("translate · presenter", "/train?task=translate&present=1"),
]


def test_axe_train(page, app_server):
    sweep(page, app_server.url, "train", STATES).assert_clean()
