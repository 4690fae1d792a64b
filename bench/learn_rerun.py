"""Server-side rerun of the learn page on a 12-token sentence. Target: median 150 ms.

Measured with Streamlit's AppTest, which runs the page script in-process through the same script
runner the server uses (so it includes widget handling and figure serialisation, not the network).
Two cases: a rerun that changes a setting (the seed: every step is recomputed, caches miss) and a
rerun with nothing changed (what a click elsewhere on the page costs). Both with every step on the
page (`step=all`, the most work), and the changed setting also on the default one-step view.
"""

from __future__ import annotations

import statistics
import time

from streamlit.testing.v1 import AppTest

from bench.common import Row
from core.lesson.toy import tokenize

SENTENCE = "The trophy didn't fit in the suitcase because it was too large"
SCRIPT = """
from dashboard.views import learn
learn.render()
"""


def _timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    return elapsed


def _page(view: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    at.query_params["text"] = SENTENCE
    at.query_params["step"] = view
    at.run()
    for _ in range(3):  # warm imports and the figure code paths
        _timed(at)
    return at


def _seed_changes(at: AppTest, repeats: int) -> float:
    changed = []
    for seed in range(1, repeats + 1):
        at.number_input(key="learn_seed").set_value(1000 + seed)
        changed.append(_timed(at))
    return statistics.median(changed)


def run(quick: bool = False) -> list[Row]:
    n_tokens = len(tokenize(SENTENCE).tokens)
    assert n_tokens == 12, n_tokens
    repeats = 5 if quick else 25
    at = _page("all")
    unchanged = statistics.median(_timed(at) for _ in range(repeats))
    changed_all = _seed_changes(at, repeats)
    changed_one = _seed_changes(_page("1"), repeats)
    return [
        Row(
            "learn page rerun, 12 tokens, a setting changed, every step on the page",
            changed_all * 1000,
            "ms",
            target=150,
            note=f"AppTest, median of {repeats} seeds (every step recomputed)",
        ),
        Row(
            "learn page rerun, 12 tokens, a setting changed, step 1 (the default view)",
            changed_one * 1000,
            "ms",
            target=150,
            note=f"AppTest, median of {repeats} seeds",
        ),
        Row(
            "learn page rerun, 12 tokens, nothing changed, every step on the page",
            unchanged * 1000,
            "ms",
            target=150,
            note=f"AppTest, median of {repeats}",
        ),
    ]
