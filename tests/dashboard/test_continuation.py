""" "Which continuation does the model prefer?" (dashboard/continuation.py): the verdict said from the
numbers, on explore's focus view and on the compare page, checked against core.measures.choice run
directly; every kind of bad text typed into its three boxes. A 2-layer random GPT-2 built here keeps
it cheap; tests/dashboard/test_smollm2_pages.py asks the real model the source articles' questions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.measures.choice import Option, choose
from core.models.gpt2 import GPT2Numpy
from dashboard.content import compare as compare_text
from dashboard.content import continuation as text
from dashboard.content.compare import PRESETS
from dashboard.continuation import as_continuation, pair_statement, probe_for, verdict
from tests.dashboard.harness import (
    FUZZ,
    assert_no_crash,
    bad_texts,
    messages,
    named_examples,
    page_script,
    set_text,
)
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.usefixtures("fast_apptest")


SENTENCE = "The cat sat on the mat because it was tired."


def option(name: str, logprob: float, n_tokens: int = 1, first: float | None = None) -> Option:
    return Option(f" {name}", [name] * n_tokens, list(range(n_tokens)), logprob, first or logprob)


# ---- the sentences, from the numbers ----------------------------------------------------------------


def test_the_verdict_names_the_likelier_and_the_ratio():
    said = verdict([option("suitcase", -4.0), option("trophy", -2.0)])
    assert said.startswith("The model prefers **trophy**: 7.4× as probable as **suitcase**")
    assert "(log-probabilities -2.00 and -4.00)" in said and "differ in length" not in said


def test_the_verdict_says_when_the_lengths_differ_and_gives_the_first_tokens():
    said = verdict([option("trophy", -4.0, first=np.log(0.018)), option("suit case", -6.2, 2, np.log(0.006))])
    assert "They differ in length (1 and 2 tokens)" in said and "0.018 and 0.006" in said


def test_the_verdict_compares_with_a_reader_only_when_told_the_answer():
    options = [option("trophy", -2.0), option("suitcase", -3.0)]
    assert "A reader would choose **trophy** too." in verdict(options, "trophy")
    assert "here the model does not" in verdict(options, "suitcase")
    assert "reader" not in verdict(options)
    tie = verdict([option("a", -1.0), option("b", -1.0)], "a")
    assert "the same probability" in tie and "reader" not in tie


def test_the_pair_statement_is_computed_from_both_answers():
    trophy, suitcase = (
        [option("trophy", -1.0), option("suitcase", -2.0)],
        [option("trophy", -2.0), option("suitcase", -1.0)],
    )
    readers, names = ("trophy", "suitcase"), ("one", "two")
    assert pair_statement(trophy, suitcase, readers, names).startswith("The model's preference follows")
    assert "does not resolve the pronoun" in pair_statement(trophy, trophy, readers, names)
    assert "the opposite of a reader's" in pair_statement(suitcase, trophy, readers, names)
    assert pair_statement(trophy, suitcase, (None, None), names) == text.PAIR_OTHER.format(
        first="trophy", second="suitcase", one="one", two="two"
    )


def test_a_continuation_gets_its_space_unless_it_has_one():
    assert as_continuation("was the", "trophy") == " trophy"
    assert as_continuation("was the", " trophy") == " trophy"
    assert as_continuation("was the ", "trophy") == "trophy"
    assert as_continuation("was the", "") == ""


def test_the_articles_sentences_come_with_their_probes_and_partners():
    probe = probe_for(text.TROPHY_LARGE)
    assert probe.prefix.endswith("The thing that was too large was the") and probe.options == text.TROPHY
    partner = text.PROBES[probe.partner]
    assert (probe.reader, partner.reader) == ("trophy", "suitcase") and partner.partner == text.TROPHY_LARGE
    assert probe_for("  A typed sentence. ") == text.Probe("A typed sentence.", ("", ""))


# ---- on the pages -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(make_tiny_gpt2(tmp_path_factory.mktemp("continuation_model"), n_layer=2, n_head=2, n_embd=16))


def _focus_page(model: str) -> AppTest:
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": model, "view": "focus", "text": SENTENCE})
    at.run()
    assert_no_crash(at)
    return at


def test_the_focus_view_asks_the_model_and_says_what_it_computed(tiny_model):
    at = _focus_page(tiny_model)
    assert at.text_area(key="explore_choice_prefix").value == SENTENCE  # a typed sentence: open boxes
    assert text.EMPTY in messages(at)
    at.text_input(key="explore_choice_a").set_value("cat")
    at.text_input(key="explore_choice_b").set_value(" mat").run()
    assert_no_crash(at)
    expected = verdict(choose(GPT2Numpy.from_pretrained(tiny_model), SENTENCE, (" cat", " mat"))[1])
    assert expected in [m.value for m in at.markdown]
    shown = at.dataframe[0].value
    assert list(shown[text.TABLE_COLUMNS[0]]) == ["cat", "mat"]


def test_a_prefix_past_the_pages_limit_gets_one_line(tiny_model):
    at = _focus_page(tiny_model)
    at.text_input(key="explore_choice_a").set_value("cat")
    at.text_input(key="explore_choice_b").set_value("mat")
    at.text_area(key="explore_choice_prefix").set_value("ab " * 600).run()
    assert_no_crash(at)
    # the tiny model reads 64 positions, fewer than the page's 512: 63 and one for the continuation
    assert any(m.startswith("The text has") and "this panel reads at most 63:" in m for m in messages(at))


def test_every_bad_text_in_the_three_boxes_gets_an_answer(tiny_model):
    at = _focus_page(tiny_model)

    @FUZZ
    @named_examples(lambda value: {"case": (value, "explore_choice_prefix")})
    @named_examples(lambda value: {"case": (value, "explore_choice_a")})
    @given(
        case=st.tuples(
            bad_texts(), st.sampled_from(["explore_choice_prefix", "explore_choice_a", "explore_choice_b"])
        )
    )
    def case(case):
        value, key = case
        at.text_area(key="explore_choice_prefix").set_value(SENTENCE)
        at.text_input(key="explore_choice_a").set_value("cat")
        at.text_input(key="explore_choice_b").set_value("mat")
        set_text(at, "text_area" if key.endswith("prefix") else "text_input", key, value)
        at.run()
        assert_no_crash(at, (key, value[:40]))
        answered = [m.value for m in at.markdown if m.value.startswith("The model ")] or messages(at)
        assert answered, (key, value[:40], "the panel neither answered nor said why")

    case()


def test_compare_asks_after_each_sentence_of_the_pair(tiny_model):
    at = AppTest.from_string(page_script("compare"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": tiny_model})
    at.run()
    assert_no_crash(at)
    assert at.text_input(key="compare_choice_a").value == " trophy"
    engine = GPT2Numpy.from_pretrained(tiny_model)
    # "it" comes before "large"/"small": a decoder cannot tell the sentences apart there, and says so
    # (naming both positions, counted from 1) instead of ranking heads or reading the pronoun test
    tokens = [engine.run(PRESETS["trophy"].text).tokens, engine.run(PRESETS["trophy"].text2).tokens]
    changed = next(i for i, (a, b) in enumerate(zip(*tokens, strict=True)) if a != b)
    it = next(i for i, token in enumerate(tokens[0]) if token.lstrip("Ġ") == "it")
    said = [m for m in messages(at) if "No evidence either way here" in m]
    assert len(said) == 1 and f"(token {it + 1})" in said[0] and f"at token {changed + 1}" in said[0]
    assert compare_text.RANK_TITLE not in [h.value for h in at.subheader]
    assert not any("by this test" in m.value for m in at.markdown)  # no pronoun verdict
    answers = [
        choose(engine, text.PROBES[s].prefix, text.TROPHY)[1] for s in (text.TROPHY_LARGE, text.TROPHY_SMALL)
    ]
    shown = [m.value for m in at.markdown]
    assert verdict(answers[0], "trophy") in shown and verdict(answers[1], "suitcase") in shown
    assert pair_statement(*answers, ("trophy", "suitcase"), ("sentence 1", "sentence 2")) in shown
