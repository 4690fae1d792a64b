"""The explore page's engines: NumPy by default (no torch imported), the PyTorch reference as the
fallback for architectures the NumPy engine does not cover, and the parity badge between them."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.harness import run_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_bert import make_tiny_bert

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
from dashboard.views import explore
explore.render()
"""


def _page(**params: str) -> AppTest:
    return run_script(SCRIPT, timeout=120, **params)


def _sidebar_text(at: AppTest) -> str:
    return (
        " ".join(str(c.value) for c in at.sidebar.caption) + " " + " ".join(str(m.value) for m in at.markdown)
    )


def test_numpy_is_the_default_engine_and_torch_is_never_imported():
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_string({SCRIPT!r}, default_timeout={APPTEST_DEADLINE})
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.get("plotly_chart"), "no chart drawn"
        print("TORCH" if "torch" in sys.modules else "NO-TORCH")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=APPTEST_DEADLINE, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "NO-TORCH" in out.stdout


def test_parity_badge_shows_the_difference_between_engines():
    at = _page()
    assert "engine: NumPy" in _sidebar_text(at)
    # Once the reference is loaded in this process the badge shows by itself; else a toggle asks.
    if any(t.key == "explore_parity" for t in at.toggle):
        at.toggle(key="explore_parity").set_value(True).run()
    assert not at.exception
    badges = [m.value for m in at.markdown if "NumPy vs PyTorch" in m.value]
    assert badges, "no parity badge"
    diff = float(re.search(r"max \|Δ\| = ([0-9.e+-]+)", badges[0]).group(1))
    assert diff <= 1e-5
    assert "green-badge" in badges[0]


@pytest.mark.slow
def test_other_architectures_fall_back_to_torch_with_a_reason(tmp_path):
    """A RoBERTa checkpoint: the NumPy engine refuses it, the page says why and uses PyTorch."""
    from transformers import RobertaConfig, RobertaModel

    bert_dir = make_tiny_bert(tmp_path / "bert")
    roberta_dir = tmp_path / "roberta"
    config = RobertaConfig(
        vocab_size=len((bert_dir / "vocab.txt").read_text().split()),
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=37,
        max_position_embeddings=130,
    )
    RobertaModel(config).save_pretrained(roberta_dir, safe_serialization=True)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        (roberta_dir / name).write_bytes((bert_dir / name).read_bytes())
    at = _page(model=str(roberta_dir), text="the cat sat on the mat")
    assert not at.error, [e.value for e in at.error]
    notes = " ".join(i.value for i in at.info)
    assert "NumPy engine runs BERT encoders, GPT-2 and Llama decoders only" in notes
    assert "engine: PyTorch" in _sidebar_text(at)
    assert at.get("plotly_chart")


def test_without_torch_only_numpy_is_offered_and_one_line_says_how_to_add_it(monkeypatch):
    """Issue 14: the PyTorch reference is an optional install. Without it the engine switch offers
    NumPy only (torch is never attempted, even when a link asks for it), the sidebar says in one
    line how to add it, and the page works."""
    import sys

    from dashboard import engines

    monkeypatch.setattr(engines, "torch_installed", lambda: False)
    for name in ("torch", "transformers"):  # any attempt to import them now fails
        monkeypatch.setitem(sys.modules, name, None)
    at = _page(engine="torch")
    assert not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart"), "no chart drawn"
    assert not at.radio, "an engine switch with one engine"
    assert at.session_state["explore_engine"] == "numpy" and "engine: NumPy" in _sidebar_text(at)
    assert "unknown `engine`" in " ".join(i.value for i in at.info)  # the link's engine, refused
    hints = [c.value for c in at.sidebar.caption if c.value == engines.TORCH_INSTALL_HINT]
    assert len(hints) == 1, [c.value for c in at.sidebar.caption]
    assert not any(t.key == "explore_parity" for t in at.toggle)  # no parity check to offer
    at.segmented_control(key="explore_view").set_value("focus").run()
    assert not at.exception and len(at.get("plotly_chart")) == 3  # the grid, the pronoun test, the rows


