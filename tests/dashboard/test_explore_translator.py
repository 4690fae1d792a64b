"""The explore page on the translator trained here (issue 38 §3): offered in the picker (here and on
the hosted demo), opened on the head that aligned best in training, the cross-attention with the
grammar's gold alignment outlined and every head's alignment on the sentence, the encoder's and the
decoder's self-attention, and a word it does not know said in one line with the last sentence kept.
Every number is recomputed here from core.translate on the shipped model."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.translate.engine import TRANSLATOR_DIR, TRANSLATOR_KEY, TranslatorEngine
from core.translate.measures import alignment_accuracy
from core.translate.parse import pair_of
from dashboard.content import translator as text
from tests.dashboard.harness import assert_no_crash, chart_specs, messages, page_script, plotly_array
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")


@pytest.fixture(scope="module")
def engine():
    return TranslatorEngine(TRANSLATOR_DIR)


def open_page(**params) -> AppTest:
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": TRANSLATOR_KEY, **params})
    at.run()
    assert_no_crash(at, params)
    return at


def z_of(spec: dict) -> np.ndarray:
    return plotly_array(spec["data"][0]["z"])


def test_it_opens_on_the_best_head_with_the_gold_alignment_and_every_heads_share(engine):
    at = open_page()
    assert at.selectbox(key="explore_model_choice").value == TRANSLATOR_KEY
    recorded = np.asarray(json.loads((TRANSLATOR_DIR / "training_record.json").read_text())["alignment"][-1])
    layer, head = np.unravel_index(int(np.argmax(recorded)), recorded.shape)
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (layer, head)
    done = engine.translate(text.DEFAULT_TEXT)
    said = " ".join(str(m.value) for m in at.markdown)
    assert text.TRANSLATION.format(target=" ".join(done.target_tokens[:-1])) in said
    cross, grid = chart_specs(at)
    np.testing.assert_allclose(z_of(cross), done.cross[layer, head], atol=1e-6)
    gold = pair_of(text.DEFAULT_TEXT)
    assert len(cross["layout"]["shapes"]) == len(gold.alignment)  # one red box a gold link
    np.testing.assert_allclose(z_of(grid), alignment_accuracy(done.cross[:, None], [gold]))
    assert any(str(c.value) == text.GOLD_SAME for c in at.caption)


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_each_kind_of_self_attention_draws_the_engines_weights(engine, kind):
    at = open_page(kind=kind, layer="1", head="2")
    done = engine.translate(text.DEFAULT_TEXT)
    (spec,) = chart_specs(at)
    weights = (done.encoder if kind == "encoder" else done.decoder)[1, 2]
    shown = z_of(spec)
    if kind == "decoder":  # the future is masked: blank cells
        assert np.isnan(shown[np.triu_indices_from(shown, k=1)]).all()
        shown = np.where(np.isnan(shown), 0.0, shown)
    np.testing.assert_allclose(shown, weights, atol=1e-6)


def test_an_unknown_word_is_one_line_and_the_last_sentence_stays(engine):
    at = open_page(text="the cat sees the dog.")
    assert not messages(at)  # punctuation is dropped, as the tokenizer drops it
    at.text_input(key="explore_text").set_value("the zebra sees the dog").run()
    assert_no_crash(at)
    (warning,) = [m for m in messages(at) if "zebra" in m]
    assert warning.startswith("The translator cannot read this")
    done = engine.translate("the cat sees the dog")
    assert text.TRANSLATION.format(target=" ".join(done.target_tokens[:-1])) in [m.value for m in at.markdown]


def test_an_example_fills_the_box_and_a_sentence_outside_the_grammar_says_so():
    at = open_page()
    at.get("button_group")[0].set_value("Never seen together").run()
    assert at.session_state["explore_text"] == text.EXAMPLES["Never seen together"]
    at.text_input(key="explore_text").set_value(
        "cats see dogs the"
    ).run()  # the grammar's words, not its order
    assert text.NOT_GRAMMAR in [str(c.value) for c in at.caption]
    assert len(chart_specs(at)) == 1  # no gold alignment: the cross-attention alone


def test_the_hosted_demo_offers_the_translator(monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    at = open_page()
    assert at.session_state["explore_model"] == TRANSLATOR_KEY and not at.error
    assert at.selectbox(key="explore_model_choice").value == TRANSLATOR_KEY


@pytest.mark.parametrize("kind", ["cross", "encoder", "decoder"])
def test_the_lines_view_draws_a_line_for_each_weight_of_the_head_from_its_side_to_the_other(engine, kind):
    at = open_page(view="lines", kind=kind, layer="1", head="2")  # 0-indexed in links
    done = engine.translate(text.DEFAULT_TEXT)
    (spec,) = chart_specs(at)
    words = [t for t in spec["data"] if t.get("mode") == "markers+text"]
    rows, cols = {
        "cross": (done.target_tokens, done.source_tokens),
        "encoder": (done.source_tokens, done.source_tokens),
        "decoder": (["<s>", *done.target_tokens[:-1]], ["<s>", *done.target_tokens[:-1]]),
    }[kind]
    assert [list(w["text"]) for w in words] == [[html.escape(t) for t in side] for side in (rows, cols)]
    weights = (done.cross if kind == "cross" else done.encoder if kind == "encoder" else done.decoder)[1, 2]
    drawn = [t for t in spec["data"] if t.get("mode") == "lines" and t.get("visible") is True]
    segments = sum(np.count_nonzero(~np.isnan(plotly_array(t["x"]))) // 2 for t in drawn)
    assert segments == int((weights >= 0.02).sum())  # every line of the head that is not too light


def test_the_model_view_has_a_thumbnail_a_head_and_a_click_opens_it(engine):
    at = open_page(view="model", kind="cross")
    (spec,) = chart_specs(at)
    points = next(t for t in spec["data"] if t.get("name") == "heads")
    n_layers, n_heads = engine.config.decoder_layers, engine.config.heads
    assert len(points["text"]) == n_layers * n_heads
    done = engine.translate(text.DEFAULT_TEXT)
    read = done.cross[0, 1].mean(axis=0)  # layer 1, head 2: the word it reads most, rows averaged
    assert f"reads “{done.source_tokens[int(np.argmax(read))]}” most: {read.max():.0%}" in points["text"][1]


def test_step_by_step_shows_each_steps_choices_and_what_the_heads_read(engine):
    at = open_page(view="generate", layer="1", step="3")
    done = engine.translate(text.DEFAULT_TEXT)
    said = " ".join(str(m.value) for m in at.markdown)
    assert (
        text.STEP_TEXT.format(
            step=3,
            n=len(done.target_tokens),
            before=" ".join(done.target_tokens[:2]),
            word=done.target_tokens[2],
        )
        in said
    )
    top, read = chart_specs(at)
    probs = done.next_probs[2]
    np.testing.assert_allclose(plotly_array(top["data"][0]["x"]), np.sort(probs)[::-1][:5], atol=1e-6)
    np.testing.assert_allclose(z_of(read), done.cross[1, :, 2], atol=1e-6)
    at.button(key="explore_gen_next").click().run()
    assert "Step 4 of" in " ".join(str(m.value) for m in at.markdown)


def test_a_view_the_translator_does_not_have_opens_its_head_view():
    at = open_page(view="focus")
    assert at.session_state["explore_view"] == "head"
    assert text.VIEW_NOT_HERE.format(view="Token focus") in [str(m.value) for m in at.info]


@pytest.mark.parametrize(
    ("typed", "said"),
    [("", "type an English sentence"), ("the cat sees the dog " * 8, "the translator reads at most 31")],
)
def test_empty_text_and_text_past_its_length_are_one_line_each(engine, typed, said):
    at = open_page()
    at.text_input(key="explore_text").set_value(typed).run()
    assert_no_crash(at)
    (warning,) = messages(at)
    assert said in warning and warning.startswith("The translator cannot read this")
    done = engine.translate(text.DEFAULT_TEXT)  # the last sentence it could read stays
    assert text.TRANSLATION.format(target=" ".join(done.target_tokens[:-1])) in [m.value for m in at.markdown]
