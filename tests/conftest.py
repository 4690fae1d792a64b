"""Shared test settings. Tests never reach the network: the Hub is unreachable here anyway."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A view asks before work its estimate puts over 3 s (dashboard/long_work.py), and the estimate follows
# the machine's load: a test would see the ask or the chart depending on the machine's load at that moment.
# Tests that check the ask set the threshold themselves.
os.environ.setdefault("ATTENTION_EXPLORER_ASK_AFTER", "inf")
# The head atlas caches on disk under $XDG_CACHE_HOME: each pytest process (each of pytest-xdist's
# workers too) and the servers it starts use a folder of their own, never the user's ~/.cache nor a
# folder another worker writes at the same time (a test that needs an empty one sets its own).
_PROCESS = os.environ.get("PYTEST_XDIST_WORKER", "main")
if os.environ.get("ATTENTION_EXPLORER_TEST_CACHE_OF") != _PROCESS:
    import atexit
    import shutil
    import tempfile

    os.environ["ATTENTION_EXPLORER_TEST_CACHE_OF"] = _PROCESS
    os.environ["ATTENTION_EXPLORER_TEST_CACHE"] = tempfile.mkdtemp(
        prefix=f"attention-explorer-tests-{_PROCESS}-"
    )
    os.environ["XDG_CACHE_HOME"] = os.environ["ATTENTION_EXPLORER_TEST_CACHE"]
    # removed when the process that made it ends: a converted SmolLM2 alone is 0.5 GB, and a machine
    # that runs the suite often filled its disk with them
    atexit.register(shutil.rmtree, os.environ["ATTENTION_EXPLORER_TEST_CACHE"], ignore_errors=True)
