"""Every view on every kind of model (issue 48): each opens without an exception, speaks only its
model's words, and draws no verdict from a position a causal model cannot see.

The table below is the contract. Each kind of model the product shows has a stand-in that loads
offline in seconds (the bundled BERT, the letter GPT-2, a tiny Llama built here, which reads text as
SmolLM2 and GPT-2 do, and the translator); every view of the explore page is placed under the kinds
that offer it. A new view, or a model of a kind not in the table, fails `test_the_table_covers...`
until it is placed, and is then opened by the tests below.
"""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from core.models.registry import BUNDLED_KEY, CURATED_HUB_MODELS
from core.models.shipped import SHIPPED_KEY
from core.models.smollm2 import SMOLLM2_KEY
from core.translate.engine import TRANSLATOR_KEY
from dashboard.content import compare as compare_text
from dashboard.content import translator as translator_text
from dashboard.content.compare import PRESETS
from dashboard.content.explore import EXAMPLES, VIEWS
from dashboard.engines import offline_models
from dashboard.views.explore.decoder import views_for
from tests.dashboard.harness import assert_no_crash, messages, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

pytestmark = pytest.mark.usefixtures("fast_apptest")

# stand-in -> (kind of attention, how its tokenizer reads text)
STAND_INS = {
    "bert": ("encoder", "word pieces"),
    "letters": ("decoder", "letters"),
    "llama": ("decoder", "byte pieces"),
    "gpt2": ("decoder", "byte pieces"),
    "translator": ("cross", "translator"),
}
# every model the pickers list -> the stand-in that is tested for it
MODELS = {
    BUNDLED_KEY: "bert",
    SHIPPED_KEY: "letters",
    SMOLLM2_KEY: "llama",
    TRANSLATOR_KEY: "translator",
    **{key: "gpt2" if "gpt2" in key.casefold() else "bert" for key in CURATED_HUB_MODELS},
}
ALL_SELF = ("bert", "letters", "llama", "gpt2")  # the stand-ins with self-attention only
# every explore view -> the stand-ins that offer it
EXPLORE_VIEWS = {
    **{view: ALL_SELF for view in ("head", "lines", "model", "focus", "rollout")},
    **{view: ALL_SELF for view in ("similarity", "ablation", "attribution")},
    "qk": ("bert",),
    **{view: ("letters", "llama", "gpt2") for view in ("nextword", "generate", "lens", "sinks", "induction")},
}
TRANSLATOR_VIEWS = tuple(translator_text.VIEWS)

# Words that belong to one way of reading text: a page about another model must not use them.
BERT_WORDS = re.compile(r"\[CLS\]|\[SEP\]|word piece|##\w")
# What a verdict read at the focus word looks like: the pronoun test's ("by this test") and the trophy
# panel's (its title, "heads switch from “trophy”"); the continuation's verdicts read the last token.
VERDICTS = re.compile(r"by this test|does attention follow the meaning|switch(es)? from “trophy”")
BLIND = "No evidence either way here"


WIDGETS = ("text_input", "text_area", "selectbox", "toggle", "radio", "slider", "button", "expander")


def page_text(at: AppTest) -> str:
    """Everything the page says: its text elements, its widgets' labels and help, and its charts'
    titles, axes and hover text."""
    parts = [
        str(m.value)
        for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error")
        for m in at.get(kind)
    ]
    for kind in WIDGETS:
        for widget in at.get(kind):
            parts += [str(getattr(widget.proto, name, "")) for name in ("label", "help")]
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        layout = json.dumps(spec.get("layout", {}))
        hover = json.dumps([trace.get("hovertemplate", "") for trace in spec.get("data", [])])
        parts += [layout, hover]
    return "\n".join(parts).replace("\\", "")


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> str:
    return str(make_tiny_llama(tmp_path_factory.mktemp("claims_llama"), heads=4, kv_heads=2, positions=128))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> str:
    return str(make_tiny_gpt2(tmp_path_factory.mktemp("claims_gpt2")))


