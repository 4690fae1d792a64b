"""Start the real app (`streamlit run`, loopback only) and drive Debian's chromium with Playwright.

Shared by the browser tests and the benchmarks. Playwright cannot download its own browser on these
machines, so it launches /usr/bin/chromium with the flags that keep it off the closed network; on a
machine without it (macOS, say), Playwright's own Chromium (`playwright install chromium`, which
`make test` runs there: scripts/ensure_browser.sh).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from tests.deadline import BROWSER_DEADLINE_MS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
# The readiness signal: the script has finished its run and the page is drawn.
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
# A Plotly chart is drawn once its SVG holds a trace (scatter, image) or a heatmap.
DRAWN_CHART = ".js-plotly-plot .main-svg :is(.trace, g.hm, image)"
# True when the script has finished and at least n Plotly charts are drawn (page.wait_for_function).
CHARTS_DRAWN_JS = """(n) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const drawn = [...document.querySelectorAll(".js-plotly-plot")].filter(
    (p) => p.querySelector(".main-svg :is(.trace, g.hm, image)"));
  return drawn.length >= n;
}"""
# Count of drawn Plotly charts on the page (page.evaluate).
COUNT_DRAWN_JS = """() => [...document.querySelectorAll(".js-plotly-plot")].filter(
  (p) => p.querySelector(".main-svg :is(.trace, g.hm, image)")).length"""
# True once the page has settled (wait_settled): the script has finished, at least n Plotly charts are
# drawn, the fonts have loaded (text widths depend on them), and the boxes of the charts, of their
# texts (hover labels aside) and of the main area's elements are the same in `frames` animation frames
# in a row, each compared with the one before. Plotly's second pass (automargin), a chart sized to its
# column and a late element all move them; a drawn page does not. Called once a frame (polling "raf");
# `token` starts a new count for each wait.
SETTLED_JS = """([n, frames, token]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const plots = [...document.querySelectorAll(".js-plotly-plot")];
  const drawn = plots.filter((p) => p.querySelector(".main-svg :is(.trace, g.hm, image)"));
  if (drawn.length < n || document.fonts.status !== "loaded") return false;
  const texts = [...document.querySelectorAll(".js-plotly-plot .main-svg text")];
  const parts = [
    ...plots,
    ...texts.filter((t) => !t.closest(".hoverlayer")),
    ...document.querySelectorAll("[data-testid='stMain'] [data-testid='stElementContainer']"),
  ];
  const key = parts.map((e) => {
    const r = e.getBoundingClientRect();
    return `${r.x},${r.y},${r.width},${r.height}`;
  }).join(";");
  const last = window.__e2eSettled;
  if (!last || last.token !== token) {
    window.__e2eSettled = {token, key, same: 0};
    return false;
  }
  last.same = key === last.key ? last.same + 1 : 0;
  last.key = key;
  return last.same >= frames;
}"""
# True once `el` has not moved for `frames` animation frames in a row (wait_still).
STILL_JS = """([el, frames, token]) => {
  const r = el.getBoundingClientRect();
  const key = `${r.x},${r.y},${r.width},${r.height}`;
  const last = el.__e2eStill;
  if (!last || last.token !== token) {
    el.__e2eStill = {token, key, same: 0};
    return false;
  }
  last.same = key === last.key ? last.same + 1 : 0;
  last.key = key;
  return last.same >= frames;
}"""
# Notes the id of every element the page scrolls into view (Element.scrollIntoView) in
# window.__e2eScrolledTo, emptied on each call; the note lasts until the page navigates (watch_scrolls).
WATCH_SCROLLS_JS = """() => {
  if (!window.__e2eScrolledTo) {
    const scroll = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (...args) {
      window.__e2eScrolledTo.push(this.id);
      return scroll.apply(this, args);
    };
  }
  window.__e2eScrolledTo = [];
}"""
# True once the page has scrolled `el` into view (noted by WATCH_SCROLLS_JS) and neither the
# element nor the section that scrolls it (Streamlit scrolls its main section, not the window) has
# moved for `frames` animation frames in a row (wait_scrolled_to).
SCROLLED_TO_JS = """([el, frames, token]) => {
  const scrolls = (e) =>
    e.scrollHeight > e.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(e).overflowY);
  let box = el.parentElement;
  while (box && !scrolls(box)) box = box.parentElement;
  box = box || document.scrollingElement;
  const key = `${box.scrollTop},${el.getBoundingClientRect().top}`;
  const last = el.__e2eScrolled;
  if (!last || last.token !== token) {
    el.__e2eScrolled = {token, key, same: 0};
    return false;
  }
  last.same = key === last.key ? last.same + 1 : 0;
  last.key = key;
  return window.__e2eScrolledTo.includes(el.id) && last.same >= frames;
}"""
# True once every image of the frame has loaded or failed (a lazy one out of view aside): an
# <img onerror> rendered from a payload has had its error by then (images_settled).
IMAGES_DONE_JS = """() => [...document.images].every((img) => img.complete || img.loading === "lazy")"""
# Resolves after two turns of the frame's task queue: the events queued before it (the error event
# of an image that failed, a <details open>'s toggle) have been dispatched.
TASKS_DONE_JS = """() => new Promise((done) => setTimeout(() => setTimeout(done, 0), 0))"""
# Resolves after two animation frames and a task: React has committed what the last run drew and
# run its effects, among them the one that binds a button's keyboard shortcut (wait_listening).
EFFECTS_FLUSHED_JS = """() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))))"""
# True once the app's clicker (dashboard/clicker.py), if the page has one, has run its script: it marks
# the body when it does. A page without one (a bare benchmark app) is ready at once.
CLICKER_READY_JS = """() => !document.querySelector(".st-key-clicker") || !!document.body.dataset.clicker"""
_WAITS = itertools.count()
T = TypeVar("T")


def chromium_executable() -> str | None:
    """Debian's chromium (or $CHROMIUM_PATH) when present; None means Playwright's own Chromium."""
    for candidate in (CHROMIUM, shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def chromium_available() -> bool:
    if chromium_executable() is not None:
        return True
    cache = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(
        Path.home() / ("Library/Caches" if sys.platform == "darwin" else ".cache") / "ms-playwright"
    )
    return any(Path(cache).glob("chromium*"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# `python -c` bootstrap equal to `python -m streamlit`, except that the app's own loggers ("core.*",
# "dashboard.*") print INFO lines to stderr: tests count events such as model loads from them.
_WITH_APP_LOGS = (
    "import logging, sys\n"
    "logging.basicConfig(format='%(asctime)s %(levelname)s %(name)s: %(message)s')\n"
    "for name in ('core', 'dashboard'):\n"
    "    logging.getLogger(name).setLevel(logging.INFO)\n"
    "from streamlit.web.cli import main\n"
    "sys.exit(main(prog_name='streamlit'))\n"
)


class StreamlitServer:
    """`streamlit run dashboard/app.py` on 127.0.0.1 and a free port, stopped on exit.

    The server's stderr goes to a file (never an unread pipe, which blocks a chatty server once the
    pipe buffer is full): `log_path`, or a temporary file; `log_text()` reads it. `app_logs=True`
    also prints the app's own INFO log lines there. `python` runs it from another environment
    (the Cloud simulation's fresh venv); by default this one's. `app` runs another script instead
    (a benchmark's bare app).
    """

    def __init__(
        self,
        env: dict[str, str] | None = None,
        port: int | None = None,
        *,
        log_path: Path | None = None,
        app_logs: bool = False,
        python: str | None = None,
        app: Path | None = None,
    ):
        self.python = python or sys.executable
        self.app = Path(app) if app else ROOT / "dashboard" / "app.py"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        self.app_logs = app_logs
        self._log_path = Path(log_path) if log_path else None
        self._owns_log = log_path is None  # a temporary log is deleted by stop()
        self._log_file = None

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    def log_text(self) -> str:
        """Everything the server has written to stderr so far."""
        if self._log_file is not None:
            self._log_file.flush()
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(encoding="utf-8", errors="replace")

    def start(self) -> StreamlitServer:
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="streamlit-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        self._log_file = open(self._log_path, "w", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        launcher = ["-c", _WITH_APP_LOGS] if self.app_logs else ["-m", "streamlit"]
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                self.python,
                *launcher,
                "run",
                str(self.app),
                "--server.address",
                "127.0.0.1",
                "--server.port",
                str(self.port),
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=self._log_file,
        )
        return self

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Block until /_stcore/health answers; returns seconds since start()."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early: {self.log_text()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r,
            ):
                if r.status == 200:
                    return time.perf_counter() - self.started_at
            time.sleep(0.02)
        raise TimeoutError(f"streamlit did not become healthy within {timeout} s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._owns_log and self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def peak_rss_mb(self) -> float:
        """The server's peak resident memory so far (VmHWM), in MB, with any child processes' added:
        what serving costs in all."""
        total = peak_rss_mb(self.proc.pid)
        for task in Path(
            f"/proc/{self.proc.pid}/task"
        ).iterdir():  # a child belongs to the thread that started it
            with contextlib.suppress(FileNotFoundError):
                for child in (task / "children").read_text().split():
                    with contextlib.suppress(FileNotFoundError, RuntimeError):  # it may just have ended
                        total += peak_rss_mb(int(child))
        return total

    def __enter__(self) -> StreamlitServer:
        self.start()
        self.wait_healthy()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def peak_rss_mb(pid: int) -> float:
    """Peak resident set size (VmHWM in /proc/<pid>/status) of a live process, in MB (2**20 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """A headless chromium under Playwright (Debian's, else Playwright's own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@contextlib.asynccontextmanager
async def async_browser() -> AsyncIterator[object]:
    """The same headless chromium under Playwright's asyncio API, to drive many pages at once."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


def wait_idle(page, timeout_ms: float = BROWSER_DEADLINE_MS) -> None:
    """Wait until Streamlit has finished running the script and drawn the page."""
    page.wait_for_selector(APP_IDLE, timeout=timeout_ms)


def wait_charts(page, n: int, timeout_ms: float = BROWSER_DEADLINE_MS) -> None:
    """Wait until the script has finished and at least `n` Plotly charts are drawn."""
    page.wait_for_function(CHARTS_DRAWN_JS, arg=n, timeout=timeout_ms, polling="raf")


def wait_settled(page, n: int = 0, timeout_ms: float = BROWSER_DEADLINE_MS, frames: int = 2) -> None:
    """Wait until the script has finished, at least `n` Plotly charts are drawn, the fonts have loaded
    and nothing on the page has moved for `frames` animation frames (SETTLED_JS): the moment to
    measure the layout (cut labels, a chart's bottom) or take a screenshot."""
    page.wait_for_function(SETTLED_JS, arg=[n, frames, next(_WAITS)], timeout=timeout_ms, polling="raf")


def wait_still(page, locator, timeout_ms: float = BROWSER_DEADLINE_MS, frames: int = 2) -> None:
    """Wait until the element has not moved for `frames` animation frames (STILL_JS)."""
    handle = locator.element_handle(timeout=timeout_ms)
    page.wait_for_function(STILL_JS, arg=[handle, frames, next(_WAITS)], timeout=timeout_ms, polling="raf")


def watch_scrolls(page) -> None:
    """Start noting what the page scrolls into view (WATCH_SCROLLS_JS), forgetting what it did
    before: call it before the key press or click whose scroll `wait_scrolled_to` waits for."""
    page.evaluate(WATCH_SCROLLS_JS)


def wait_scrolled_to(page, locator, timeout_ms: float = BROWSER_DEADLINE_MS, frames: int = 2) -> None:
    """Wait until the page has scrolled the element (an element with an id) into view since
    `watch_scrolls` and the scrolling has stopped (SCROLLED_TO_JS)."""
    handle = locator.element_handle(timeout=timeout_ms)
    page.wait_for_function(
        SCROLLED_TO_JS, arg=[handle, frames, next(_WAITS)], timeout=timeout_ms, polling="raf"
    )


def images_settled(frame, timeout_ms: float = BROWSER_DEADLINE_MS) -> None:
    """Wait until every image of the frame (a page's or an iframe's) has loaded or failed and the
    events that follow have been dispatched (IMAGES_DONE_JS, TASKS_DONE_JS). Polled at an interval
    rather than each animation frame: a hidden frame draws no frames."""
    frame.wait_for_function(IMAGES_DONE_JS, timeout=timeout_ms, polling=20)
    frame.evaluate(TASKS_DONE_JS)


# ---- acting on a page: the only way a browser test presses a key or clicks (tests/test_house.py) ----


def wait_listening(page, timeout_ms: float = BROWSER_DEADLINE_MS) -> None:
    """Wait until the page is idle and listening: the script has finished and the browser has drawn
    its result and bound what it binds (a button's shortcut is bound in an effect after the render;
    the clicker's listener once its component's script, loaded on first use, has run: CLICKER_READY_JS).
    A key pressed before that has nothing to hear it, on a slow machine more often than a fast one."""
    wait_idle(page, timeout_ms)
    page.evaluate(EFFECTS_FLUSHED_JS)
    page.wait_for_function(CLICKER_READY_JS, timeout=timeout_ms)


def press(page, key: str, effect: Callable[[], T], *, on=None, timeout_ms: float = BROWSER_DEADLINE_MS) -> T:
    """Press `key` once the page is listening (on the locator `on`, else on the page), then wait
    for and return `effect()`: the change the key should make (a URL, a heading, an assertion).
    Pressed once: a clicker's key the page drops is a bug of the page (dashboard/clicker.py), never
    pressed again here."""
    wait_listening(page, timeout_ms)
    (on if on is not None else page.keyboard).press(key)
    return effect()


def press_at_gaps(page, key: str, gaps: Sequence[float]) -> None:
    """Press `key` once per gap, waiting that gap (seconds) after each press and nothing else: the
    uneven presses of a lecturer's clicker, some of them during the runs earlier ones started. The
    gaps are the input (a test waits for the presses' effect afterwards), never a wait for the page."""
    for gap in gaps:
        page.keyboard.press(key)
        time.sleep(gap)


def click(
    page, target, effect: Callable[[], T], *, live: bool = False, timeout_ms: float = BROWSER_DEADLINE_MS
) -> T:
    """Click `target` (a locator, or an (x, y) point of the page, for a Plotly cell) once the page is
    listening, then wait for and return `effect()`. live=True: the page reruns by itself (a run
    training live) and may never be idle; a click during a run counts, so it waits for the target
    to be visible and enabled instead."""
    if live:
        from playwright.sync_api import expect

        expect(target).to_be_enabled(timeout=timeout_ms)
    else:
        wait_listening(page, timeout_ms)
    if isinstance(target, tuple):
        page.mouse.click(*target)
    else:
        target.click()
    return effect()


def press_while_running(
    page, key: str, effect: Callable[[], T], *, timeout_ms: float = BROWSER_DEADLINE_MS
) -> T:
    """Press `key` while the script runs (the clicker's second press during the rerun its first one
    started), then wait for and return `effect()`. Fails if the run ended before the key went in,
    since the test would then prove nothing about a press during a rerun."""
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='running']", timeout=timeout_ms)
    page.keyboard.press(key)
    state = page.locator("[data-testid='stApp']").get_attribute("data-test-script-state")
    assert state == "running", f"the run had ended ({state}) before {key} was pressed"
    return effect()


def send_text(page, box, text: str, *, key: str = "Control+Enter", param: str = "text") -> None:
    """Type `text` into the text box `box` and send it (a text area sends on Ctrl+Enter, a text
    input on Enter), then wait until the link's `param` holds it: the page has taken the text."""
    box.fill(text)
    press(
        page,
        key,
        lambda: page.wait_for_function(
            "([n, t]) => new URLSearchParams(location.search).get(n) === t",
            arg=[param, text],
            timeout=BROWSER_DEADLINE_MS,
        ),
        on=box,
    )
