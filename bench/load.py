"""Load and isolation at full size (issue 5 §3): 8 concurrent browser sessions × 10 interactions on
the explore page against a fresh `streamlit run` server (tests/e2e/load_driver.py does the driving).

Reported: p95 time per interaction (target: none in the issue; a figure for the README), errors and
leaks (target 0), model loads (target 1) and the server's peak RSS (VmHWM). The full report is also
written to bench/out/load.json. Sizes: LOAD_SESSIONS / LOAD_INTERACTIONS override 8 / 10.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench.common import Row
from tests.e2e.load_driver import run_load

OUT = Path(__file__).resolve().parent / "out" / "load.json"


def run(quick: bool = False) -> list[Row]:
    sessions = int(os.environ.get("LOAD_SESSIONS", 8))
    interactions = int(os.environ.get("LOAD_INTERACTIONS", 3 if quick else 10))
    report = run_load(sessions, interactions)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(report.to_json(), encoding="utf-8")
    print(report.summary())
    for problem in report.errors + report.leaks:
        print("  ", problem)
    size = f"{sessions} sessions × {interactions} interactions"
    return [
        Row(
            f"load: time per interaction, p95 ({size})",
            report.percentile(95),
            "s",
            note=f"p50 {report.percentile(50):.2f} s over {report.completed} interactions; real server "
            "+ chromium, all sessions at once",
        ),
        Row(
            f"load: errors + leaks between sessions ({size})",
            len(report.errors) + len(report.leaks),
            "",
            target=0,
            note=f"{len(report.errors)} errors, {len(report.leaks)} leaks",
        ),
        Row(
            f"load: model loads ({size})",
            len(report.model_loads),
            "",
            target=1,
            note="counted from the server log",
        ),
        Row(
            f"load: server peak RSS ({size})",
            report.peak_rss_mb,
            "MB",
            note="VmHWM of the `streamlit run` process",
        ),
    ]
