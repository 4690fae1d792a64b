"""Fixtures the dashboard tests share (defined in tests/dashboard/harness.py)."""

from tests.dashboard.harness import fast_apptest, numpy_engine  # noqa: F401
