"""AppTest of the compare page with the bundled model: the presets, the aligned difference (checked
against the two results computed directly by the engine), the not-aligned message, the ranking and
its one-click head openers, the URL round trip, bad URL values, one bad sentence, and presenter
mode."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.compare import total_variation
from dashboard.content.compare import PRESETS
from tests.dashboard.harness import plotly_array
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")


def _compare_page():
    from dashboard.views import compare

    compare.render()


def open_page(present: bool = False, **params) -> AppTest:
    at = AppTest.from_function(_compare_page, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({k: str(v) for k, v in params.items()})
    if present:
        at.session_state["present"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def specs(at: AppTest) -> list[dict]:
    """The attention maps' figures (the line charts of the pronoun test and of how far the focus
    word moves, keys compare_pronoun_* and compare_moves, and patching's grids, compare_patch_*,
    left out)."""
    every = at.get("plotly_chart")
    lines = ("compare_pronoun", "compare_moves", "compare_patch")
    return [json.loads(c.proto.spec) for c in every if not any(k in c.proto.id for k in lines)]


def pronoun_specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "compare_pronoun" in c.proto.id]


def titles(at: AppTest) -> list[str]:
    return [(s["layout"].get("title") or {}).get("text", "") for s in specs(at)]


def shown(at: AppTest) -> str:
    return " ".join(
        str(m.value) for kind in ("error", "warning", "info", "markdown", "caption") for m in at.get(kind)
    )


@pytest.fixture(scope="module")
def engine():
    from dashboard.engines import load_engine

    return load_engine("bundled", "numpy")


def test_trophy_preset_aligned_difference_equals_the_engines_results(engine):
    at = open_page()
    preset = PRESETS["trophy"]
    assert at.text_area(key="compare_text").value == preset.text
    assert at.text_area(key="compare_text2").value == preset.text2
    assert "Swapped: “large → small”" in shown(at).replace("\\", "")
    assert not at.error
    layer, head = at.session_state["compare_layer"], at.session_state["compare_head"]
    heads = titles(at)
    assert len(heads) == 3
    assert heads[0].startswith("Sentence 1 · ") and heads[1].startswith("Sentence 2 · ")
    assert "sentence 2 − sentence 1" in heads[2]
    assert all(f"layer {layer + 1}, head {head + 1}" in t for t in heads)
    one, two = engine.run(preset.text), engine.run(preset.text2)  # computed directly, not the page's cache
    diff = plotly_array(specs(at)[2]["data"][0]["z"])
    want = two.attentions[layer, head].astype(np.float64) - one.attentions[layer, head]
    assert diff.shape == want.shape == (17, 17)
    assert np.allclose(diff, want, atol=1e-6)
    trace = specs(at)[2]["data"][0]
    assert trace["zmid"] == 0 and trace["zmin"] == pytest.approx(-trace["zmax"])
    assert trace["zmax"] == pytest.approx(np.abs(want).max(), rel=1e-5)
    ticks = trace["x"]
    assert ticks[14] == "large→small" and ticks[:2] == ["[CLS]", "the"]
    side = plotly_array(specs(at)[0]["data"][0]["z"])
    assert np.allclose(side, one.attentions[layer, head], atol=1e-6)


def test_preset_opens_the_most_changed_head_and_the_ranking_is_right(engine):
    at = open_page()
    preset = PRESETS["trophy"]
    one, two = engine.run(preset.text), engine.run(preset.text2)
    focus = one.tokens.index("it")
    change = total_variation(one.attentions[:, :, focus], two.attentions[:, :, focus])  # (L, H)
    best = np.unravel_index(np.argmax(change), change.shape)
    assert (at.session_state["compare_layer"], at.session_state["compare_head"]) == tuple(
        int(x) for x in best
    )
    table = at.dataframe[0].value
    assert len(table) == one.n_layers * one.n_heads
    top = table.iloc[0]
    assert (top["layer"], top["head"]) == (best[0] + 1, best[1] + 1)
    assert top["change"] == pytest.approx(change.max(), abs=1e-6)
    assert list(table["change"]) == sorted(table["change"], reverse=True)
    assert "total variation" in shown(at)


def test_a_ranking_button_opens_that_head():
    at = open_page()
    table = at.dataframe[0].value
    third = table.iloc[2]
    at.button(key="compare_top_3").click().run()
    assert (at.session_state["compare_layer"] + 1, at.session_state["compare_head"] + 1) == (
        third["layer"],
        third["head"],
    )
    assert f"layer {third['layer']}, head {third['head']}" in titles(at)[0]
    assert at.query_params["layer"] == str(third["layer"] - 1)


def test_sliders_change_the_head_shown():
    at = open_page(layer=0, head=0)
    assert "layer 1, head 1" in titles(at)[0]  # the link names a head: the preset does not move it
    at.select_slider[0].set_value(3).run()
    at.select_slider[1].set_value(7).run()
    assert all("layer 4, head 8" in t for t in titles(at))
    assert at.query_params["layer"] == "3" and at.query_params["head"] == "7"


def test_bank_preset_is_not_aligned_and_ranks_by_roles():
    at = open_page(preset="bank")
    assert at.text_area(key="compare_text2").value == PRESETS["bank"].text2
    text = shown(at)
    assert "do not line up token by token (8 vs 9 tokens)" in text
    assert len(titles(at)) == 2 and not any("sentence 2 − sentence 1" in t for t in titles(at))
    assert "6 roles (the start token \\[CLS\\]" in text and "the token after it" in text
    focus = next(s for s in at.selectbox if s.key.startswith("compare_w_focus_"))
    assert focus.value == "bank" and "bank" in focus.options


def test_editing_a_box_makes_the_pair_your_own_and_the_url_round_trips():
    at = open_page()
    at.text_area(key="compare_text2").set_value(
        "The trophy wouldn't fit in the suitcase because it was too big."
    )
    at.run()
    assert at.session_state["compare_preset"] == "own"
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["preset"] == "own" and params["text2"].endswith("too big.")
    again = open_page(**params)
    assert again.text_area(key="compare_text").value == PRESETS["trophy"].text
    assert again.text_area(key="compare_text2").value.endswith("too big.")
    for name in ("layer", "head", "focus"):
        assert again.query_params[name] == params[name]
    assert titles(again) == titles(at)


def test_link_with_texts_and_focus():
    at = open_page(text="The cat saw the dog.", text2="The cat saw the bird.", focus="the#2", layer=2, head=5)
    assert at.session_state["compare_preset"] == "own"
    focus = next(s for s in at.selectbox if s.key.startswith("compare_w_focus_"))
    assert focus.value == "the#2"
    assert "layer 3, head 6" in titles(at)[0] and len(titles(at)) == 3
    assert "Swapped: “dog → bird”" in shown(at).replace("\\", "")


def test_default_focus_rule_for_own_pairs():
    at = open_page(text="The cat saw the dog.", text2="The cat saw a dog.")
    focus = next(s for s in at.selectbox if s.key.startswith("compare_w_focus_"))
    assert focus.value == "saw"  # the shared word just before the first word that differs
    assert "just before the first word that differs" in shown(at)


@pytest.mark.parametrize(
    ("params", "note"),
    [
        ({"layer": "99"}, "`layer` value 99 is outside this model's layers: layers 1–6 on screen"),
        ({"head": "-3"}, "`head` value -3 is outside this model's heads: heads 1–12 on screen"),
        ({"layer": "x"}, "not a whole number"),
        ({"preset": "nope"}, "unknown `preset`"),
        ({"show": "<b>"}, "unknown `show`"),
        ({"focus": "zebra"}, "not a word both sentences share"),
        ({"engine": "quantum"}, "unknown `engine`"),
    ],
)
def test_bad_url_values_are_said_and_the_page_still_draws(params, note):
    at = open_page(**params)
    assert note in shown(at).replace("\\", ""), shown(at)
    assert len(titles(at)) == 3 and not at.error


def test_one_bad_sentence_keeps_the_other():
    at = open_page(text="The cat sat.", text2="")
    assert "Type sentence 2" in shown(at)
    assert len(titles(at)) == 1 and titles(at)[0].startswith("Sentence 1")
    at = open_page(text="\u200b\u200d", text2="A dog ran.")
    assert "Sentence 1: could not run the model on this text: the text has no tokens" in shown(at)
    assert len(titles(at)) == 1 and titles(at)[0].startswith("Sentence 2")


def test_markup_is_shown_as_text():
    payload = "<b>bold</b> [x](javascript:1) **star**"
    at = open_page(text=payload, text2=payload.replace("bold", "thin"))
    assert not at.error and len(titles(at)) == 3
    labels = specs(at)[0]["data"][0]["x"]
    assert "&lt;" in labels and "<" not in "".join(labels)


def test_long_text_is_cut_with_a_note(monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")  # hosted mode reads at most 128 tokens
    long = "word " * 300
    at = open_page(text=long, text2=long + "cat")
    assert "reads at most 128" in shown(at)
    assert len(plotly_array(specs(at)[0]["data"][0]["z"])) == 128


def test_presenter_mode_charts_first_and_a_switch_for_the_difference():
    at = open_page(present=True)
    assert not at.title  # the chart first
    assert any("Controls" in e.label for e in at.expander)
    assert len(titles(at)) == 2
    at.segmented_control(key="compare_show").set_value("diff").run()
    assert len(titles(at)) == 1 and "sentence 2 − sentence 1" in titles(at)[0]
    assert at.query_params["show"] == "diff"
    assert specs(at)[0]["layout"]["font"]["size"] == 20  # presenter sizing


def test_hosted_mode_bounds_new_texts_a_minute_over_both_sentences(monkeypatch):
    """The public demo's new-texts-a-minute bound (dashboard.hosted) counts each new sentence and
    each new patching grid: the pair and its heads grid cost three, and a fourth new text is refused
    with the page's message, not an error."""
    from dataclasses import replace

    from dashboard import hosted

    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    monkeypatch.setattr(hosted, "HOSTED", replace(hosted.HOSTED, max_texts_per_minute=3))
    at = open_page(text="The cat sat.", text2="The dog sat.")
    assert len(specs(at)) >= 2 and not at.warning
    assert at.get("plotly_chart")[-1].proto.id.endswith("compare_patch_heads_chart")
    at.select_slider[0].set_value(1).run()  # the same sentences and grid are not counted again
    assert len(specs(at)) >= 2 and not at.warning
    at.text_area(key="compare_text2").set_value("The bird sat.").run()
    assert not at.exception
    assert "at most 3 new texts a minute" in shown(at)


