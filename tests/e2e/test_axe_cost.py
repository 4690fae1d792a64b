"""axe-core (WCAG 2.1 A/AA) on the cost page: the bundled BERT and a decoder in page mode, and
presenter mode's parts (one screen each), at 1280x800 and 390x844 (issue 50)."""

from __future__ import annotations

from tests.e2e.axe import sweep

STATES = [
    ("bert", "/cost"),
    ("bert · bigbird", "/cost?variant=bigbird"),
    ("letters", "/cost?model=letters"),
    ("price · presenter", "/cost?present=1"),
    ("head · presenter", "/cost?present=1&part=head"),
    ("model · presenter", "/cost?present=1&part=model"),
    ("letters · next · presenter", "/cost?present=1&model=letters&part=next"),
]


def test_axe_cost(page, app_server):
    sweep(page, app_server.url, "cost", STATES).assert_clean()
