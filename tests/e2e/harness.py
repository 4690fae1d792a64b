"""Start the real app (`streamlit run`, loopback only) and drive Debian's chromium with Playwright.

Shared by the browser tests and the benchmarks. Playwright cannot download its own browser on these
machines, so it launches /usr/bin/chromium with the flags that keep it off the closed network.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

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


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """`streamlit run dashboard/app.py` on 127.0.0.1 and a free port, stopped on exit."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0

    def start(self) -> StreamlitServer:
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(ROOT / "dashboard" / "app.py"),
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
            stderr=subprocess.PIPE,
        )
        return self

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Block until /_stcore/health answers; returns seconds since start()."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early: {self.proc.stderr.read().decode()[-2000:]}")
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
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self) -> StreamlitServer:
        self.start()
        self.wait_healthy()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """A headless Debian chromium under Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def wait_idle(page, timeout_ms: float = 60_000) -> None:
    """Wait until Streamlit has finished running the script and drawn the page."""
    page.wait_for_selector(APP_IDLE, timeout=timeout_ms)
