"""Cold start in a real browser: from `streamlit run` (everything installed) to the learn page
interactive in headless chromium, a fresh browser profile each time. Target: 3 s.

Every moment is taken by the page itself, on the browser's clock, and set against the moment the
server was started (the machine's wall clock is shared):
- interactive: the script has finished, the sentence box is on screen, and the browser's main
  thread is free to take a key press (a moment inside a long task counts from the task's end);
- settled: every chart is drawn and no long task follows for a second.
Polling from Playwright would add up to half a second of its own (it checks every 100-500 ms),
so it only waits here; it does not time.
"""

from __future__ import annotations

import statistics
import time

from bench.common import Row
from tests.e2e.harness import StreamlitServer, browser

# Installed before any of the page's own scripts run: records long tasks, and the first moment
# the script is idle with the sentence box on screen.
RECORDER_JS = """
window.__bench = {ready: null, longTasks: []};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__bench.longTasks.push([e.startTime, e.duration]);
}).observe({type: "longtask", buffered: true});
const check = () => {
  if (window.__bench.ready !== null) return;
  const app = document.querySelector("[data-testid='stApp']");
  const box = document.querySelector("[data-testid='stTextInput'] input");
  if (app && app.getAttribute("data-test-script-state") === "notRunning" && box
      && box.getBoundingClientRect().width > 0) window.__bench.ready = performance.now();
};
new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true});
"""
CHARTS_DRAWN_JS = """() => {
  const plots = [...document.querySelectorAll(".js-plotly-plot")];
  return window.__bench.ready !== null && plots.length > 0
    && plots.every((p) => p.querySelector(".main-svg :is(.trace, g.hm, image)"));
}"""
QUIET_S = 1.0


def _free_after(moment: float, long_tasks: list[list[float]]) -> float:
    """The first moment at or after `moment` that is not inside a long task."""
    for start, duration in sorted(long_tasks):
        if start <= moment < start + duration:
            moment = start + duration
    return moment


def cold_start_seconds(b, path: str = "/") -> tuple[float, float, float]:
    """Seconds from `streamlit run` to (interactive, settled, server healthy)."""
    server = StreamlitServer().start()
    try:
        healthy = server.wait_healthy()
        start_epoch_ms = (time.time() - (time.perf_counter() - server.started_at)) * 1000
        context = b.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(RECORDER_JS)
        page = context.new_page()
        page.goto(server.url + path)
        page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)
        time.sleep(QUIET_S)  # let the long tasks that follow the drawing be recorded
        origin, ready, long_tasks = page.evaluate(
            "[performance.timeOrigin, window.__bench.ready, window.__bench.longTasks]"
        )
        context.close()
    finally:
        server.stop()
    interactive = _free_after(ready, long_tasks)
    settled = max([ready] + [s + d for s, d in long_tasks])
    since_start = origin - start_epoch_ms  # the page's clock starts this many ms after the server
    return (since_start + interactive) / 1000, (since_start + settled) / 1000, healthy


def run(quick: bool = False) -> list[Row]:
    repeats = 3 if quick else 9
    rows = []
    with browser() as b:
        for path, name in (("/", "step 1, the default view"), ("/?step=all", "every step on one page")):
            samples = [cold_start_seconds(b, path) for _ in range(repeats)]
            interactive = [s[0] for s in samples]
            rows += [
                Row(
                    f"learn page interactive after `streamlit run` (browser), {name}",
                    statistics.median(interactive),
                    "s",
                    target=3.0,
                    note=f"median of {repeats} cold starts, fresh browser profile each "
                    f"(range {min(interactive):.2f}-{max(interactive):.2f} s); server healthy after "
                    f"{statistics.median(s[2] for s in samples):.2f} s",
                ),
                Row(
                    f"learn page settled after `streamlit run` (browser), {name}",
                    statistics.median(s[1] for s in samples),
                    "s",
                    note="same runs: every chart drawn and the browser's last long task over",
                ),
            ]
    return rows
