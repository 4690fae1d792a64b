"""Hosted mode (issue 5, section 5), with the setting on and off: only allowlisted models (in the
picker and in links), no PyTorch engine and no torch import, capped text and tokens, a line cap in
the lines view, and a bound on new texts per visitor per minute.

current_limits() reads the environment on every run, so monkeypatch.setenv switches the mode.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.models.registry import BUNDLED_KEY, CURATED_HUB_MODELS
from core.models.shipped import SHIPPED_KEY
from core.models.smollm2 import SMOLLM2_KEY
from core.translate.engine import TRANSLATOR_KEY
from dashboard.content.learn_decoder import BFLOAT16_NOTE
from dashboard.engines import allowed_models, explore_models, load_engine
from dashboard.hosted import HOSTED, LOCAL, MORE_MODELS_SETTING, current_limits
from dashboard.model_pick import model_label
from tests.dashboard.harness import (
    ROOT,
    assert_no_crash,
    chart_specs,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    page_script,
    plotly_array,
)
from tests.deadline import APPTEST_DEADLINE

SETTING = "ATTENTION_EXPLORER_HOSTED"
EXPLORE = page_script("explore")
LONG_TEXT = "The trophy would not fit in the suitcase because it was too large. " * 60  # ~800 tokens


def shown_result(at):
    """The result the explore page is showing (the shared cache holds it; the session, its key)."""
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


@pytest.fixture
def hosted(monkeypatch, numpy_engine):
    monkeypatch.setenv(SETTING, "1")


@pytest.fixture
def local(monkeypatch):
    monkeypatch.delenv(SETTING, raising=False)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("hosted_model")))


def open_explore(**params: str) -> AppTest:
    at = AppTest.from_string(EXPLORE, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    return at


def shown(at: AppTest) -> str:
    return " ".join(messages(at))


def model_options(at: AppTest) -> list[str]:
    return at.selectbox(key="explore_model_choice").options


# ---- the setting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", HOSTED),
        ("true", HOSTED),
        (" Yes ", HOSTED),
        ("on", HOSTED),
        ("0", LOCAL),
        ("", LOCAL),
        ("no", LOCAL),
    ],
)
def test_the_environment_variable_is_read_at_call_time(monkeypatch, value, expected):
    monkeypatch.setenv(SETTING, value)
    assert current_limits() == expected
    monkeypatch.delenv(SETTING)
    assert current_limits() == LOCAL


def test_the_streamlit_secret_turns_it_on(local, numpy_engine):
    at = AppTest.from_string(EXPLORE, default_timeout=APPTEST_DEADLINE)
    at.secrets["hosted"] = True
    at.run()
    assert_no_crash(at)
    assert "Other: a Hub id or a local folder…" not in model_options(at)


# ---- models -------------------------------------------------------------------------------------


def test_local_mode_offers_free_text_models_and_every_engine(local, numpy_engine, tiny_model):
    at = open_explore(model=tiny_model)
    assert not at.error and n_charts(at)
    assert "Other: a Hub id or a local folder…" in model_options(at)
    assert at.text_input(key="explore_model_custom").value == tiny_model
    engines = " ".join(at.radio(key="explore_engine").options)
    assert "PyTorch" in engines and "NumPy" in engines


def test_hosted_mode_offers_only_the_allowlist_and_no_torch_engine(hosted):
    at = open_explore()
    assert not at.error and n_charts(at)
    options = model_options(at)
    assert options[0].startswith("all-MiniLM-L6-v2") and len(options) == len(explore_models(HOSTED))
    assert len(explore_models(HOSTED)) == len(allowed_models(HOSTED)) + 1  # and the translator, explore's own
    assert not any(option.startswith("Other") for option in options)
    assert not at.text_input  # no free-text model box anywhere
    assert at.session_state["explore_engine"] != "torch"
    assert all("PyTorch" not in radio.options for radio in at.radio)
    assert "NumPy" in " ".join(c.value for c in at.sidebar.caption)
    from dashboard.engines import TORCH_INSTALL_HINT

    assert TORCH_INSTALL_HINT not in [c.value for c in at.sidebar.caption]  # not offered, not missing


@pytest.mark.parametrize(
    "model",
    ["TINY", "../../etc", "/etc", "~", "https://huggingface.co/bert-base-uncased", "owner/name", "gpt3"],
)
def test_hosted_mode_refuses_a_links_model_and_shows_the_bundled_one(hosted, tiny_model, model):
    at = open_explore(model=tiny_model if model == "TINY" else model, text="The cat sat on the mat.")
    assert "loads only the models in the picker" in shown(at)
    assert n_charts(at) and not at.error
    assert at.selectbox(key="explore_model_choice").value == "bundled"
    assert "model" not in at.query_params  # the URL now names the model shown


def test_hosted_mode_refuses_a_links_torch_engine(hosted):
    at = open_explore(engine="torch")
    assert "unknown `engine`" in shown(at)
    assert at.session_state["explore_engine"] == "numpy" and n_charts(at)


def test_hosted_mode_ignores_a_free_text_model_smuggled_into_the_session(hosted, tiny_model):
    """Defence in depth: even state the picker cannot produce does not load a local folder."""
    at = open_explore()
    at.session_state["fuzz_inject"] = {
        "explore_model_choice": "__other__",
        "explore_model_submitted": tiny_model,
        "explore_last_good": tiny_model,
    }
    at.run()
    assert_no_crash(at)
    assert at.selectbox(key="explore_model_choice").value == "bundled"
    assert at.session_state["explore_result_key"][0] == "bundled"


def test_the_loader_itself_refuses_models_off_the_allowlist(hosted, tiny_model):
    def page():
        import streamlit as st

        from dashboard.hosted import HOSTED
        from dashboard.views.explore import loading

        st.session_state.setdefault("explore_failures", {})
        for choice in (st.session_state["choice"], "owner/name"):
            outcome = loading.try_load(choice, "numpy", HOSTED)
            st.write("refused: " + outcome if isinstance(outcome, str) else "loaded")

    at = AppTest.from_function(page, default_timeout=APPTEST_DEADLINE)
    at.session_state["choice"] = tiny_model
    at.run()
    assert_no_crash(at)
    said = [m.value for m in at.markdown]
    assert said[0].startswith("refused: this server does not load models from local folders"), said
    assert said[1].startswith("refused: this public demo loads only the models in its picker"), said


def fits_the_demo() -> list[str]:
    """The rule: the curated models marked as fitting the demo's memory (the Cloud simulation's)."""
    return [key for key, model in CURATED_HUB_MODELS.items() if model.hosted]


def test_the_hosted_pickers_offer_exactly_the_curated_models_that_fit(hosted):
    # the bundled BERT, the letter GPT-2 shipped with the product (116 KB) and SmolLM2 (fetched at
    # first use, held in bfloat16) always fit; explore adds the translator trained here (0.8 MB)
    keys = [BUNDLED_KEY, SHIPPED_KEY, SMOLLM2_KEY, *fits_the_demo(), TRANSLATOR_KEY]
    expected = [model_label(key) for key in keys]
    assert model_options(open_explore()) == expected
    assert len(fits_the_demo()) < len(CURATED_HUB_MODELS)  # the decoders do not fit (bench/README.md)


def test_local_mode_offers_every_curated_model(local, numpy_engine):
    options = model_options(open_explore())
    assert all(model_label(key) in options for key in CURATED_HUB_MODELS)


@pytest.mark.parametrize("model", [k for k, m in CURATED_HUB_MODELS.items() if not m.hosted])
def test_hosted_mode_refuses_a_link_to_a_curated_model_that_does_not_fit(hosted, model):
    at = open_explore(model=model)
    assert "needs more memory than this public demo has" in shown(at) and "`make run`" in shown(at)
    assert at.selectbox(key="explore_model_choice").value == "bundled" and n_charts(at)


def test_the_host_may_add_curated_models_that_do_not_fit(monkeypatch):
    left_out = [key for key, model in CURATED_HUB_MODELS.items() if not model.hosted]
    monkeypatch.setenv(SETTING, "1")
    monkeypatch.setenv(MORE_MODELS_SETTING, f" {left_out[0]} ,owner/not-curated,")
    limits = current_limits()
    assert limits.more_models == (left_out[0], "owner/not-curated")
    added = [key for key in CURATED_HUB_MODELS if key in fits_the_demo() or key == left_out[0]]
    # "owner/not-curated" is not curated
    assert allowed_models(limits) == [BUNDLED_KEY, SHIPPED_KEY, SMOLLM2_KEY, *added]
    monkeypatch.delenv(SETTING)
    assert current_limits() == LOCAL  # the list means nothing outside hosted mode


@pytest.mark.slow
def test_the_hosted_demo_runs_smollm2_with_its_weights_in_bfloat16(hosted):
    at = open_explore(model=SMOLLM2_KEY, text="The bank approved the loan")
    assert_no_crash(at)
    assert at.selectbox(key="explore_model_choice").value == SMOLLM2_KEY and n_charts(at)
    assert BFLOAT16_NOTE in [caption.value for caption in at.sidebar.caption]  # said beside the model
    hosted_engine = load_engine(SMOLLM2_KEY, "numpy")
    assert hosted_engine.compact and hosted_engine.token_embeddings.dtype == np.uint16
    assert hosted_engine.next_tokens("The capital of France is", 1)[0][0] == " Paris"


def test_a_curated_model_is_allowed_and_offline_it_fails_softly(hosted):
    at = open_explore()
    at.selectbox(key="explore_model_choice").set_value("bert-base-uncased").run()
    assert_no_crash(at)
    assert "cannot reach the Hugging Face Hub" in " ".join(e.value for e in at.error).replace("\\", "")
    assert n_charts(at)  # still showing the bundled model


# ---- inputs -------------------------------------------------------------------------------------


def test_hosted_mode_caps_the_tokens_with_a_notice(hosted):
    at = open_explore(text=LONG_TEXT, view="model")
    result = shown_result(at)
    assert result.n_tokens == HOSTED.max_tokens and result.truncated
    assert "this public demo reads at most 128" in shown(at).replace("\\", "")
    assert f"up to {HOSTED.max_tokens} tokens" in at.text_area(key="explore_text").label
    # the text was cut at a token boundary: the tokens are the full text's first 127, then [SEP]
    from core.models.bert import BertNumpy

    full = BertNumpy.from_pretrained().encode(LONG_TEXT).tokens
    assert result.tokens[:-1] == full[: HOSTED.max_tokens - 1] and result.tokens[-1] == "[SEP]"


def test_local_mode_reads_512_tokens(local, numpy_engine):
    at = open_explore(text=LONG_TEXT, engine="numpy", view="model")
    result = shown_result(at)
    assert result.n_tokens == 512 and "the model reads at most 512" in shown(at).replace("\\", "")


def test_hosted_mode_caps_the_text_box(hosted):
    at = open_explore()
    assert at.text_area(key="explore_text").max_chars == HOSTED.max_text_chars
    at.session_state["fuzz_inject"] = {"explore_text": "word " * 1000}
    at.run()
    assert_no_crash(at)
    assert len(at.text_area(key="explore_text").value) == HOSTED.max_text_chars
    assert "cut to its first 2,000 characters" in shown(at)


def count_lines(at: AppTest) -> int:
    """Line segments in the lines view's figure (three points per segment: from, to, gap)."""
    spec = chart_specs(at)[0]
    return sum(len(plotly_array(t["x"])) // 3 for t in spec["data"] if t.get("mode") == "lines")


def test_hosted_mode_caps_the_lines_view(hosted):
    text = " ".join(["the cat sat on the mat"] * 10)  # 60 words: under 64 tokens every line is drawn
    at = open_explore(text=text, view="lines")
    at.toggle(key="explore_lines_all_heads").set_value(True)
    at.slider(key="explore_lines_min_short").set_value(0.0).run()
    assert_no_crash(at)
    n_tokens = shown_result(at).n_tokens
    assert 12 * n_tokens * n_tokens > HOSTED.max_lines  # uncapped, the figure would exceed it
    assert 0 < count_lines(at) <= HOSTED.max_lines
    assert "strongest lines per head" in " ".join(c.value for c in at.caption)


def test_hosted_mode_bounds_new_texts_per_visitor(hosted, monkeypatch):
    from dashboard import hosted

    now = [1000.0]
    monkeypatch.setattr(hosted, "_clock", lambda: now[0])
    at = open_explore(text="sentence number 0")
    for i in range(1, HOSTED.max_texts_per_minute):
        at.text_area(key="explore_text").set_value(f"sentence number {i}").run()
        assert n_charts(at) and "new texts a minute" not in shown(at)
    at.text_area(key="explore_text").set_value("one text too many").run()
    assert_no_crash(at)
    assert "at most 30 new texts a minute" in shown(at) and not n_charts(at)
    at.segmented_control(key="explore_view").set_value("lines").run()  # still refused, still no error
    assert "new texts a minute" in shown(at)
    now[0] += 61
    at.run()
    assert n_charts(at) and "new texts a minute" not in shown(at)


def test_the_learn_page_works_in_hosted_mode(hosted):
    at = AppTest.from_string(page_script("learn"), default_timeout=APPTEST_DEADLINE)
    at.query_params["step"] = "all"
    at.run()
    assert_no_crash(at)
    assert n_charts(at) >= 10


# ---- torch is never imported --------------------------------------------------------------------


def test_hosted_mode_runs_every_view_without_importing_torch(numpy_engine):
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        from tests.dashboard.harness import page_script
        at = AppTest.from_string(page_script("explore"), default_timeout={APPTEST_DEADLINE})
        at.query_params["engine"] = "torch"
        at.run()
        for view in ("head", "lines", "model", "focus"):
            at.segmented_control(key="explore_view").set_value(view).run()
            assert not at.exception and at.get("plotly_chart"), view
        at.selectbox(key="explore_model_choice").set_value("bert-base-uncased").run()
        assert not at.exception
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
        print("HEAVY:" + ",".join(heavy))
        """
    )
    env = {**os.environ, SETTING: "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    heavy = next(line for line in out.stdout.splitlines() if line.startswith("HEAVY:"))
    assert heavy == "HEAVY:", heavy
