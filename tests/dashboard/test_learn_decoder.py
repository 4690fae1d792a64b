"""The learn page's decoder mode (`example=decoder&model=...`): one block of a GPT-2 drawn by the same
renderer as BERT's layer, with the causal mask as a stop of its own. The GPT-2 is a tiny random
checkpoint saved here as a local folder (no Hub here); every number on the page is checked against
the NumPy engine's own trace (GPT2Numpy.forward(ids, trace_layers=[layer]).steps). Offline, with the
default Hub decoder, the mode says in one line what to load. Bad model text and bad links go through
the shared fuzz harness."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.models.gpt2 import GPT2Numpy
from core.models.shipped import SHIPPED_KEY
from core.text import clean_input
from dashboard.content.explore import LETTERS_BECAME
from dashboard.content.learn import LETTER_SENTENCES, SENTENCES
from dashboard.content.learn_decoder import DEFAULT_DECODER, HOSTED_ONLY
from tests.dashboard.harness import (
    FUZZ,
    NAMED_LINK_VALUES,
    assert_answered,
    assert_no_crash,
    bad_texts,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_examples,
    named_links,
    plotly_array,
    set_text,
)
from tests.dashboard.test_learn import SCRIPT, chart, texts, z
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.usefixtures("fast_apptest")

SENTENCE = "The trophy would not fit in the suitcase"
LAYERS, HEADS = 2, 4
LINKED_DIR = Path(tempfile.gettempdir()) / f"attention-explorer-learn-gpt2-{__import__('os').getpid()}"


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("gpt2"), n_layer=LAYERS, n_head=HEADS, n_embd=32)


@pytest.fixture(scope="module")
def engine(gpt2_dir) -> GPT2Numpy:
    return GPT2Numpy.from_pretrained(gpt2_dir)


def steps(engine: GPT2Numpy, layer: int, text: str = SENTENCE) -> dict[str, np.ndarray]:
    """The engine's own trace of one block: what the page must show."""
    ids = engine.encode(text).ids
    return engine.forward(ids, trace_layers=[layer]).steps[layer]


def open_decoder(gpt2_dir, **params: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "model": str(gpt2_dir), "text": SENTENCE, **params})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def layers_of(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """A causal chart's two layers: the cell values (NaN where written out) and the written-out text."""
    return z(spec), np.asarray(spec["data"][1]["text"], dtype=object)


# ---- the causal mask, step by step, with the engine's numbers --------------------------------------


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (1, 3)])
def test_the_causal_mask_step_shows_minus_infinity_and_exact_zeros(gpt2_dir, engine, layer, head):
    at = open_decoder(gpt2_dir, step="mask", layer=str(layer), head=str(head))
    assert not at.error, [e.value for e in at.error]
    assert at.subheader[0].value.startswith("Causal mask")
    trace = steps(engine, layer)
    t = trace["probs"].shape[-1]
    above = np.triu(np.ones((t, t), dtype=bool), k=1)
    assert above.any()
    # the scores as step 4 left them: every one, above the diagonal too
    np.testing.assert_allclose(z(chart(at, "mask_scaled")), trace["scaled"][head], atol=1e-5)
    # the same scores with the upper triangle at −∞: written "−∞", never a number
    values, written = layers_of(chart(at, "masked"))
    assert np.isneginf(trace["masked"][head][above]).all()
    assert (written[above] == "−∞").all() and (written[~above] == "").all()
    assert np.isnan(values[above]).all() and np.isfinite(values[~above]).all()
    np.testing.assert_allclose(values[~above], trace["masked"][head][~above], atol=1e-5)
    # the softmax: exact zeros above the diagonal (written "0"), the engine's weights below
    values, written = layers_of(chart(at, "mask_probs"))
    assert (trace["probs"][head][above] == 0.0).all()
    assert (written[above] == "0").all()
    np.testing.assert_allclose(values[~above], trace["probs"][head][~above], atol=1e-6)
    # and the weights the explore page shows for this head (the engine's AttentionResult)
    np.testing.assert_allclose(
        np.where(above, 0.0, values), engine.run(SENTENCE).attentions[layer, head], atol=1e-6
    )
    said = " ".join(texts(at))
    assert f"Above the diagonal are {above.sum()} cells: {above.sum()} of them −∞" in said
    assert "the largest of them is 0 (exactly zero)" in said
    assert at.query_params["step"] == "mask" and at.query_params["model"] == str(gpt2_dir)


