"""The explore page true to the letter GPT-2 that ships (issue 37): a link to its folder selects it in
the picker; the induction view opens on a length it was trained for, switches off only heads that
score as induction heads (the train page's rule, naming the same heads) and says why when a measurement
goes against their scores; no word pieces, [CLS]/[SEP] or "␣" where the model has none; English
typed into it gets one line saying what it became; the logit lens's sentences are computed from its
grid. Each number is recomputed here from core, on the same shipped model."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.decoder_reads import logit_lens, settled_rows
from core.measures.induction import INDUCTION_MIN, induction
from core.models.shipped import SHIPPED_DIR, SHIPPED_KEY
from core.train.data import CYCLE
from core.train.record import load_record
from dashboard.content import decoder as text
from dashboard.content.compare import PRESETS
from dashboard.content.explore import EXAMPLES, LETTERS_BECAME, MERGE_LABEL
from dashboard.engines import load_engine
from dashboard.views.explore.decoder import lens_findings
from dashboard.views.explore.induction import LETTER_LENGTH, top_scoring
from dashboard.views.train.findings import heads_named, statements
from tests.dashboard.harness import assert_no_crash, chart_specs, messages, page_script, plotly_array
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")

SCRIPT = page_script("explore")


def open_page(**params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": SHIPPED_KEY, **params})
    at.run()
    assert_no_crash(at, params)
    assert not at.error, messages(at)
    return at


def everything_said(at: AppTest) -> str:
    """Every text on the page a reader sees: markdown, captions, notes, labels of toggles, pills and
    folds."""
    parts = [str(m.value) for kind in ("markdown", "caption", "info", "warning") for m in at.get(kind)]
    parts += [t.label for t in at.toggle] + [e.label for e in at.expander]
    parts += [o for p in at.get("button_group") for o in p.options]
    return " ".join(parts)


@pytest.fixture(scope="module")
def engine():
    return load_engine(SHIPPED_KEY, "numpy")


def test_a_link_to_the_shipped_folder_selects_the_listed_model():
    at = open_page(model=str(SHIPPED_DIR), view="head")
    assert at.selectbox(key="explore_model_choice").value == SHIPPED_KEY
    assert at.session_state["explore_model_custom"] == ""


def induction_heads_by_loop(scores: np.ndarray, most: int) -> list[tuple[int, int]]:
    """The heads scoring INDUCTION_MIN or more, highest first, at most `most`: the rule, by hand."""
    heads = [(lh, scores[lh]) for lh in np.ndindex(scores.shape) if scores[lh] >= INDUCTION_MIN]
    return sorted(lh for lh, _ in sorted(heads, key=lambda item: -item[1])[:most])


def test_induction_opens_on_a_length_the_model_was_trained_for(engine):
    at = open_page(view="induction")
    assert at.session_state["explore_ind_length"] == LETTER_LENGTH <= CYCLE[1]
    said = everything_said(at)
    assert "Two copies of" not in said  # no IND_TOO_LONG note: the default fits the context
    found = induction(engine, LETTER_LENGTH, 0)
    heads = induction_heads_by_loop(found.scores, 5)
    assert top_scoring(found.scores, 5) == tuple(heads) and len(heads) < 5  # layer 1's 0.07 is not one
    cut = induction(engine, LETTER_LENGTH, 0, heads)
    rise = cut.loss_repeat - found.loss_repeat
    assert rise > 0  # the story the train page tells holds at this length
    assert text.IND_CHANGE.format(rise=rise, undone=rise / (found.loss_first - found.loss_repeat)) in said
    named = ", ".join(f"{layer + 1}.{head + 1}" for layer, head in heads)
    assert f"With the {len(heads)} heads scoring {INDUCTION_MIN:.2f} or more switched off ({named})" in said
    two = open_page(view="induction", top="2")  # fewer allowed than score: the top ones, said so
    top = induction_heads_by_loop(found.scores, 2)
    named = ", ".join(f"{layer + 1}.{head + 1}" for layer, head in top)
    assert (
        f"With the top 2 of the {len(heads)} heads scoring {INDUCTION_MIN:.2f} or more switched off ({named})"
        in everything_said(two)
    )
    assert text.IND_TOP_LABEL.format(minimum=INDUCTION_MIN) == at.slider(key="explore_ind_top").label


def test_the_train_page_and_explore_name_the_same_induction_heads(engine):
    """One measure, one rule: the heads the train page calls induction heads (their score on its
    probe) are the heads explore's induction view switches off on its default random letters, and
    each page says what it scored them on."""
    record = load_record(SHIPPED_DIR)
    trained = induction_heads_by_loop(record.induction[-1], record.induction.shape[2] * 2)
    found = induction(engine, LETTER_LENGTH, 0)
    assert trained == induction_heads_by_loop(found.scores, 5) == list(top_scoring(found.scores, 5))
    [line] = [s for s in statements(record) if "induction head" in s]
    assert heads_named(trained)[1:] in line and "on the probe (the start token" in line
    caption = " ".join(str(c.value) for c in open_page(view="induction").caption)
    assert f"The input is {LETTER_LENGTH} random tokens (seed 0)" in caption
    assert f"from {INDUCTION_MIN:.2f} on (the train page's rule too)" in caption


def test_induction_says_why_when_cutting_the_heads_does_not_raise_the_loss(engine):
    at = open_page(view="induction", length="20")
    found = induction(engine, 20, 0)
    heads = induction_heads_by_loop(found.scores, 5)
    cut = induction(engine, 20, 0, heads)
    rise = cut.loss_repeat - found.loss_repeat
    assert heads and rise < 0  # measured: at 20 random letters the heads cut do not carry the copying
    said = everything_said(at)
    repeats = 20 - len(set(found.token_ids[:20].tolist()))
    why = text.IND_WHY_REPEATS.format(repeats=repeats, length=20)
    assert text.IND_AGAINST.format(rise=rise, why=why) in said
    assert "takes back -" not in said
    assert text.IND_LETTERS_LONG.format(low=CYCLE[0], high=CYCLE[1], length=20) in said


def test_induction_switches_nothing_off_when_no_head_scores_enough(engine):
    at = open_page(view="induction", length="32")
    found = induction(engine, 32, 0)
    assert found.scores.max() < INDUCTION_MIN and top_scoring(found.scores, 5) == ()
    layer, head = np.unravel_index(np.argmax(found.scores), found.scores.shape)
    said = everything_said(at)
    assert (
        f"No head scores {INDUCTION_MIN:.2f} or more on these tokens (the highest: layer {layer + 1}, "
        f"head {head + 1}, {found.scores[layer, head]:.2f}), so none counts as an induction head"
    ) in said
    losses = [s for s in chart_specs(at) if s["layout"]["title"]["text"] == text.IND_LOSS_TITLE]
    assert len(plotly_array(losses[0]["data"][0]["y"])) == 2  # no third bar: nothing was switched off


@pytest.mark.parametrize("view", ["head", "model", "nextword"])
def test_no_word_pieces_cls_sep_or_space_marks_on_a_letter_model(view):
    at = open_page(view=view)
    said = everything_said(at)
    for foreign in ("word piece", "CLS", "SEP", "␣"):
        assert foreign not in said, (view, foreign)
    assert MERGE_LABEL not in [t.label for t in at.toggle]
    offered = at.get("button_group")[0].options
    assert offered == [e.title for e in EXAMPLES.values() if e.letters]
    assert at.session_state["explore_example"] == "letters-cycle"


def test_the_bundled_bert_keeps_its_word_pieces_and_special_tokens():
    at = open_page(model="bundled", view="head")
    labels = [t.label for t in at.toggle]
    assert MERGE_LABEL in labels and any("CLS" in label for label in labels)
    assert at.get("button_group")[0].options == [e.title for e in EXAMPLES.values() if not e.letters]


def test_english_typed_into_the_letter_model_gets_one_line(engine):
    sentence = "The trophy would not fit in the suitcase."
    at = open_page(view="head", text=sentence)
    letters = "".join(c for c in sentence.lower() if c.isalpha())
    line = LETTERS_BECAME.format(n=len(letters), shown=f"“{letters[:24]}…”")
    assert [i.value for i in at.info] == [line]
    at = open_page(view="head", text="qfwkqfwk")
    assert not at.info  # letters only: nothing to say


def test_the_logit_lens_says_what_its_grid_shows(engine):
    at = open_page(view="lens")
    result = engine.run(EXAMPLES["letters-cycle"].text)
    lens = logit_lens(engine, result.hidden_states)
    shown = lens.top_ids[:, -16:]  # the view's last 16 positions
    assert (settled_rows(shown) == len(shown) - 1).all()  # measured: the last layer decides each guess
    expected = lens_findings(shown, result.input_ids[-16:])
    assert expected.startswith(text.LENS_SETTLED_NONE.format(n=16))
    assert text.LENS_ECHO.format(own=16, n=16) in expected  # the bottom row echoes the letters
    said = everything_said(at)
    assert expected in said and "refine" not in said


def test_lens_findings_by_hand():
    top = np.array([[1, 2, 3], [7, 5, 3], [7, 6, 3], [7, 6, 4]])  # rows: embeddings, layers 1-3
    line = lens_findings(top, np.array([1, 2, 9]))
    assert line.startswith(
        text.LENS_SETTLED.format(early=2, n=3, median="layer 1", late=1)
    )  # settled at rows 1 and 2: median 1.5 → layer 1
    assert line.endswith(text.LENS_ECHO.format(own=2, n=3))


def test_compare_says_what_an_english_pair_became_in_the_letter_model():
    at = AppTest.from_string(page_script("compare"), default_timeout=APPTEST_DEADLINE)
    english = PRESETS["trophy"]  # an English pair typed into the letter model (it opens on its own pair)
    at.query_params.update({"model": SHIPPED_KEY, "text": english.text, "text2": english.text2})
    at.run()
    assert_no_crash(at)
    first = at.session_state["compare_text"]
    letters = "".join(c for c in first.lower() if c.isalpha())
    assert LETTERS_BECAME.format(n=len(letters), shown=f"“{letters[:24]}…”") in [i.value for i in at.info]
