"""AppTest of the explore page's answers a student alone can trust: focus and target kept as words
(they follow the word into an edited sentence, or fall back with a note), the head view marking a pair
only when one was chosen, "find the head" ranked by specificity with heads that look at the target
from everywhere flagged, the trophy comparison computed from the numbers, the primer and the link to
the learn page, the model picker showing the model shown, and error messages' code spans."""

from __future__ import annotations

import json
from urllib.parse import quote

from streamlit.testing.v1 import AppTest

from core.measures.analysis import rank_heads_specific
from dashboard.content import explore as text
from tests.dashboard.test_explore import assert_healthy, open_page, shown_result
from tests.deadline import APPTEST_DEADLINE

NEW_TROPHY = "The trophy didn't fit into the brown suitcase because it was too big."


def picked(at: AppTest, name: str) -> str:
    """The label of the token the focus view's `name` picker shows."""
    box = next(s for s in at.selectbox if s.key.startswith(f"explore_w_{name}_"))
    return box.format_func(box.value).split("  (#")[0]


def head_shapes(at: AppTest) -> list:
    return json.loads(at.get("plotly_chart")[0].proto.spec)["layout"].get("shapes", [])


def infos(at: AppTest) -> str:
    return " ".join(i.value for i in at.info)


def test_a_new_sentence_keeps_the_chosen_words_not_their_positions():
    at = open_page()  # trophy-large: it → trophy chosen by the example, marked in the head view
    assert head_shapes(at)
    at.text_area(key="explore_text").input(NEW_TROPHY).run()
    assert_healthy(at)
    assert at.query_params["focus"] == "it" and at.query_params["target"] == "trophy"
    assert "still has “it” → “trophy”" in infos(at)
    assert head_shapes(at), "the chosen pair is still marked"
    at.segmented_control(key="explore_view").set_value("focus").run()
    assert_healthy(at, 2)
    assert (picked(at, "focus"), picked(at, "target")) == ("it", "trophy")
    headline = next(m.value for m in at.markdown if "Find the head" in m.value)
    assert "“it”" in headline and "“trophy”" in headline and "because" not in headline


def test_words_missing_from_the_new_sentence_fall_back_and_unmark_the_pair():
    at = open_page()
    at.text_area(key="explore_text").input("A cat sat on a mat.").run()
    assert_healthy(at)
    # the example's pair the typed sentence lacks: one short line, no box each (issue 48: two boxes
    # pushed the answer below the fold)
    example = text.EXAMPLES[text.DEFAULT_EXAMPLE]
    assert not at.info
    lines = [c.value for c in at.caption if "new text" in c.value]
    words = f"“{example.focus}” or “{example.target}”"
    assert lines == [f"The new text has no {words}: focus and target are back to the defaults."]
    assert "focus" not in at.query_params and "target" not in at.query_params
    assert not head_shapes(at), "no pair marked that nobody chose"
    at.segmented_control(key="explore_view").set_value("focus").run()
    assert_healthy(at, 2)
    # a choice in the focus view is a pair again, kept as words
    target = next(s for s in at.selectbox if s.key.startswith("explore_w_target_"))
    target.set_value(6).run()  # "mat"
    assert at.query_params["target"] == "mat" and at.query_params["focus"] == "a"
    at.segmented_control(key="explore_view").set_value("head").run()
    assert head_shapes(at)


def test_a_new_sentence_with_one_of_the_words_says_which_went_in_one_line():
    at = open_page()
    example = text.EXAMPLES[text.DEFAULT_EXAMPLE]
    at.text_area(key="explore_text").input(f"A cat sat on {example.focus}.").run()
    assert_healthy(at)
    assert not at.info and at.query_params["focus"] == example.focus and "target" not in at.query_params
    lines = [c.value for c in at.caption if "new text" in c.value]
    assert lines == [f"The new text has no “{example.target}”: the target word is back to the default."]


def test_second_occurrences_and_old_position_links():
    at = open_page(text="The cat saw the dog.", view="focus", focus="the#2", target="5")
    assert_healthy(at, 2)
    tokens = shown_result(at).tokens
    focus = next(s for s in at.selectbox if s.key.startswith("explore_w_focus_"))
    assert focus.value == 4 and tokens[4] == "the"
    assert at.query_params["focus"] == "the#2"
    assert at.query_params["target"] == "dog"  # an old link's position, now named by its word
    bad = open_page(text="The cat saw the dog.", focus="zebra")
    assert_healthy(bad)
    assert "“zebra” is not a word of this text (the link's `focus`)" in infos(bad)