def test_every_step_and_stop_in_order_with_the_engines_numbers(gpt2_dir, engine):
    at = open_decoder(gpt2_dir, step="all")
    assert not at.error, [e.value for e in at.error]
    headers = [h.value for h in at.subheader]
    assert [h.split(" ")[0:2] for h in headers[:3]] == [["Step", "1"], ["LayerNorm", "first"], ["Step", "2"]]
    order = [
        h for h in headers if h.startswith(("Step 4", "Causal mask", "Step 5", "Step 7", "After attention"))
    ]
    assert [h[:6] for h in order] == ["Step 4", "Causal", "Step 5", "Step 7", "After "]
    assert "no layer norm" in headers[headers.index(order[3])]
    trace = steps(engine, 0)
    ids = engine.encode(SENTENCE).ids
    # learned positions: X is the token rows plus the position rows, the engine's own tables
    np.testing.assert_allclose(z(chart(at, "embeddings")), engine.token_embeddings[ids][:, :8], atol=1e-6)
    np.testing.assert_allclose(
        z(chart(at, "positions")), engine.position_embeddings[: len(ids), :8], atol=1e-6
    )
    np.testing.assert_allclose(z(chart(at, "x")), trace["x"][:, :8], atol=1e-6)
    # pre-LN: Q, K, V read LayerNorm_1(X)
    np.testing.assert_allclose(z(chart(at, "ln1")), trace["ln1"][:, :8], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "query")), trace["query"][0][:, :4], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "probs")), trace["probs"][0], atol=1e-6)
    # step 7 ends at the residual (no LayerNorm after it); the MLP stop shows LN_2, the MLP, the block
    np.testing.assert_allclose(z(chart(at, "residual")), trace["residual"][:, :8], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "ln2")), trace["normed"][:, :4], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "layer_output")), trace["layer_output"][:, :4], atol=1e-5)
    gelu = chart(at, "gelu")["data"]
    assert gelu[0]["name"].startswith("GELU, tanh form")
    x, y = plotly_array(gelu[0]["x"]), plotly_array(gelu[0]["y"])
    np.testing.assert_allclose(
        y, 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), atol=1e-9
    )
    said = " ".join(texts(at))
    assert "a 2-layer GPT-2 (d_model 32 = 4 heads × d_k 8)" in said and "learned" in said


def test_the_pager_walks_through_the_decoders_own_stops(gpt2_dir):
    at = open_decoder(gpt2_dir, step="4")
    at.button(key="learn_next").click().run()
    assert at.session_state["learn_step"] == "mask" and at.query_params["step"] == "mask"
    at.button(key="learn_next").click().run()
    assert at.session_state["learn_step"] == "5"
    assert not at.exception


def test_a_later_layer_reads_the_previous_blocks_output(gpt2_dir, engine):
    at = open_decoder(gpt2_dir, step="1", layer="1")
    ids = engine.encode(SENTENCE).ids
    np.testing.assert_allclose(z(chart(at, "x")), engine.forward(ids).hidden_states[1][:, :8], atol=1e-5)
    assert "output of layer 1" in " ".join(e.value for e in at.latex)


# ---- which decoder ---------------------------------------------------------------------------------


def test_offline_the_default_decoder_is_smollm2_which_reads_english():
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "step": "rope"})
    at.run()
    assert_no_crash(at)
    assert at.selectbox(key="learn_decoder_choice").value == "smollm2"
    assert at.get("plotly_chart") and not at.error and not at.warning
    assert "SmolLM2" in messages(at)[0] and "Llama family" in messages(at)[0]  # the model's numbers, named


def test_without_smollm2_the_page_opens_on_the_letter_model_silently(monkeypatch):
    from core.models import smollm2

    monkeypatch.setattr(smollm2, "packaged_gguf", lambda: None)  # as after `pip install -r requirements.txt`
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "gpt2", "step": "mask"})  # the mode's first name: old links work
    at.run()
    assert_no_crash(at)
    assert at.query_params["example"] == "decoder"  # and the address now says it by its name
    assert at.selectbox(key="learn_decoder_choice").value == SHIPPED_KEY
    assert not [o for o in at.selectbox(key="learn_decoder_choice").options if "SmolLM2" in o]
    assert at.get("plotly_chart") and not at.error and not at.warning
    assert "letters GPT" in messages(at)[0]
    # a model that reads letters is offered runs of letters, and told what English became (issue 37)
    ready = next(p for p in at.get("button_group") if p.label == "Ready examples")
    assert ready.options == [title for title, _text in LETTER_SENTENCES.values()]
    letters = "".join(c for c in at.session_state["learn_text"].lower() if c.isalpha())
    assert LETTERS_BECAME.format(n=len(letters), shown=f"“{letters}”") in [i.value for i in at.info]


def test_a_decoder_that_reads_english_is_offered_english_examples():
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "model": "smollm2"})
    at.run()
    ready = next(p for p in at.get("button_group") if p.label == "Ready examples")
    assert ready.options == [title for title, _text in SENTENCES.values()]
    assert not [i for i in at.info if "letters a to z" in i.value]


def test_offline_a_hub_decoder_is_one_line_and_the_page_goes_on():
    # tests/conftest.py sets HF_HUB_OFFLINE, so the Hub fails here as it does on a machine offline
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "step": "mask", "model": "distilbert/distilgpt2"})
    at.run()
    assert_no_crash(at)
    assert at.selectbox(key="learn_decoder_choice").value == "distilbert/distilgpt2"
    shown = messages(at)
    assert len(shown) == 1 and "distilbert/distilgpt2" in shown[0] and "network" in shown[0], shown
    assert not at.error and not at.get("plotly_chart")
    # the rest of the page is unaffected
    at.segmented_control(key="learn_mode").set_value("sentence").run()
    assert_no_crash(at)
    assert at.get("plotly_chart") and not messages(at)


