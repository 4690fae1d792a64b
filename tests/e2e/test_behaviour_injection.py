"""Injection in a real browser on the explore page's ablation, attribution, similarity and Q/K
views: the payloads of tests/e2e/test_injection.py carried by links as the text and as the focus
word, with a tampered `ablate` list or layer beside them; nothing runs, nothing becomes markup,
and no error box appears."""

from __future__ import annotations

import urllib.parse

import pytest

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import wait_charts
from tests.e2e.test_injection import PAYLOADS, SENTENCES, assert_nothing_ran, text_param

VIEWS = (
    {"view": "ablation", "ablate": "99,-1,2.3"},
    {"view": "attribution"},
    {"view": "ablation", "ablate": "0.0,<b>1.1</b>", "merge": "1"},
    {"view": "attribution", "merge": "1", "hide": "1"},
    {"view": "similarity", "layer": "6", "merge": "1"},  # and the corpus search below it
    {"view": "qk", "layer": "<b>2</b>", "head": "3"},
)


# every view once, each with one group of payloads (the groups taken in turn)
CASES = [(view, list(SENTENCES)[n % len(SENTENCES)]) for n, view in enumerate(VIEWS)]


@pytest.mark.parametrize(("view", "group"), CASES, ids=[f"{v['view']}-{g}" for v, g in CASES])
def test_behaviour_views_from_a_link(page, app_server, view, group):
    params = {"text": SENTENCES[group], **view, "focus": PAYLOADS[next(iter(PAYLOADS))]}
    page.goto(f"{app_server.url}/explore?" + urllib.parse.urlencode(params))
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    assert_nothing_ran(page)
    assert text_param(page) == SENTENCES[group]