HELD_SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
from dataclasses import replace
import streamlit as st
from dashboard.engines import RESULTS, compute_attention, session_result
from dashboard.shared_results import nbytes_of
from dashboard.hosted import HOSTED  # 128 tokens, as the pushed-out texts below

ss = st.session_state
limits = replace(
    HOSTED,
    shared_result_bytes=ss.get("shared_bytes", HOSTED.shared_result_bytes),
    session_result_bytes=ss.get("session_bytes", HOSTED.session_result_bytes),
)
text = st.session_state.get("text", "The bank approved the loan.")
place = st.session_state.get("place", "test")
result = session_result(place, "bundled", "numpy", text, limits)
st.session_state["held"] = sorted(st.session_state["results_held"])
st.session_state.setdefault("seen", []).append(id(result))
st.session_state["tokens"] = result.tokens
st.session_state["one_result_bytes"] = nbytes_of(result)
st.session_state["views_find_it"] = compute_attention("bundled", "numpy", text, 128) is result
if st.session_state.get("push_out"):  # other texts, as other students' clicks would add
    for i in range(4):
        other = f"Another sentence {{i}}."
        RESULTS.get(("other", i), lambda: compute_attention("bundled", "numpy", other, 128), 1)
    st.session_state["kept"] = (("bundled", "numpy", text, 128) in RESULTS)
    st.session_state["push_out"] = False
"""


def test_a_session_keeps_its_result_when_other_texts_push_it_out_of_the_shared_cache():
    """The shared cache is bounded in bytes; a classroom's thirty sessions pushed each other's
    results out of it, and every click recomputed the forward pass. The session's own reference
    keeps its current result: the same object after the cache has let go of it, a new one for a new
    text."""
    at = AppTest.from_string(HELD_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.session_state["shared_bytes"] = 1  # the shared cache keeps nothing
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    first = at.session_state["seen"][0]
    at.session_state["push_out"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.session_state["kept"], "the shared cache still held the text"
    at.run()
    assert at.session_state["seen"][-1] == first, "the session's own result, not a recomputation"
    assert at.session_state["views_find_it"], "a view's compute_attention finds the session's result"
    at.session_state["text"] = "We sat on the river bank."
    at.run()
    assert at.session_state["seen"][-1] != first
    assert "river" in at.session_state["tokens"]


def test_a_session_holds_results_only_for_the_page_it_shows():
    """compare's two places are held together; opening explore lets them go (thirty students' results
    held on every page they had visited grew a hosted server by 400 MB)."""
    at = AppTest.from_string(HELD_SCRIPT, default_timeout=APPTEST_DEADLINE)
    for place in ("compare1", "compare2"):
        at.session_state["place"] = place
        at.run()
    assert at.session_state["held"] == ["compare1", "compare2"]
    at.session_state["place"] = "explore"
    at.run()
    assert not at.exception and at.session_state["held"] == ["explore"]


def test_what_a_session_holds_stays_within_its_byte_budget_the_oldest_dropped_first():
    """Limits.session_result_bytes bounds a session's results by their arrays' bytes: with room for
    one result, compare's second sentence's result lets the first one's go."""
    at = AppTest.from_string(HELD_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.session_state["session_bytes"] = 1  # smaller than any result: only the newest could stay
    at.session_state["place"] = "compare1"
    at.run()
    assert not at.exception and at.session_state["held"] == []
    at.session_state["session_bytes"] = at.session_state["one_result_bytes"] * 3 // 2  # not two
    at.run()
    assert at.session_state["held"] == ["compare1"]
    at.session_state["place"], at.session_state["text"] = "compare2", "We sat on the river bank."
    at.run()
    assert at.session_state["held"] == ["compare2"]