@pytest.fixture
def key_of(llama, gpt2):
    """A stand-in's model key (the tiny models are folders built for this module)."""
    keys = {
        "bert": BUNDLED_KEY,
        "letters": SHIPPED_KEY,
        "llama": llama,
        "gpt2": gpt2,
        "translator": TRANSLATOR_KEY,
    }
    return keys.__getitem__


def test_the_table_covers_every_model_and_view():
    """A view or a model nobody placed here fails: place it in the table, then it is tested."""
    assert set(EXPLORE_VIEWS) == set(VIEWS), set(VIEWS) ^ set(EXPLORE_VIEWS)
    for stand_in, (kind, _) in STAND_INS.items():
        if kind == "cross":
            continue
        offered = {view for view, where in EXPLORE_VIEWS.items() if stand_in in where}
        assert offered == set(views_for(kind == "decoder")), (stand_in, offered)
    listed = set(offline_models()) | set(CURATED_HUB_MODELS) | {TRANSLATOR_KEY}
    assert listed <= set(MODELS), listed - set(MODELS)


def open_explore(key: str, text: str, view: str = "head") -> AppTest:
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": key, "text": text, "view": view})
    at.run()
    assert_no_crash(at, (key, view))
    return at


def check_words(at: AppTest, stand_in: str, context: object) -> None:
    said = page_text(at)
    if STAND_INS[stand_in][1] != "word pieces":
        assert not BERT_WORDS.search(said), (context, BERT_WORDS.search(said).group(0))
    if STAND_INS[stand_in][0] != "decoder":
        assert BLIND not in said, context


@pytest.mark.parametrize("stand_in", ALL_SELF)
def test_every_explore_view_opens_in_its_models_words(stand_in, key_of):
    """One session per model switches through every view it offers, as a reader does."""
    key = key_of(stand_in)
    text = EXAMPLES["trophy-large"].text
    if stand_in == "letters":  # a model that reads letters: one of its own examples
        text = next(e.text for e in EXAMPLES.values() if e.letters)
    at = open_explore(key, text)
    for view in [v for v, where in EXPLORE_VIEWS.items() if stand_in in where]:
        at.query_params.clear()
        at.segmented_control(key="explore_view").set_value(view).run()
        assert_no_crash(at, (stand_in, view))
        assert at.session_state["explore_view"] == view, (stand_in, view)
        assert not at.error, (stand_in, view, messages(at))
        check_words(at, stand_in, (stand_in, view))


def test_every_translator_view_opens():
    at = open_explore(TRANSLATOR_KEY, "the cat sees the dog")
    for view in TRANSLATOR_VIEWS:
        at.segmented_control(key="explore_view").set_value(view).run()
        assert_no_crash(at, ("translator", view))
        assert not at.error, (view, messages(at))
        check_words(at, "translator", view)


# every page but explore -> the link that opens it on each stand-in ("{model}": the stand-in's key)
PAGES = {
    ("learn", "bert"): {"example": "bert"},
    ("learn", "letters"): {"example": "decoder", "model": "{model}"},
    ("learn", "llama"): {"example": "decoder", "model": "{model}"},
    ("learn", "translator"): {"model": "translator"},
    **{("compare", s): {"model": "{model}"} for s in ALL_SELF},
    **{("atlas", s): {"model": "{model}"} for s in ("bert", "letters", "llama", "translator")},
    **{("cost", s): {"model": "{model}"} for s in ("bert", "letters", "llama")},
}


@pytest.mark.parametrize(("page", "stand_in"), list(PAGES))
def test_every_page_opens_in_its_models_words(page, stand_in, key_of):
    params = {name: value.format(model=key_of(stand_in)) for name, value in PAGES[page, stand_in].items()}
    at = AppTest.from_string(page_script(page), default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at, (page, stand_in))
    assert not at.error, (page, stand_in, messages(at))
    check_words(at, stand_in, (page, stand_in))


# ---- the causal blind spot -------------------------------------------------------------------------