def test_find_the_head_ranks_by_specificity_and_flags_everywhere_heads():
    at = open_page(example="bank-loan", view="focus")
    assert_healthy(at, 2)
    result = shown_result(at)
    links = rank_heads_specific(result.attentions, 2, 5, result.special_mask)  # bank → loan
    best = links[0]
    headline = next(m.value for m in at.markdown if "Find the head" in m.value)
    assert f"layer {best.layer + 1}, head {best.head + 1}" in headline and f"{best.specific:+.2f}" in headline
    table = next(m.value for m in at.markdown if "| specific |" in m.value)
    raw = max(links, key=lambda x: x.weight)
    assert raw.everywhere and raw is not best  # the model's fact the page must not hide
    raw_row = next(r for r in table.splitlines() if f"layer {raw.layer + 1}, head {raw.head + 1} |" in r)
    assert "from everywhere" in raw_row and "strongest raw weight" in raw_row
    assert f"{raw.specific:+.2f}" in raw_row
    assert any("looks at “loan” from everywhere" in c.value and "ranks" in c.value for c in at.caption)
    assert at.button(key="explore_top_1").label.startswith(
        f"1. layer {best.layer + 1}, head {best.head + 1}:"
    )
    # the example's head is the most specific one
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (best.layer, best.head)


def test_trophy_comparison_says_what_the_numbers_say():
    at = open_page(view="focus")
    assert_healthy(at, 2)
    shown = [m.value for m in at.markdown]
    assert any("does attention follow the meaning" in m for m in shown)
    table = next(m for m in shown if "too large: trophy / suitcase" in m)
    rows = [r for r in table.splitlines()[2:]]
    follow = sum("yes:" in r for r in rows)
    n = len(rows)
    if follow == 0:
        expected = text.TROPHY_NONE.format(n=n)
    elif follow == n:
        expected = text.TROPHY_ALL.format(n=n)
    else:
        expected = text.TROPHY_SOME.format(k=follow, n=n, rest=n - follow)
    assert expected in shown
    bank = open_page(example="bank-loan", view="focus")
    assert not any("follow the meaning" in m.value for m in bank.markdown)


def test_primer_and_link_to_the_learn_page():
    at = open_page(text="Café & <b>bold</b> [x](y)")
    assert_healthy(at)
    assert at.expander[0].label == text.HOW_TO_READ_LABEL
    link = next(c.value for c in at.caption if "learn page" in c.value)
    assert f"(learn?example=bert&text={quote('Café & <b>bold</b> [x](y)', safe='')})" in link
    presenting = AppTest.from_function(_presented_page, default_timeout=APPTEST_DEADLINE)
    presenting.session_state["present"] = True
    presenting.run()
    assert_healthy(presenting)
    # presenter mode: no title, no primer, the controls folded into one closed panel, the chart first
    # (the neuron view's closed section under the head chart is the only other panel)
    labels = [e.label for e in presenting.expander]
    assert labels[0] == "Controls: sentence, view, layer and head" and text.HOW_TO_READ_LABEL not in labels
    assert all(label.startswith("Where this weight comes from") for label in labels[1:])
    assert not presenting.title and not any("learn page" in c.value for c in presenting.caption)
    assert presenting.get("plotly_chart")  # the view drawn under the panel


def _presented_page():
    from dashboard.views import explore

    explore.render()


def test_a_model_that_fails_leaves_the_picker_on_the_model_shown():
    at = open_page()
    at.selectbox(key="explore_model_choice").set_value("bert-base-uncased").run()
    assert_healthy(at)
    assert any("cannot reach the Hugging Face Hub" in e.value for e in at.error)
    assert at.selectbox(key="explore_model_choice").value == "bundled"
    at.run()  # the next interaction: the picker still names what is shown, the error is gone
    assert at.selectbox(key="explore_model_choice").value == "bundled" and not at.error


def test_error_messages_keep_their_code_but_not_user_markdown():
    from dashboard.views.explore.loading import error_md

    assert error_md("type `bert-base-cased` here") == "type `bert-base-cased` here"
    assert error_md("“**x**” is not `a_b`.") == "“\\*\\*x\\*\\*” is not `a_b`\\."
    assert "`" not in error_md("odd ` one").replace("\\`", "")


def _learn_page():
    from dashboard.views import learn

    learn.render()


def test_the_last_learn_step_links_to_explore_on_the_same_sentence():
    sentence = "Café & [x](y) *it*"
    for mode in ({}, {"example": "bert"}):
        at = AppTest.from_function(_learn_page, default_timeout=APPTEST_DEADLINE)
        at.query_params.update({"text": sentence, "step": "7", **mode})
        at.run()
        assert not at.exception
        link = next(b for b in at.get("link_button") if "explore page" in b.proto.label)
        assert link.proto.url == f"explore?text={quote(sentence, safe='')}"
    at = AppTest.from_function(_learn_page, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"text": sentence, "step": "6"})
    at.run()
    assert not at.get("link_button")