def test_a_bert_is_not_a_decoder(tmp_path):
    folder = make_tiny_bundled_tokenizer_bert(tmp_path / "bert")
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "model": str(folder)})
    at.run()
    assert_no_crash(at)
    assert "is not a decoder" in " ".join(e.value for e in at.error)
    assert not at.get("plotly_chart")


def test_a_typed_folder_loads_and_goes_into_the_link(gpt2_dir):
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "step": "mask"})
    at.run()
    at.selectbox(key="learn_decoder_choice").set_value("__other__").run()
    at.text_input(key="learn_decoder_typed").set_value(str(gpt2_dir))
    at.button(key="learn_decoder_load").click().run()
    assert_no_crash(at)
    assert at.query_params["model"] == str(gpt2_dir) and at.get("plotly_chart")


# ---- bad input: the shared fuzz harness -------------------------------------------------------------


@pytest.fixture(scope="module")
def typed_app(gpt2_dir) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "step": "mask", "model": str(gpt2_dir)})
    at.run()
    at.selectbox(key="learn_decoder_choice").set_value("__other__").run()
    assert_answered(at)
    return at


def test_any_typed_model_gives_a_message_never_a_traceback(typed_app, gpt2_dir):
    at = typed_app  # tests/conftest.py sets HF_HUB_OFFLINE: a Hub id fails at once, as offline

    @FUZZ
    @named_examples(lambda text: {"typed": text})
    @example("bundled")
    @example("/nonexistent/folder")
    @example("https://huggingface.co/gpt2")
    @given(typed=bad_texts(longest=10_001))
    def case(typed):
        set_text(at, "text_input", "learn_decoder_typed", typed)
        at.button(key="learn_decoder_load").click().run()
        assert_answered(at, typed)
        assert not any(e.value for e in at.exception)
        kept = clean_input(typed, 300)[0].strip()
        if kept and kept != str(gpt2_dir):
            assert messages(at), typed  # said why (offline, not a model, not a decoder...)
        set_text(at, "text_input", "learn_decoder_typed", str(gpt2_dir))  # back to a good decoder
        at.button(key="learn_decoder_load").click().run()
        assert_no_crash(at, "good decoder after " + repr(typed)[:80])
        assert n_charts(at) == 3, messages(at)

    case()


LINK_TEXT = st.one_of(
    st.sampled_from([v for v in NAMED_LINK_VALUES.values() if isinstance(v, str)]),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=20),  # a link carries UTF-8 only
)


@pytest.fixture(scope="module")
def linked_gpt2():
    """The tiny GPT-2 at a path known when the tests are collected, for the links' examples."""
    if not (LINKED_DIR / "config.json").is_file():
        make_tiny_gpt2(LINKED_DIR, n_layer=LAYERS, n_head=HEADS, n_embd=32)
    yield LINKED_DIR
    shutil.rmtree(LINKED_DIR, ignore_errors=True)


def test_any_link_gives_a_message_never_a_traceback(linked_gpt2):
    tried = []

    @FUZZ
    # layer, head and step meet every kind of link value on a decoder that loads; then the model
    @named_links(
        ("layer", "head", "step"), {"example": "decoder", "model": str(LINKED_DIR), "text": SENTENCE}
    )
    @named_links(("model",), {"example": "decoder", "step": "mask"})
    @example(
        params={"example": "decoder", "model": str(LINKED_DIR), "layer": "2", "head": "4", "step": "mlp"}
    )
    @example(params={"example": "decoder", "model": str(LINKED_DIR), "step": "ln", "head": "-1"})
    @given(
        params=st.fixed_dictionaries(
            {
                "example": st.sampled_from(["decoder", "gpt2"]),
                "model": st.one_of(st.sampled_from([str(LINKED_DIR), DEFAULT_DECODER]), LINK_TEXT),
            },
            optional={name: LINK_TEXT for name in ("layer", "head", "step", "text")},
        )
    )
    def case(params):
        tried.append(params)
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        assert at.title[0].value == "Learn: attention from scratch"
        if params.get("model") == str(LINKED_DIR) and params.get("layer") in ("2", "99999"):
            assert "`layer` value" in " ".join(messages(at)), messages(at)

    case()
    assert len(tried) >= 2 * len(NAMED_LINK_VALUES)


def test_hosted_mode_loads_no_folder_and_says_so(gpt2_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "model": str(gpt2_dir), "step": "mask"})
    at.run()
    assert_no_crash(at)
    # a local folder never loads on the public demo: it shows the letter GPT-2 shipped with the
    # product instead (the curated Hub decoders do not fit the demo's memory)
    assert messages(at)[0] == HOSTED_ONLY.format(model=SHIPPED_KEY)
    assert at.selectbox(key="learn_decoder_choice").value == SHIPPED_KEY and at.get("plotly_chart")
