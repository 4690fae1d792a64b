"""Streamlit Community Cloud, simulated (tests/e2e/cloud_sim.py, the same steps as the slow test
tests/e2e/test_cloud.py): a fresh venv with `pip install -r requirements.txt` alone, then the app in
hosted mode, its model downloaded from the stand-in Hub, every page opened once in Chromium.

Targets (issue 14): the environment at most 800 MB on disk (no torch or NVIDIA package in it, which
the test checks), the server's peak RSS at most 500 MB after every page (Cloud's smallest tier has
690 MB). The install time depends on the network and pip's cache (here: a local index mirror and
pip's wheel cache), so it has no target.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import Row
from tests.e2e import cloud_sim

ENV_TARGET_MB = 800
RSS_TARGET_MB = 500


def run(quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="cloud-sim-") as tmp:
        env = cloud_sim.build_env(Path(tmp))
        run_ = cloud_sim.run_app(env, Path(tmp))
    rows = [
        Row(
            "Cloud simulation: `pip install -r requirements.txt` into a fresh venv",
            env.install_s,
            "s",
            note=f"{len(env.packages)} packages, pip's wheel cache as left by earlier runs; "
            f"no torch/NVIDIA package: {'yes' if not cloud_sim.forbidden_packages(env) else 'NO'}",
        ),
        Row(
            "Cloud simulation: that environment on disk",
            env.size_mb,
            "MB",
            target=ENV_TARGET_MB,
            note="allocated blocks, MB = 2^20 bytes; the bundled model's package not installed",
        ),
        Row(
            "Cloud simulation: explore page's first heatmap after `streamlit run` (hosted mode)",
            run_.first_heatmap_s,
            "s",
            note="includes downloading and checking the bundled checkpoint (92 MB) from the stand-in Hub "
            "on loopback",
        ),
    ]
    if run_.peak_rss_mb is not None:
        rows.append(
            Row(
                "Cloud simulation: server peak RSS after every page once (hosted mode)",
                run_.peak_rss_mb,
                "MB",
                target=RSS_TARGET_MB,
                note=f"VmHWM with child processes, {len(cloud_sim.PAGES)} page opens",
            )
        )
    return rows