def test_a_decoder_draws_no_verdict_at_it_on_the_trophy_pair(llama):
    """Explore's focus view on a causal model: "it" comes before "large"/"small", so the trophy
    panel and the pronoun test give one line naming both positions instead of a verdict, and point to
    the continuation (drawn below) and to compare's patching."""
    at = open_explore(llama, EXAMPLES["trophy-large"].text, "focus")
    said = page_text(at)
    assert not VERDICTS.search(said), VERDICTS.search(said).group(0)
    (line,) = [m for m in messages(at) if BLIND in m]
    assert "compare?preset=trophy" in line and "continuation" in line
    assert at.text_input(key="explore_choice_a").value  # the continuation panel is there to answer


def test_an_encoder_still_gives_its_verdicts_on_the_trophy_pair():
    at = open_explore(BUNDLED_KEY, EXAMPLES["trophy-large"].text, "focus")
    said = page_text(at)
    assert VERDICTS.search(said) and BLIND not in said


def test_compare_on_a_decoder_reads_no_verdict_before_the_change(llama):
    at = AppTest.from_string(page_script("compare"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": llama, "preset": "trophy"})
    at.run()
    assert_no_crash(at)
    said = page_text(at)
    assert not VERDICTS.search(said), VERDICTS.search(said).group(0)
    assert sum(BLIND in m for m in messages(at)) == 1
    assert not {h.value for h in at.subheader} & READ_AT_FOCUS  # no ranking, pronoun test or distance
    check_words(at, "llama", "compare")


READ_AT_FOCUS = {compare_text.RANK_TITLE, compare_text.PRONOUN_TITLE.format(word="it")} | {
    compare_text.MOVES_TITLE.format(word="it")
}


def test_compare_on_a_decoder_reads_a_typed_pair_where_it_sees_the_change():
    """A pair typed into a decoder: the default focus is the first shared word at or after the change
    (not the word before it, which cannot see it), so the ranking is drawn and no blind line."""
    at = open_compare(model=SHIPPED_KEY, text="abcdefg", text2="abcxefg")
    assert not any(BLIND in m for m in messages(at)), messages(at)
    assert compare_text.RANK_TITLE in [h.value for h in at.subheader]
    assert compare_text.FOCUS_RULE_DEFAULT_DECODER in [c.value for c in at.caption]
    # the word before the change, chosen by hand, is blind: the line names both positions from 1
    focus_key = next(k for k in at.session_state if str(k).startswith("compare_w_focus"))
    at.selectbox(key=focus_key).set_value("c").run()
    (line,) = [m for m in messages(at) if BLIND in m]
    assert "(token 4)" in line and "at token 5 (“d” → “x”)" in line  # <s> a b c d, counted from 1
    assert compare_text.RANK_TITLE not in [h.value for h in at.subheader]


def test_identical_sentences_are_not_called_blind():
    at = open_compare(model=SHIPPED_KEY, text="abcdefg", text2="abcdefg")
    assert not any(BLIND in m for m in messages(at)), messages(at)


# ---- a preset that needs a model, a model that needs a preset ------------------------------------------


def open_compare(**params: str) -> AppTest:
    at = AppTest.from_string(page_script("compare"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at, params)
    return at


def test_compare_opened_on_the_letter_model_opens_on_a_pair_it_reads():
    at = open_compare(model=SHIPPED_KEY)
    assert at.session_state["compare_preset"] == "repeat"
    assert at.text_area(key="compare_text").value == PRESETS["repeat"].text
    assert not any("letters" in m and "read" in m for m in messages(at))  # nothing was turned into letters


def test_the_letter_preset_moves_the_model_to_the_letter_gpt2():
    at = open_compare()  # the bundled BERT, the trophy pair
    assert at.session_state["compare_model"] == BUNDLED_KEY
    at.segmented_control(key="compare_preset").set_value("repeat").run()
    assert_no_crash(at)
    assert at.session_state["compare_model"] == SHIPPED_KEY
    assert any("letter" in m and "model is now" in m for m in messages(at)), messages(at)
    assert not at.error, messages(at)
    at.segmented_control(key="compare_preset").set_value("trophy").run()  # and back to English
    assert at.session_state["compare_model"] == BUNDLED_KEY and not at.error


def test_a_link_to_the_letter_preset_opens_on_the_letter_model():
    at = open_compare(preset="repeat")
    assert at.session_state["compare_model"] == SHIPPED_KEY and not at.error, messages(at)


def test_the_blind_line_numbers_words_as_the_pickers_do(llama):
    """With pieces merged into words, the line counts shown words, as the focus picker does."""
    from core.measures.analysis import token_view
    from dashboard.engines import compute_attention

    at = open_explore(llama, EXAMPLES["trophy-large"].text, "focus")
    at.toggle(key="explore_merge").set_value(True).run()
    result = compute_attention(*at.session_state["explore_result_key"])
    view = token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True)
    it = view.labels.index("it")
    (line,) = [m for m in messages(at) if BLIND in m]
    assert f"(token {it + 1})" in line and "(“large” → “small”)" in line, line


def test_a_target_after_the_focus_gets_no_ranking_in_a_decoder(llama):
    """The mask gives every weight from "The" to "trophy" 0: the page says so and ranks nothing."""
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    params = {
        "model": llama,
        "text": EXAMPLES["trophy-large"].text,
        "view": "focus",
        "focus": "the",
        "target": "trophy",
    }
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    assert any("by the mask, not by choice" in m.value for m in at.markdown)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert not any("explore_focus_grid" in c for c in charts)
    assert not any(m.value.startswith("| # | head") for m in at.markdown)  # the ranking table
    assert not [b for b in at.button if str(b.key).startswith("explore_top_")]


def test_patching_counts_the_differing_token_from_1_like_the_blind_line():
    at = open_compare(model=SHIPPED_KEY, preset="repeat")
    said = " ".join(c.value for c in at.caption)
    tokens = [at.session_state["compare_text"], at.session_state["compare_text2"]]
    letter = next(i for i, (a, b) in enumerate(zip(*tokens, strict=False)) if a != b)
    assert f"differ at token {letter + 2} " in said, said  # <s>, then one token a letter, from 1


# ---- the focus view on a projector: one part at a time, named by the link --------------------------

PRESENTING = page_script(
    "explore", prelude="from dashboard import presenter\npresenter.presenter_toggle_ui()"
)


@pytest.mark.parametrize(
    ("part", "shown", "hidden"),
    [
        ("heads", "explore_focus_grid", "explore_pronoun"),
        ("reading", "explore_pronoun", "explore_focus_grid"),
        ("rows", "explore_focus_chart", "explore_pronoun"),
    ],
)
def test_the_focus_view_on_a_projector_shows_the_part_the_link_names(part, shown, hidden):
    at = AppTest.from_string(PRESENTING, default_timeout=APPTEST_DEADLINE)
    text = EXAMPLES["trophy-large"].text
    at.query_params.update({"text": text, "view": "focus", "present": "1", "part": part})
    at.run()
    assert_no_crash(at)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert any(shown in c for c in charts) and not any(hidden in c for c in charts), (part, charts)
    assert at.session_state["explore_focus_part"] == part


def test_the_pair_part_gives_the_trophy_table_on_an_encoder_and_the_blind_line_on_a_decoder(llama):
    text = EXAMPLES["trophy-large"].text
    for model, expect_blind in ((BUNDLED_KEY, False), (llama, True)):
        at = AppTest.from_string(PRESENTING, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(
            {"model": model, "text": text, "view": "focus", "present": "1", "part": "pair"}
        )
        at.run()
        assert_no_crash(at)
        said = page_text(at)
        assert (BLIND in said) == expect_blind and bool(VERDICTS.search(said)) != expect_blind, model
        assert not at.get("plotly_chart")  # the pair's part is its table or its line, nothing below