def focus_box(at: AppTest) -> object:
    return next(s for s in at.selectbox if s.key.startswith("compare_w_focus_"))


def test_words_that_moved_do_not_line_up_and_the_page_says_so_once():
    """Same length, but "he said" moved: no "swapped" message, no difference map, and the ranking
    says the tokens do not line up (the message, the map and the rule agree)."""
    at = open_page(text="He said no .", text2="No he said .")
    text = shown(at).replace("\\", "")
    assert "some words moved rather than being swapped in place" in text
    assert "Swapped" not in text and "line up token by token (" not in text
    assert len(titles(at)) == 2 and not any("sentence 2 − sentence 1" in t for t in titles(at))
    assert "The tokens do not line up, so" in text and "total variation between" not in text


def test_words_swapped_in_place_line_up_and_the_rule_follows_the_focus():
    at = open_page(text="Dogs chase cats.", text2="Cats chase dogs.")
    text = shown(at).replace("\\", "")
    assert "Swapped: “dogs → cats”, “cats → dogs”" in text
    assert len(titles(at)) == 3 and "sentence 2 − sentence 1" in titles(at)[2]
    # the default focus is a shared word at the same place in both: "chase", not "dogs"
    assert focus_box(at).value == "chase"
    assert "total variation between" in text and "not at the same place" not in text
    assert [(s["y0"], s["y1"]) for s in specs(at)[2]["layout"]["shapes"]] == [(1.5, 2.5)]
    focus_box(at).set_value("dogs").run()  # token 1 in sentence 1, token 3 in sentence 2
    text = shown(at).replace("\\", "")
    assert "“dogs” is not at the same place in both sentences, so" in text
    assert not specs(at)[2]["layout"].get("shapes")  # no row of the difference is "dogs" in both


