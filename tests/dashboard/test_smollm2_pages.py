"""SmolLM2 on the explore page (issue 36 §3): offered offline, every cheap decoder view drawn on it,
and the source articles' question answered by the model on the focus view, with the sentences on
the page equal to what core.measures.choice computes from the same engine. The package is installed
by `make test` (the Makefile's MODEL_PKG), so a missing file fails here rather than skipping.

One session switches views: the model loads once (about 7 s warm; the conversion from the GGUF,
about 20 s, happens once per test process)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.measures.choice import choose
from core.measures.decoder_reads import logit_lens
from core.models import smollm2
from dashboard.content import continuation as text
from dashboard.content.explore import MERGE_LABEL
from dashboard.continuation import pair_statement, verdict
from dashboard.engines import load_engine, offline_models
from dashboard.views.explore.decoder import lens_findings
from tests.dashboard.harness import assert_no_crash, messages, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

CHEAP_VIEWS = ("head", "lines", "model", "nextword", "lens", "sinks")


@pytest.fixture(scope="module")
def app() -> AppTest:
    assert smollm2.packaged_gguf(), f"SmolLM2's package is missing: {smollm2.SMOLLM2_PIP_HINT}"
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": "smollm2", "view": "focus", "example": "trophy-large"})
    at.run()
    assert_no_crash(at)
    return at


def test_smollm2_is_offered_offline_with_its_label():
    assert smollm2.SMOLLM2_KEY in offline_models()


def test_a_link_to_a_listed_model_selects_it_in_the_picker(app):
    assert app.selectbox(key="explore_model_choice").value == "smollm2"


def test_the_focus_view_says_what_the_model_prefers_after_each_sentence_of_the_pair(app):
    engine = load_engine("smollm2", "numpy")
    large, small = text.PROBES[text.TROPHY_LARGE], text.PROBES[text.TROPHY_SMALL]
    first = choose(engine, large.prefix, large.options)[1]
    second = choose(engine, small.prefix, small.options)[1]
    shown = [m.value for m in app.markdown]
    assert verdict(first, "trophy") in shown
    pair = pair_statement(first, second, ("trophy", "suitcase"), ("“too large”", "“too small”"))
    assert any(line.endswith(pair) and line.startswith("With “too small” instead:") for line in shown)
    # labels as a reader writes them: no byte-level "Ġ" on the page
    assert not [m.value for m in app.markdown if "Ġ" in m.value]


@pytest.mark.parametrize("view", CHEAP_VIEWS)
def test_a_decoder_view_draws_on_smollm2(app, view):
    app.query_params.clear()
    app.segmented_control(key="explore_view").set_value(view).run()
    assert_no_crash(app, view)
    assert n_charts(app) or app.get("imgs"), (view, messages(app))
    assert not app.error, (view, messages(app))


def test_the_parity_badge_checks_smollm2_against_pytorch():
    """The engine switch's check: transformers' LlamaForCausalLM on the same converted weights (the
    torch reference engine) against the NumPy engine, on the page, within the bridge's 1e-5."""
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": "smollm2", "view": "head", "text": "The bank approved the loan"})
    at.run()
    at.toggle(key="explore_parity").set_value(True).run()
    assert_no_crash(at)
    (badge,) = [m.value for m in at.markdown if "NumPy vs PyTorch" in m.value]
    assert badge.startswith(":green-badge[") and float(badge.split("= ")[1].rstrip("]")) <= 1e-5
    assert any("30 × 9 heads" in c.value for c in at.caption)
    assert any("engine: NumPy" in c.value and "Llama" in c.value for c in at.caption)


def test_smollm2_is_spoken_of_in_its_own_terms_and_its_lens_findings_are_computed(app):
    """Issue 37 on the real LLM: pieces of words to merge, no [CLS]/[SEP] (its tokenizer adds none),
    and the lens's sentences equal to what the grid computes."""
    app.query_params.clear()
    app.segmented_control(key="explore_view").set_value("lens").run()
    assert_no_crash(app)
    assert [t.label for t in app.toggle if t.key in ("explore_merge", "explore_hide")] == [MERGE_LABEL]
    said = " ".join(str(m.value) for kind in ("markdown", "caption", "info") for m in app.get(kind))
    assert "CLS" not in said and "refine" not in said
    engine = load_engine("smollm2", "numpy")
    result = engine.run(app.session_state["explore_text"])
    shown = logit_lens(engine, result.hidden_states[:, -16:]).top_ids
    assert lens_findings(shown, result.input_ids[-16:]) in said
