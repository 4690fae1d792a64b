"""Many browser sessions at once on the explore page: the load and isolation test (issue 5 §3).

One real server (`streamlit run`, loopback, fresh process, the app's INFO log on) and one headless
chromium; each session is its own Playwright context (own cookies, own websocket, own Streamlit
session), all driven concurrently with Playwright's asyncio API.

Each session opens the explore page with its own sentence (all at once, on a server that has not
loaded the model yet). When every session has its page, all of them make `interactions` changes at
the same time: a new sentence typed in the text box, the layer or head moved with the keyboard on
the slider, another view chosen. After each change a session waits for the server's answer (the URL
holds the new state, the script has finished, the charts are drawn and show the expected title or
tokens) and checks isolation: its own marker word is in the text box, the URL and the charts, and
no other session's marker word is anywhere on its page.

Reported: time per interaction (p50, p95, max), errors (timeouts, exceptions or error boxes in the
page, JavaScript errors), leaks, how many times the server loaded a model (from its log: one
"loading model" line per load, written by dashboard/engines.py's cached loader), and the
server's peak RSS (VmHWM). Bounded: every wait has a timeout and the whole run a deadline.

Used by tests/e2e/test_load.py (small, in CI) and bench/load.py (full size).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlencode

from tests.e2e.harness import StreamlitServer, async_browser

# One single-token (bundled vocabulary) marker word per session; other sessions' words must never
# show up on a session's page.
MARKERS = (
    "zebra", "violin", "castle", "pencil", "harbor", "rabbit", "coffee", "planet",
    "garden", "winter", "doctor", "bridge", "forest", "silver", "orange", "window",
)  # fmt: skip
VERBS = ("watched", "painted", "carried", "found", "moved", "cleaned", "opened", "followed")
OBJECTS = ("the old boat", "a red kite", "three small boxes", "the heavy door", "a blue lamp")
PLACES = ("river", "station", "market", "school", "beach", "bakery", "museum")
# The interaction cycle: (kind, argument). Views are switched through the segmented control.
PLAN = (
    ("text", None),
    ("layer", None),
    ("head", None),
    ("view", "lines"),
    ("layer", None),
    ("text", None),
    ("view", "model"),
    ("view", "focus"),
    ("text", None),
    ("view", "head"),
)
VIEW_LABELS = {"head": "Head", "lines": "Lines", "model": "Model (all heads)", "focus": "Token focus"}
CHARTS = {"head": 1, "lines": 1, "model": 1, "focus": 2}
N_LAYERS, N_HEADS = 6, 12  # the bundled model
PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"
LOAD_LINE = re.compile(r"loading model (\S+)")

# The page has finished answering: URL params as expected, script idle, n charts drawn, and each of
# `texts` found in the charts' SVG text.
ANSWERED = """([params, n, texts]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) if (q.get(k) !== v) return false;
  const plots = [...document.querySelectorAll(".js-plotly-plot")].filter(
    (p) => p.querySelector(".main-svg :is(.trace, g.hm, image)"));
  if (plots.length < n) return false;
  const svgText = plots.map((p) => p.querySelector(".main-svg").parentElement.textContent).join(" ");
  return texts.every((t) => svgText.includes(t));
}"""
# Everything a user can read on the page, plus the text box and the URL.
PAGE_TEXT = """() => [
  document.body.innerText,
  [...document.querySelectorAll(".js-plotly-plot text")].map((t) => t.textContent).join(" "),
  [...document.querySelectorAll("textarea, input")].map((e) => e.value).join(" "),
  decodeURIComponent(location.search),
].join("\\n")"""


def sentence_for(session: int, step: int) -> str:
    """A sentence unique to (session, step) whose marker word names the session."""
    marker = MARKERS[session % len(MARKERS)]
    verb = VERBS[(session + step) % len(VERBS)]
    thing = OBJECTS[(session * 3 + step) % len(OBJECTS)]
    place = PLACES[(session + 2 * step) % len(PLACES)]
    return f"On day {step + 1} the {marker} {verb} {thing} near the {place}."


@dataclass
class LoadReport:
    sessions: int
    interactions: int  # per session
    times: list[float] = field(default_factory=list)  # seconds per interaction, every session
    kinds: list[str] = field(default_factory=list)  # what each of `times` was: text, layer, head, view
    first_open: list[float] = field(default_factory=list)  # seconds to the first page, per session
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    model_loads: list[str] = field(default_factory=list)  # model keys, one per load in the log
    peak_rss_mb: float = 0.0
    seconds: float = 0.0  # wall time of the sessions

    @property
    def completed(self) -> int:
        return len(self.times)

    def percentile(self, q: float) -> float:
        """The q-th percentile (nearest rank) of the interaction times, in seconds."""
        if not self.times:
            return math.nan
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]

    def by_kind(self) -> dict[str, float]:
        """Median seconds per kind of interaction."""
        kinds = sorted(set(self.kinds))
        return {
            k: statistics.median(t for t, kk in zip(self.times, self.kinds, strict=True) if kk == k)
            for k in kinds
        }

    def summary(self) -> str:
        return (
            f"load: {self.sessions} sessions × {self.interactions} interactions on /explore: "
            f"{self.completed} done, {len(self.errors)} errors, {len(self.leaks)} leaks; "
            f"per interaction p50 {self.percentile(50):.2f} s, p95 {self.percentile(95):.2f} s, "
            f"max {max(self.times, default=math.nan):.2f} s (medians: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in self.by_kind().items())
            + "); first page (all sessions at once) median "
            f"{statistics.median(self.first_open) if self.first_open else math.nan:.1f} s; "
            f"model loads {len(self.model_loads)}; server peak RSS {self.peak_rss_mb:.0f} MB; "
            f"wall {self.seconds:.0f} s"
        )

    def to_json(self) -> str:
        data = asdict(self)
        data.update(
            p50_s=self.percentile(50),
            p95_s=self.percentile(95),
            completed=self.completed,
            median_s_by_kind=self.by_kind(),
        )
        return json.dumps(data, indent=2)


class SessionFailed(Exception):
    pass


async def _answered(page, params: dict[str, str], n_charts: int, texts: list[str], timeout_ms: float):
    await page.wait_for_function(ANSWERED, arg=[params, n_charts, texts], timeout=timeout_ms, polling="raf")
    problems = page.locator(PROBLEMS)
    if await problems.count():
        raise SessionFailed(f"error shown in the page: {(await problems.first.inner_text())[:300]}")


async def _check_isolation(page, session: int, text: str, view: str, report: LoadReport, step: int) -> None:
    mine = MARKERS[session % len(MARKERS)]
    content = await page.evaluate(PAGE_TEXT)
    value = await page.locator("[data-testid='stTextArea'] textarea >> nth=0").input_value()
    if value != text:
        report.leaks.append(f"session {session} step {step}: text box holds {value!r}, expected {text!r}")
    words = set(re.findall(r"[a-z]+", content.lower()))
    others = [m for i, m in enumerate(MARKERS) if i != session % len(MARKERS) and m in words]
    if others:
        report.leaks.append(f"session {session} step {step} ({view}): other sessions' words {others}")
    if mine not in words:
        report.leaks.append(f"session {session} step {step} ({view}): its own word {mine!r} is missing")


class _AllOpened:
    """Sessions start interacting together, once every session has its first page (or has failed):
    the interaction times then measure concurrent use, not the first visitors' wait for the model."""

    def __init__(self, n: int):
        self.left, self.event = n, asyncio.Event()

    def arrive(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.event.set()


async def _session(
    browser,
    base: str,
    session: int,
    interactions: int,
    report: LoadReport,
    timeout_ms: float,
    opened: _AllOpened,
):
    arrived = False
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    js_errors: list[str] = []
    page.on("pageerror", lambda exc: js_errors.append(str(exc)))
    state = {"text": sentence_for(session, 0), "view": "head", "layer": 0, "head": 0}
    step = -1
    try:
        url = f"{base}/explore?" + urlencode({**state, "layer": 0, "head": 0})
        start = time.perf_counter()
        await page.goto(url, timeout=timeout_ms)
        mine = MARKERS[session % len(MARKERS)]
        await _answered(page, {"text": state["text"], "view": "head"}, 1, [mine], timeout_ms)
        report.first_open.append(time.perf_counter() - start)
        await _check_isolation(page, session, state["text"], "head", report, 0)
        opened.arrive()
        arrived = True
        await opened.event.wait()
        for step in range(1, interactions + 1):
            kind, arg = PLAN[(step - 1) % len(PLAN)]
            view = state["view"]
            expect_texts: list[str] = []
            start = time.perf_counter()
            if kind == "text":
                state["text"] = sentence_for(session, step)
                box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
                await box.fill(state["text"])
                await box.press("Control+Enter")
                if view in ("head", "lines", "focus"):
                    expect_texts.append(mine)
            elif kind == "view":
                state["view"] = view = arg
                await page.get_by_role("radio", name=VIEW_LABELS[arg], exact=True).click()
            else:  # "layer" or "head": one step right on its slider (head and lines views)
                n = N_LAYERS if kind == "layer" else N_HEADS
                label = "Layer (1" if kind == "layer" else "Head (1"
                slider = page.locator("[data-testid='stSlider']").filter(has_text=label)
                thumb = slider.get_by_role("slider")
                await thumb.focus()
                if state[kind] + 1 >= n:
                    await thumb.press("Home")
                    state[kind] = 0
                else:
                    await thumb.press("ArrowRight")
                    state[kind] += 1
                expect_texts.append(f"Layer {state['layer'] + 1}, head {state['head'] + 1}")
            params = {"text": state["text"], "view": view}
            if view in ("head", "lines"):
                params["layer"] = str(state["layer"])
            if view == "head":
                params["head"] = str(state["head"])
            await _answered(page, params, CHARTS[view], expect_texts, timeout_ms)
            report.times.append(time.perf_counter() - start)
            report.kinds.append(kind)
            await _check_isolation(page, session, state["text"], view, report, step)
    except Exception as err:
        where = f"session {session} step {step} ({state['view']})"
        report.errors.append(f"{where}: {type(err).__name__}: {str(err).splitlines()[0][:300]}")
    finally:
        if not arrived:
            opened.arrive()
        report.errors.extend(f"session {session}: JavaScript error: {e[:300]}" for e in js_errors)
        await context.close()


async def _run_sessions(base: str, sessions: int, interactions: int, report: LoadReport, timeout_ms: float):
    opened = _AllOpened(sessions)
    async with async_browser() as b:
        await asyncio.gather(
            *(_session(b, base, i, interactions, report, timeout_ms, opened) for i in range(sessions))
        )


def run_load(
    sessions: int = 8,
    interactions: int = 10,
    *,
    deadline_s: float = 900.0,
    step_timeout_s: float = 120.0,
) -> LoadReport:
    """Start a fresh server, drive `sessions` concurrent browser sessions, stop; never longer than
    `deadline_s` (sessions still running then are reported as errors)."""
    if sessions > len(MARKERS):
        raise ValueError(f"at most {len(MARKERS)} sessions (one marker word each)")
    report = LoadReport(sessions=sessions, interactions=interactions)
    with StreamlitServer(app_logs=True) as server:
        start = time.perf_counter()

        def drive() -> None:
            try:
                asyncio.run(
                    asyncio.wait_for(
                        _run_sessions(server.url, sessions, interactions, report, step_timeout_s * 1000),
                        timeout=deadline_s,
                    )
                )
            except TimeoutError:
                report.errors.append(f"the run hit its {deadline_s:.0f} s deadline and was stopped")
            except Exception as err:
                report.errors.append(f"the run failed: {type(err).__name__}: {err}")

        # A thread of its own: Playwright's sync API (the other browser tests) keeps an event loop
        # running in the main thread, where asyncio.run() refuses to start another.
        worker = threading.Thread(target=drive, name="load-driver")
        worker.start()
        worker.join()
        report.seconds = time.perf_counter() - start
        report.peak_rss_mb = server.peak_rss_mb()
        report.model_loads = LOAD_LINE.findall(server.log_text())
    return report
