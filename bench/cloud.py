"""Streamlit Community Cloud, simulated (tests/e2e/cloud_sim.py, the same steps as the slow test
tests/e2e/test_cloud.py): a fresh venv with `pip install -r requirements.txt` alone, then the app in
hosted mode, its model downloaded from the stand-in Hub, every page opened once in Chromium.

Targets (issue 14): the environment at most 800 MB on disk (no torch or NVIDIA package in it, which
the test checks), the server's peak RSS at most 500 MB after every page (Cloud's smallest tier has
690 MB). The install time depends on the network and pip's cache (here: a local index mirror and
pip's wheel cache), so it has no target.

The curated decoders (issue 29): random GPT-2 checkpoints of distilgpt2's and gpt2's real sizes
(tests/real_size_gpt2.py) served by the stand-in Hub, and on a fresh hosted server the explore page
on the bundled model, then on the decoder with a prompt cut at the hosted cap of 128 tokens (one
server per decoder, then one with both, as a server offering both could hold them: the engine cache
keeps three models). The same 500 MB target decides whether hosted mode offers a decoder
(CuratedModel.hosted in core/models/registry.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import Row
from core.models.registry import CURATED_HUB_MODELS
from tests.e2e import cloud_sim
from tests.real_size_gpt2 import REAL_SHAPES, make_real_size_gpt2

ENV_TARGET_MB = 800
RSS_TARGET_MB = 500


def run(quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="cloud-sim-") as tmp:
        env = cloud_sim.build_env(Path(tmp))
        run_ = cloud_sim.run_app(env, Path(tmp))
        decoders = [] if quick else decoder_runs(env, Path(tmp))
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
    return rows + [decoder_row(d) for d in decoders]


def decoder_runs(env: cloud_sim.CloudEnv, tmp: Path) -> list[cloud_sim.DecoderRun]:
    """Each curated decoder alone on a fresh server, then every one on one server."""
    checkpoints = {
        repo_id: make_real_size_gpt2(tmp / "checkpoints" / repo_id.replace("/", "--"), n_layer)
        for repo_id, n_layer in REAL_SHAPES.items()
    }
    return [
        cloud_sim.run_decoders(env, tmp / f"decoders-{i}", checkpoints, models)
        for i, models in enumerate([*([m] for m in checkpoints), list(checkpoints)])
    ]


def decoder_row(run: cloud_sim.DecoderRun) -> Row:
    names = " then ".join(run.models)
    offered = ", ".join(f"{m}: {'yes' if CURATED_HUB_MODELS[m].hosted else 'no'}" for m in run.models)
    return Row(
        f"Cloud simulation: server peak RSS, explore on the bundled model then on {names} "
        "(random weights of the real size), 128 tokens, hosted mode",
        run.peak_rss_mb[-1],
        "MB",
        target=RSS_TARGET_MB,
        note=f"VmHWM with child processes; {run.peak_rss_mb[0]:.0f} MB after the bundled model's page; "
        f"resident after each page {' / '.join(f'{mb:.0f}' for mb in run.rss_mb)} MB; "
        f"offered in hosted mode: {offered}",
    )
