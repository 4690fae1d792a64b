"""Memory (issue 5, section 4): 512-token inputs on every explore view, again and again, must not
grow the process without bound. A result at 512 tokens on the bundled model is about 80 MB
(6 layers × 12 heads × 512 × 512 float32, plus hidden states), so a leak of one result per new
text would add hundreds of MB over this test; the page's caches are bounded (compute_attention:
4 results shared by all sessions; the model view's images: 32 entries), so after a warm-up that
fills them the resident set size must level off.

The bound is on memory, not time: RSS from /proc/self/status after a garbage collection, checked
with a generous margin (less than two results' worth of growth over eight more 512-token texts, each
shown in all four views). The figures are printed (pytest -s) for the README's reliability section.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.harness import assert_no_crash, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.slow

VIEWS = ("head", "lines", "model", "focus")
WORDS = (
    "the trophy would not fit in the suitcase because it was too large small bank loan river cat mat".split()
)
WARM_UP_TEXTS = 5  # more than compute_attention's 4 entries (about 80 MB a result)
MEASURED_TEXTS = 8
MARGIN_MB = 160  # two 512-token results


def shown_result(at):
    """The result the explore page is showing (the shared cache holds it; the session, its key)."""
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def rss_mb(field: str = "VmRSS") -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) / 1024


def settled_rss_mb() -> float:
    gc.collect()
    return rss_mb()


def long_text(seed: int) -> str:
    """About 600 words, different for every seed, so each is a new 512-token input."""
    return " ".join(WORDS[(seed * 7 + i * (seed + 3)) % len(WORDS)] for i in range(600))


def show_everywhere(at: AppTest, text: str) -> None:
    at.text_area(key="explore_text").set_value(text).run()
    for view in VIEWS:
        at.segmented_control(key="explore_view").set_value(view).run()
        assert_no_crash(at, view)
        assert n_charts(at), view
    result = shown_result(at)
    assert result.n_tokens == 512 and result.truncated


def test_512_token_inputs_on_every_view_do_not_grow_memory_without_bound():
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE).run()
    assert_no_crash(at)
    warm_up = []
    for seed in range(WARM_UP_TEXTS):
        show_everywhere(at, long_text(seed))
        warm_up.append(settled_rss_mb())
    show_everywhere(at, long_text(0))  # the same input again
    readings = []
    for seed in range(WARM_UP_TEXTS, WARM_UP_TEXTS + MEASURED_TEXTS):
        show_everywhere(at, long_text(seed))
        readings.append(settled_rss_mb())
    half = MEASURED_TEXTS // 2
    trend = sum(readings[half:]) / (MEASURED_TEXTS - half) - sum(readings[:half]) / half
    print(
        f"RSS (MB) while warming up: {', '.join(f'{r:.0f}' for r in warm_up)}; then, one reading per "
        f"new 512-token text shown on {len(VIEWS)} views: {', '.join(f'{r:.0f}' for r in readings)}; "
        f"trend {trend:+.0f} MB; peak {rss_mb('VmHWM'):.0f} MB"
    )
    # the second half of the readings is not higher than the first (a leak of one result per text
    # would raise it by about 320 MB), and no reading exceeds the warm-up's highest by more than that:
    # single readings wander by up to 300 MB on a loaded machine (the allocator, AppTest's threads)
    assert trend < MARGIN_MB, readings
    assert max(readings) < max(warm_up) + 2 * MARGIN_MB, (warm_up, readings)