def test_focus_caption_says_what_is_shown():
    at = open_page()
    assert "Focus: the preset's word." in shown(at)
    at = open_page(preset="trophy", focus="suitcase")
    assert focus_box(at).value == "suitcase"
    assert "Focus: your choice." in shown(at) and "the preset's word" not in shown(at)
    focus_box(at).set_value("it").run()
    assert "Focus: the preset's word." in shown(at) and "your choice" not in shown(at)


def test_a_run_that_stops_early_leaves_no_pending_head(monkeypatch, engine):
    """The trophy preset asks to open its most changed head; when sentence 2 is refused (hosted
    bound) that cannot happen, and a head the user picks afterwards must stay."""
    from dataclasses import replace

    from dashboard import hosted

    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    monkeypatch.setattr(hosted, "HOSTED", replace(hosted.HOSTED, max_texts_per_minute=1))
    at = open_page()
    assert "at most 1 new texts a minute" in shown(at) and len(titles(at)) == 1
    preset = PRESETS["trophy"]
    one, two = engine.run(preset.text), engine.run(preset.text2)
    focus = one.tokens.index("it")
    change = total_variation(one.attentions[:, :, focus], two.attentions[:, :, focus])
    assert np.unravel_index(np.argmax(change), change.shape) != (3, 7)
    at.select_slider[0].set_value(3).run()
    at.select_slider[1].set_value(7).run()
    monkeypatch.setattr(hosted, "HOSTED", replace(hosted.HOSTED, max_texts_per_minute=10))
    at.run()
    assert len(titles(at)) == 3 and all("layer 4, head 8" in t for t in titles(at))
    assert (at.session_state["compare_layer"], at.session_state["compare_head"]) == (3, 7)


