"""Training live beside a classroom (issue 30's targets): the train page's live charts update at least
once a second while training, and the app stays responsive to other sessions
(`python -m bench --only train_live`).

One `streamlit run` in hosted mode. In 1, 2 and 3 Chromium tabs (each its own session) /train opens
with "Train your own" and the longest run a hosted student may ask for, and Start is pressed. Once
every tab shows its curves, bench/classroom.py's sessions (30, protocol level, its own functions)
run against the same server; the tabs keep training until the classroom is done.

Each tab notes in the page itself, every SAMPLE_MS, the status line ("Step N of M · ..."), how many
points the curves hold and whether the page shows its "Waiting for a turn" note; it keeps a time stamp each
time one of them changes. An update is a change of the step or of the curves. Reported per tab,
over the classroom's window: the median and p95 of the time between successive updates (a gap
still open when the window ends counts too), and how long the waiting note was on screen (a tick
that found every training slot taken, dashboard/views/train/session.py; the note stays until
the next tick that trains has redrawn the page). Reported per run: the classroom's p95 server
time per kind of interaction against the same classroom run alone in the same bench run, its
errors, and the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench.classroom import RAMP_S, THINK_S, Measured, classroom, percentile, run_classroom
from bench.common import Row

HOSTED = {"ATTENTION_EXPLORER_HOSTED": "1"}
STEPS = 1500  # the hosted cap (dashboard/hosted.py): the longest run a student may start
SAMPLE_MS = 50  # how often each tab looks at its own page
STATUS = re.compile(r"Step ([\d,]+) of")
# In the page: every `every` ms, the status line, the curves' point count and the waiting note (a
# caption: st.caption's container has a test id of its own);
# a row [time (ms since the epoch), status, points, waiting] in window.__live each time one changes.
SAMPLER_JS = """(every) => {
  window.__live = [];
  let last = "";
  setInterval(() => {
    const texts = [...document.querySelectorAll(
      "[data-testid='stMarkdownContainer'], [data-testid='stCaptionContainer']")].map(
      (e) => e.textContent.trim());
    const status = texts.find((t) => /^Step [\\d,]+ of/.test(t)) || "";
    const waiting = texts.some((t) => t.startsWith("Waiting for a turn"));
    const plot = [...document.querySelectorAll(".js-plotly-plot")].find(
      (p) => p.data && p.data[0] && p.data[0].name === "first occurrences");
    const points = plot && plot._fullData && plot._fullData[0] ? plot._fullData[0].x.length : 0;
    const key = `${status}|${points}|${waiting}`;
    if (key !== last) {
      last = key;
      window.__live.push([Date.now(), status, points, waiting]);
    }
  }, every);
}"""
ERRORS_JS = "() => document.querySelectorAll(\"[data-testid='stException']\").length"


@dataclass
class Setup:
    sessions: int  # classroom sessions
    ramp_s: float  # the classroom's sessions start spread over this many seconds
    think_s: tuple[float, float]  # a student's pause before each click
    trainers: tuple[int, ...]  # how many training tabs, one run each


FULL = Setup(30, RAMP_S, THINK_S, (1, 2, 3))
QUICK = Setup(4, 2.0, (0.1, 0.3), (3,))


@dataclass
class Tab:
    """What one training tab saw during the classroom's window."""

    intervals: list[float]  # seconds between successive updates
    waited_s: float  # time the page showed its 'Waiting for a turn' note (a slot was taken)
    longest_wait_s: float
    window_s: float  # the classroom's window, cut where the run finished
    steps: tuple[int, int]  # the step shown at the window's start and end
    finished: bool  # the run reached its last step inside the window
    errors: int  # exception elements on the page at the end


def _step(status: str) -> int:
    found = STATUS.search(status)
    return int(found.group(1).replace(",", "")) if found else -1


def _waits(samples: list, start: float, end: float) -> tuple[float, float]:
    """(total, longest) seconds of [start, end] during which the page said it waited."""
    total = longest = 0.0
    since = None
    for t, _status, _points, waiting in [*samples, [end, "", 0, False]]:
        t = min(max(t, start), end)
        if waiting and since is None:
            since = t
        elif not waiting and since is not None:
            total, longest = total + t - since, max(longest, t - since)
            since = None
    return total, longest


def tab_seen(samples: list, start: float, end: float, errors: int) -> Tab:
    """The tab's samples (SAMPLER_JS, times in ms) over the window [start, end] (seconds)."""
    samples = [[t / 1000, status, points, waiting] for t, status, points, waiting in samples]
    done = [t for t, status, _p, _w in samples if "done" in status and t > start]
    end = min([end, *done])
    updates, last = [], None
    for t, status, points, _waiting in samples:
        if (_step(status), points) != last and _step(status) >= 0:
            updates.append(t)
            last = (_step(status), points)
    before = [t for t in updates if t <= start][-1:]  # the last update before the window opens
    times = before + [t for t in updates if start < t <= end]
    intervals = [b - a for a, b in itertools.pairwise(times)]
    if not done and times:
        intervals.append(end - times[-1])  # the gap still open when the classroom ended
    shown = [_step(s) for t, s, _p, _w in samples if t <= end and _step(s) >= 0]
    at_start = [_step(s) for t, s, _p, _w in samples if t <= start and _step(s) >= 0]
    waited, longest = _waits(samples, start, end)
    return Tab(
        intervals=intervals,
        waited_s=waited,
        longest_wait_s=longest,
        window_s=end - start,
        steps=(at_start[-1] if at_start else 0, shown[-1] if shown else 0),
        finished=bool(done),
        errors=errors,
    )


