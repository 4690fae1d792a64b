"""The learn page's translator mode (`/learn?model=translator`): the cross-attention step of the
shipped English → French translator on a typed sentence. Every matrix on the page is checked against
core/translate/lesson.py's numbers; the controls (examples, layer, head, French word, step, the
clicker's pager) move the page and its link; text the translator cannot read gets one line while the
last sentence it read stays; typed text never reaches markdown unescaped."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.translate.engine import TRANSLATOR_DIR, TranslatorEngine
from core.translate.lesson import cross_step
from dashboard.content import learn_translator as content
from tests.dashboard.harness import assert_no_crash
from tests.dashboard.test_learn import SCRIPT, chart, texts, z
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")

DEFAULT = content.DEFAULT_TEXT  # "the black cat sees the dog" -> "le chat noir voit le chien"


@pytest.fixture(scope="module")
def engine() -> TranslatorEngine:
    return TranslatorEngine(TRANSLATOR_DIR)


# the app reads `present` from the link (and draws the toggle) before the page runs
PRESENTER_SCRIPT = SCRIPT.replace(
    "from dashboard.views import learn",
    "from dashboard import presenter\npresenter.presenter_toggle_ui()\nfrom dashboard.views import learn",
)


def opened(script: str = SCRIPT, **params: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    params.setdefault("model", "translator")
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert_no_crash(at, params)
    return at


def headings(at: AppTest) -> list[str]:
    return [s.value for s in at.subheader]


def english(at: AppTest) -> str:
    return at.text[0].value


def test_the_link_opens_every_step_on_the_best_head(engine):
    at = opened(step="all")
    assert at.session_state["learn_mode"] == content.MODE
    titles = headings(at)
    assert [t.split(" ·")[0] for t in titles[:7]] == [f"Step {i}" for i in range(1, 8)]
    assert titles[7].startswith("Checked")
    assert english(at) == "the  ·  black  ·  cat  ·  sees  ·  the  ·  dog  ·  </s>"
    assert at.text[1].value == "le  ·  chat  ·  noir  ·  voit  ·  le  ·  chien  ·  </s>"
    assert "decoder layer 2 of 2, head 3" in at.info[0].value  # the best head of training: 0-indexed 1, 2
    assert "aligned best in training (92%" in at.info[0].value
    assert at.selectbox[0].value == 2  # "noir": written out of the English order
    step = cross_step(engine, DEFAULT, 1, 2)
    np.testing.assert_allclose(z(chart(at, "tr_probs")), step["probs"], atol=1e-12)
    np.testing.assert_allclose(z(chart(at, "tr_scores")), step["scores"], atol=1e-12)
    np.testing.assert_allclose(z(chart(at, "tr_query")), step["query"][:, :4], atol=1e-12)
    np.testing.assert_allclose(z(chart(at, "tr_memory")), step["memory"][:, :8], atol=1e-12)
    np.testing.assert_allclose(z(chart(at, "tr_normed")), step["normed"][:, :4], atol=1e-12)
    np.testing.assert_allclose(
        z(chart(at, "tr_self_probs"))[np.tril_indices(7)], step["self_probs"][np.tril_indices(7)]
    )
    terms = z(chart(at, "tr_sum"))  # each English word's term, then their sum: z's row
    np.testing.assert_allclose(terms[:-1].sum(axis=0), terms[-1], atol=1e-12)
    np.testing.assert_allclose(terms[-1], step["context"][2, :4], atol=1e-12)
    assert any(t.startswith("**12 of 12** steps agree") for t in texts(at))
    assert dict(at.query_params) == {"model": "translator", "step": "all"}  # the defaults left out


def test_a_linked_layer_head_and_word_are_shown_and_kept_in_the_link(engine):
    text = "the white flowers do not follow the boys"
    at = opened(text=text, layer="0", head="1", target="pas", step="5")
    step = cross_step(engine, text, 0, 1)
    row = step.target_tokens.index("pas")
    assert at.selectbox[0].value == row
    assert headings(at) == ["Step 5 · Softmax over the English words: no mask"]
    spec = chart(at, "tr_probs")
    np.testing.assert_allclose(z(spec), step["probs"], atol=1e-12)
    assert spec["layout"]["shapes"][0]["y0"] == row - 0.5  # the row followed, outlined
    params = dict(at.query_params)
    assert params == {
        "model": "translator",
        "text": text,
        "layer": "0",
        "head": "1",
        "target": "pas",
        "step": "5",
    }


def test_the_controls_move_the_page_and_its_link():
    at = opened(step="3")
    at.segmented_control(key="learn_tr_head").set_value(0).run()
    assert "head 1" in at.info[0].value and at.query_params["head"] == "0"
    at.selectbox[0].set_value(1).run()  # "chat"
    assert at.query_params["target"] == "chat"
    at.pills(key="learn_tr_pick").set_value(list(content.EXAMPLES)[2]).run()  # a new sentence
    assert english(at).startswith("a  ·  tired  ·  horse")
    assert "target" not in at.query_params  # its own default word
    assert at.query_params["text"] == content.EXAMPLES[list(content.EXAMPLES)[2]]
    at.button(key="learn_next").click().run()  # the pager (a clicker's PageDown)
    assert at.session_state["learn_step"] == "4" and headings(at)[0].startswith("Step 4")
    at.button(key="learn_prev").click().run()
    assert at.session_state["learn_step"] == "3"


def test_the_mode_picker_reaches_the_translator_and_leaves_it_clean():
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.run()
    assert content.MODE_LABEL in at.segmented_control(key="learn_mode").options
    at.segmented_control(key="learn_mode").set_value(content.MODE).run()
    assert_no_crash(at)
    assert at.query_params["model"] == "translator" and "example" not in at.query_params
    assert english(at).startswith("the  ·  black  ·  cat")  # its own sentence, not the toy's
    at.selectbox[0].set_value(0).run()
    assert at.query_params["target"] == "le"
    at.segmented_control(key="learn_mode").set_value("sentence").run()
    assert "model" not in at.query_params and "target" not in at.query_params
    assert at.text[0].value.startswith("The  ·  cat  ·  sat")


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("the zebra sees the *dog*", "does not know “zebra”"),
        ("   ", "type an English sentence"),
        ("the cat " * 20, "the translator reads at most 31"),
    ],
)
def test_text_it_cannot_read_gets_one_line_and_the_last_sentence_stays(typed, said):
    at = opened(step="1")
    at.text_input(key="learn_tr_text").set_value(typed).run()
    assert_no_crash(at, typed)
    (warning,) = at.warning
    assert said in warning.value.replace("\\", "")
    assert english(at).startswith("the  ·  black  ·  cat")  # the previous sentence's view
    assert at.get("plotly_chart") and "text" not in at.query_params  # the link: the sentence shown


def test_typed_text_never_reaches_markdown_unescaped():
    at = opened(step="all", text="the zebra sees $x$ **bold** :red[dog]")
    for written in texts(at):
        assert "**bold**" not in written and ":red[" not in written and "$x$" not in written, written
    assert english(at).startswith("the  ·  black")  # the page's own sentence: the link's was unreadable


def test_the_decoder_modes_link_to_the_translator_opens_it_and_the_check_stop():
    at = opened(example="decoder", step="check")
    assert at.session_state["learn_mode"] == content.MODE
    assert headings(at) == ["Checked: the same numbers as the model's forward pass"]
    assert any("6 of 6 French words" in c.value for c in at.caption)  # the gold alignment, outlined
    assert len(chart(at, "tr_aligned")["layout"]["shapes"]) == 6
    assert at.table  # the check's table


def test_presenter_mode_folds_the_controls_away():
    at = opened(PRESENTER_SCRIPT, step="2", present="1")
    assert at.expander and headings(at)[0].startswith("Step 2")
    assert not at.title  # on a projector the step's heading comes first


def test_a_linked_layer_past_the_translators_gets_a_note_and_the_best_head():
    at = opened(layer="5", head="1", step="1")
    assert any("`layer` value 5 is past the translator's 2" in w.value for w in at.warning)
    assert "decoder layer 2 of 2, head 2" in at.info[0].value


def test_the_sentence_layer_head_and_word_survive_a_visit_to_another_page():
    from tests.dashboard.test_learn import AWAY_SCRIPT

    at = opened(AWAY_SCRIPT, step="3")
    at.text_input(key="learn_tr_text").set_value("the green horse finds the doors").run()
    at.segmented_control(key="learn_tr_layer").set_value(0).run()
    at.selectbox[0].set_value(3).run()
    before = dict(at.query_params)
    at.session_state["away"] = True
    at.run()  # the learn widgets are not drawn: Streamlit drops their state
    at.session_state["away"] = False
    at.run()
    assert_no_crash(at)
    assert english(at).startswith("the  ·  green  ·  horse") and at.selectbox[0].value == 3
    assert dict(at.query_params) == before and before["layer"] == "0"
