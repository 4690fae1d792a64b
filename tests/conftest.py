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
# The head atlas caches on disk under $XDG_CACHE_HOME: the tests and the servers they start use a
# folder of their own, never the user's ~/.cache (a test that needs an empty one sets its own).
if not os.environ.get("ATTENTION_EXPLORER_TEST_CACHE"):
    import tempfile

    os.environ["ATTENTION_EXPLORER_TEST_CACHE"] = tempfile.mkdtemp(prefix="attention-explorer-tests-")
    os.environ["XDG_CACHE_HOME"] = os.environ["ATTENTION_EXPLORER_TEST_CACHE"]
