"""axe-core (WCAG 2.1 A/AA) on the atlas page: an encoder (the bundled BERT), a decoder (the letter
GPT-2) and the translator, on the corpus and on one sentence, at 1280x800 and 390x844, and each in
presenter mode (issue 50)."""

from __future__ import annotations

from tests.e2e.axe import sweep

STATES = [
    ("bert · corpus", "/atlas"),
    ("bert · sentence", "/atlas?on=sentence"),
    ("letters · corpus", "/atlas?model=letters"),
    ("letters · sentence", "/atlas?model=letters&on=sentence"),
    ("translator", "/atlas?model=translator"),
    ("bert · presenter", "/atlas?present=1"),
    ("letters · presenter", "/atlas?model=letters&present=1"),
    ("translator · presenter", "/atlas?model=translator&present=1"),
]


def test_axe_atlas(page, app_server):
    sweep(page, app_server.url, "atlas", STATES).assert_clean()
