"""axe-core (WCAG 2.1 A/AA) on the learn page: each mode (the toy's sentence, a real BERT, the worked
examples, a real decoder, the translator) on its every step at once (`step=all`) and its heads view,
at 1280x800 and 390x844, and presenter mode on a toy's, a real BERT's and a decoder's step (issue 50)."""

from __future__ import annotations

import pytest

from tests.e2e.axe import sweep

LETTERS = "example=decoder&model=letters"
STATES = [
    ("sentence · step 1", "/"),
    ("sentence · all steps", "/learn?step=all"),
    ("sentence · heads", "/learn?step=heads"),
    ("bert · all steps", "/learn?example=bert&step=all"),
    ("bert · heads", "/learn?example=bert&step=heads"),
    ("cat-mat · all steps", "/learn?example=cat-mat&step=all"),
    ("i-love-nlp · all steps", "/learn?example=i-love-nlp&step=all"),
    ("letters · all steps", f"/learn?{LETTERS}&step=all"),
    ("letters · heads", f"/learn?{LETTERS}&step=heads"),
    ("translator · all steps", "/learn?model=translator&step=all"),
    ("translator · check", "/learn?model=translator&step=check"),
    # presenter mode: one step at a time, large type; each mode once
    ("sentence · step 1 · presenter", "/learn?present=1"),
    ("bert · heads · presenter", "/learn?example=bert&step=heads&present=1"),
    ("letters · mask · presenter", f"/learn?{LETTERS}&step=mask&present=1"),
]
SMOLLM2 = "example=decoder&model=smollm2"
SMOLLM2_STATES = [
    ("smollm2 · all steps", f"/learn?{SMOLLM2}&step=all"),
]


def test_axe_learn(page, app_server):
    sweep(page, app_server.url, "learn", STATES).assert_clean()


@pytest.mark.slow
def test_axe_learn_smollm2(page, app_server):
    sweep(page, app_server.url, "learn", SMOLLM2_STATES).assert_clean()
