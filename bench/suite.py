"""The test suite's own time: `python -m bench --only suite` runs pytest once (as `make test` does,
lint aside: two pytest-xdist workers) and reports its wall time, each test folder's summed test
time (setup and teardown included), and the slowest tests. Not in the default list: it takes as
long as the suite.

`python -m bench.suite REPORT.xml` summarises a JUnit report that a run already wrote (for example
CI's `PYTEST_ADDOPTS=--junitxml=REPORT.xml make test`) without running the suite again.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 12 * 60  # issue 28: the pytest part of `make test` within 12 minutes on this machine
WORKERS = ("-n", "2", "--dist", "loadfile")  # as the Makefile's `make test`


def folder_times(report: Path) -> tuple[dict[str, float], dict[str, int], list[tuple[float, str]]]:
    """Per test folder (tests/core, tests/dashboard, tests/e2e, tests/ itself): summed seconds and
    test count; and every test's seconds, slowest first."""
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    tests = []
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")  # tests.e2e.test_cloud
        folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        spent = float(case.get("time") or 0)
        seconds[folder] += spent
        counts[folder] += 1
        tests.append((spent, f"{'/'.join(parts)}.py::{case.get('name')}"))
    return dict(seconds), dict(counts), sorted(tests, reverse=True)


def wall_time(report: Path) -> float | None:
    """The run's wall time as pytest wrote it in the report (its <testsuite time=...>)."""
    suite = next(ET.parse(report).getroot().iter("testsuite"), None)
    return float(suite.get("time")) if suite is not None and suite.get("time") else None


def rows_from(report: Path, wall_s: float | None = None) -> list[Row]:
    """The table's rows. A folder's figure sums its tests' times, so with two workers the folders add
    up to about twice the wall time."""
    seconds, counts, tests = folder_times(report)
    wall_s = wall_s if wall_s is not None else wall_time(report)
    rows = []
    if wall_s is not None:
        rows.append(Row("test suite: pytest wall time", wall_s, "s", target=TARGET_S))
    for folder in sorted(seconds, key=seconds.get, reverse=True):
        rows.append(Row(f"test suite: {folder}/", seconds[folder], "s", note=f"{counts[folder]} tests"))
    for spent, name in tests[:10]:
        rows.append(Row(f"slowest: {name}", spent, "s"))
    return rows


def run(quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "suite.xml"
        start = time.perf_counter()
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *WORKERS]
        subprocess.run(
            [*pytest, f"--junitxml={report}"],
            cwd=ROOT,
            check=False,  # a red run still has its times; the table says how long it took
        )
        return rows_from(report, time.perf_counter() - start)


if __name__ == "__main__":
    from bench.common import format_table

    print(format_table(rows_from(Path(sys.argv[1]))))
