"""axe-core (WCAG 2.1 A/AA) on the compare page: its presets on the bundled BERT, a decoder, and
presenter mode's three screens, at 1280x800 and 390x844 (issue 50). "Which heads carry it" asks before
its long work: the asking state is what is checked."""

from __future__ import annotations

from tests.e2e.axe import sweep

STATES = [
    ("trophy · bert", "/compare"),
    ("bank · bert", "/compare?preset=bank"),
    ("repeat · bert", "/compare?preset=repeat"),
    ("own · bert", "/compare?preset=own&text=warm&text2=cold"),
    ("trophy · letters", "/compare?model=letters"),
    ("side · presenter", "/compare?present=1"),
    ("diff · presenter", "/compare?present=1&show=diff"),
    ("patch · presenter", "/compare?present=1&show=patch"),
    ("side · letters · presenter", "/compare?present=1&model=letters"),
]


def test_axe_compare(page, app_server):
    sweep(page, app_server.url, "compare", STATES).assert_clean()