def start_training(chromium, url: str):
    """A new session in its own browser context: /train, your own run, Start; returns the page
    once its curves are drawn, with SAMPLER_JS watching it."""
    from tests.e2e.harness import wait_charts, wait_idle

    page = chromium.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(f"{url}/train?run=own&steps={STEPS}")
    wait_idle(page, 120_000)
    page.evaluate(SAMPLER_JS, SAMPLE_MS)
    page.get_by_role("button", name="Start").click()
    wait_charts(page, 2, 120_000)
    return page


def run_with_trainers(n_trainers: int, setup: Setup) -> tuple[Measured, list[Tab], float, int]:
    """The classroom beside n_trainers training tabs on one server: (the classroom's figures,
    what each tab saw, the server's peak RSS in MB, model loads in its log)."""
    from tests.e2e.harness import StreamlitServer, browser

    with StreamlitServer(env=HOSTED, app_logs=True) as server, browser() as chromium:
        pages = [start_training(chromium, server.url) for _ in range(n_trainers)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            start = time.time()
            lesson = classroom(server.url, setup.sessions, setup.ramp_s, setup.think_s)
            future = pool.submit(asyncio.run, lesson)
            while not future.done():
                pages[0].wait_for_timeout(250)  # the tabs sample themselves; this only waits
            end = time.time()
            measured = future.result()
        tabs = [
            tab_seen(page.evaluate("() => window.__live"), start, end, page.evaluate(ERRORS_JS))
            for page in pages
        ]
        rss = server.peak_rss_mb()
        loads = len(re.findall(r"loading model ", server.log_text()))
    return measured, tabs, rss, loads


def _tab_rows(n_trainers: int, i: int, tab: Tab) -> list[Row]:
    name = f"train live beside a classroom, {n_trainers} training, tab {i + 1}"
    gaps = tab.intervals or [tab.window_s]
    ended = "run finished inside the window" if tab.finished else "still training when the classroom ended"
    note = (
        f"{len(tab.intervals)} intervals over {tab.window_s:.0f} s (steps {tab.steps[0]}-{tab.steps[1]}, "
        f"{ended}); 'Waiting for a turn' on screen {tab.waited_s:.1f} s in all, "
        f"longest stretch {tab.longest_wait_s:.1f} s; "
        f"max interval {max(gaps):.2f} s; {tab.errors} exceptions on the page"
    )
    return [
        Row(f"{name}: live chart update interval, median", statistics.median(gaps), "s", target=1.0),
        Row(f"{name}: live chart update interval, p95", percentile(gaps, 0.95), "s", target=1.0, note=note),
    ]


def _classroom_rows(n_trainers: int, n: int, measured: Measured, alone: Measured) -> list[Row]:
    rows = []
    for kind, seconds in measured.seconds.items():
        p95, before = percentile(seconds, 0.95), alone.seconds.get(kind)
        alone_p95 = percentile(before, 0.95) if before else None
        versus = f"alone {alone_p95:.2f} s, {p95 / alone_p95:.2f}x" if alone_p95 else "not measured alone"
        rows.append(
            Row(
                f"classroom, {n} sessions, {n_trainers} training alongside: {kind}, p95 server time",
                p95,
                "s",
                target=2.0,
                note=f"{versus}; p50 {statistics.median(seconds):.2f} s, {len(seconds)} reruns",
            )
        )
    rows.append(
        Row(
            f"classroom, {n} sessions, {n_trainers} training alongside: errors",
            len(measured.errors),
            "",
            target=0,
            note="; ".join(measured.errors[:3]) or f"{len(alone.errors)} alone",
        )
    )
    return rows


def load() -> str:
    """The 1-minute load average, as the notes report it."""
    return Path("/proc/loadavg").read_text().split()[0]


def run(quick: bool = False) -> list[Row]:
    setup = QUICK if quick else FULL
    n = setup.sessions
    alone, loads, rss = run_classroom(n, setup.ramp_s, setup.think_s)
    rows = [
        Row(
            f"classroom, {n} sessions, nothing training: server peak RSS",
            rss,
            "MB",
            target=600,
            note=f"the same classroom alone, for the ratios below; {len(alone.errors)} errors; "
            f"load {load()} after",
        )
    ]
    for n_trainers in setup.trainers:
        measured, tabs, rss, loads = run_with_trainers(n_trainers, setup)
        for i, tab in enumerate(tabs):
            rows += _tab_rows(n_trainers, i, tab)
        rows += _classroom_rows(n_trainers, n, measured, alone)
        rows.append(
            Row(
                f"classroom, {n} sessions, {n_trainers} training alongside: server peak RSS",
                rss,
                "MB",
                target=600,
                note=f"VmHWM of `streamlit run`; {loads} model loads; load {load()} after",
            )
        )
    return rows
