"""The first seconds (issue 23 §2): from `streamlit run` to the first chart drawn in Chromium, for
the learn page, the explore page and a bare Streamlit app that draws one Plotly heatmap, on the same
machine, in turns, in one run. Targets: learn at most 1.2 times the bare app, explore 1.3 times.

Each measurement is a fresh server process and a fresh browser context; the clock runs from the
server's start to the first Plotly chart with its trace drawn and the script finished (polled from
Playwright, which adds the same few tens of milliseconds to every app). The apps take turns (bare,
learn, explore, bare, ...) so that a slow moment of the machine falls on all of them.

Every server reads compiled bytecode, as an installed app's does after its first start: the libraries
ship theirs (pip compiles them); the repository's modules are compiled once, before the first round,
into a temporary folder (PYTHONPYCACHEPREFIX). A shell with PYTHONDONTWRITEBYTECODE set (this
project's sandbox sets it) would otherwise make every start of a page compile the app's own modules
from source, a cost the bare app never pays. `BENCH_FROM_SOURCE=1 python -m bench --only cold_start`
measures that condition instead (how the figures before issue 49 were taken).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row

BARE_APP = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(go.Heatmap(z=np.random.default_rng(0).random((12, 12)))))
"""
FIRST_CHART_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const plot = document.querySelector(".js-plotly-plot");
  return !!plot && !!plot.querySelector(".main-svg :is(.trace, g.hm, image)");
}"""
TARGETS = {"learn": 1.2, "explore": 1.3}


ROOT = Path(__file__).resolve().parents[1]


def compiled_bytecode_env(folder: Path) -> dict[str, str]:
    """The servers' environment: the repository's modules compiled into `folder`, read from there."""
    env = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(folder)}  # "" counts as unset
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "core", "dashboard"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return env


def first_chart_seconds(chromium, app: Path | None, path: str, env: dict[str, str] | None = None) -> float:
    from tests.e2e.harness import StreamlitServer

    with StreamlitServer(app=app, env=env) as server:
        server.wait_healthy()
        context = chromium.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(server.url + path)
        page.wait_for_function(FIRST_CHART_JS, timeout=120_000, polling=20)
        seconds = time.perf_counter() - server.started_at
        context.close()
    return seconds


def measure(rounds: int) -> dict[str, list[float]]:
    from tests.e2e.harness import browser

    found: dict[str, list[float]] = {"bare": [], "learn": [], "explore": []}
    with tempfile.TemporaryDirectory() as folder, browser() as chromium:
        bare = Path(folder) / "bare_app.py"
        bare.write_text(BARE_APP)
        from_source = os.environ.get("BENCH_FROM_SOURCE") == "1"
        env = {} if from_source else compiled_bytecode_env(Path(folder) / "bytecode")
        apps = {"bare": (bare, "/"), "learn": (None, "/"), "explore": (None, "/explore")}
        for _ in range(rounds):
            for name, (app, path) in apps.items():
                found[name].append(first_chart_seconds(chromium, app, path, env))
    return found


def run(quick: bool = False) -> list[Row]:
    rounds = 3 if quick else 9
    found = measure(rounds)
    bare = statistics.median(found["bare"])
    rows = [
        Row(
            "bare Streamlit app, one Plotly heatmap: `streamlit run` to the chart drawn",
            bare,
            "s",
            note=f"median of {rounds}, in turns with the pages (range {min(found['bare']):.2f}-"
            f"{max(found['bare']):.2f} s)",
        )
    ]
    for name, target in TARGETS.items():
        median = statistics.median(found[name])
        rows.append(
            Row(
                f"{name} page: `streamlit run` to the first chart drawn, against the bare app",
                median / bare,
                "x",
                target=target,
                note=f"{median:.2f} s, median of {rounds} (range {min(found[name]):.2f}-"
                f"{max(found[name]):.2f} s)",
            )
        )
    return rows