def test_a_word_in_pieces_is_compared_by_its_mean_row(engine):
    text1, text2 = "The zebrafish swam away.", "The zebrafish sank away."
    at = open_page(text=text1, text2=text2)
    one, two = engine.run(text1), engine.run(text2)
    assert one.tokens[2:4] == ["zebra", "##fish"]
    assert focus_box(at).value == "zebrafish"
    rows1 = one.attentions[:, :, 2:4].astype(np.float64).mean(axis=2)  # (L, H, T)
    rows2 = two.attentions[:, :, 2:4].astype(np.float64).mean(axis=2)
    want = total_variation(rows1, rows2)
    table = at.dataframe[0].value
    for _, row in table.head(5).iterrows():
        assert row["change"] == pytest.approx(want[row["layer"] - 1, row["head"] - 1], abs=1e-6)
    assert table.iloc[0]["change"] == pytest.approx(want.max(), abs=1e-6)
    assert "split into pieces and read as one word: its row is the mean of its pieces' rows" in shown(at)
    for spec in specs(at):  # both maps and the difference outline the word's two rows
        assert [(s["y0"], s["y1"]) for s in spec["layout"]["shapes"]] == [(1.5, 3.5)]


def test_how_far_the_focus_word_moves(engine):
    at = open_page(preset="bank")
    (moves,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "compare_moves" in c.proto.id]
    one, two = engine.run(PRESETS["bank"].text), engine.run(PRESETS["bank"].text2)
    s1, s2 = one.tokens.index("bank"), two.tokens.index("bank")
    h1, h2 = one.hidden_states.astype(np.float64), two.hidden_states.astype(np.float64)
    expected = [
        h1[n, s1] @ h2[n, s2] / np.linalg.norm(h1[n, s1]) / np.linalg.norm(h2[n, s2]) for n in range(7)
    ]
    np.testing.assert_allclose(plotly_array(moves["data"][0]["y"]), expected, atol=1e-6)
    said = shown(at)
    assert f"the two “bank”s have cosine **{expected[0]:.2f}**" in said
    assert f"After the last layer it is **{expected[-1]:.2f}**" in said
    assert ("pulls the two readings apart" in said) == (expected[-1] < expected[0] - 0.05)
