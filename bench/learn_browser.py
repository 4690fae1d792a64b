"""Cold start in a real browser: from `streamlit run` (everything installed) to the learn page
interactive in headless chromium (script finished, sentence box on screen). Target: 3 s."""

from __future__ import annotations

import statistics
import time

from bench.common import Row
from tests.e2e.harness import APP_IDLE, StreamlitServer, browser


def cold_start_seconds(b) -> tuple[float, float, float]:
    """Seconds from `streamlit run` to (interactive, server healthy, first chart drawn)."""
    server = StreamlitServer().start()
    try:
        healthy = server.wait_healthy()
        page = b.new_page()
        page.goto(server.url)  # the root URL opens the learn page
        page.wait_for_selector(APP_IDLE, timeout=60_000)
        page.get_by_role("textbox").first.wait_for(timeout=60_000)
        interactive = time.perf_counter() - server.started_at
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
        first_chart = time.perf_counter() - server.started_at
        page.close()
        return interactive, healthy, first_chart
    finally:
        server.stop()


def run(quick: bool = False) -> list[Row]:
    repeats = 2 if quick else 5
    with browser() as b:
        samples = [cold_start_seconds(b) for _ in range(repeats)]
    interactive = statistics.median(s[0] for s in samples)
    healthy = statistics.median(s[1] for s in samples)
    first_chart = statistics.median(s[2] for s in samples)
    return [
        Row(
            "learn page interactive after `streamlit run` (browser)",
            interactive,
            "s",
            target=3.0,
            note=f"median of {repeats} cold starts; server healthy after {healthy:.2f} s",
        ),
        Row(
            "learn page first chart drawn after `streamlit run` (browser)",
            first_chart,
            "s",
            note="same runs; charts keep drawing after the page is usable",
        ),
    ]
