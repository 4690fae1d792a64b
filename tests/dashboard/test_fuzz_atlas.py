"""Bad input on the atlas page, fuzzed with the shared harness (tests/dashboard/harness.py), as
tests/dashboard/test_fuzz.py does for learn and explore.

- The sentence box: one AppTest session, case after case (every named text first, then the
  generated ones); each bad case must answer (a chart or a message, never the last-resort handler),
  then a good sentence must draw the grid again with no error.
- The link: each case is a new session (a link is read once per session) opened with generated
  values of every parameter the page reads (model, engine, text, on, stat, roles, present).

The page runs a 2-layer random BERT with the bundled model's tokenizer on the corpus's first four
sentences, with a cache folder of its own.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.measures.atlas import ALL_STATS
from dashboard.state import clean_input
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    NAMED_TEXTS,
    assert_answered,
    assert_no_crash,
    bad_texts,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_examples,
    named_links,
    page_script,
    set_text,
    utf8_safe,
)
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.slow

PRELUDE = """
import dashboard.content.atlas as _content
_full_corpus = _content.corpus
_content.corpus = lambda: _full_corpus()[:4]
"""
SCRIPT = page_script("atlas", PRELUDE, "_content.corpus = _full_corpus")
GOOD_TEXT = "The keys to the cabinet are on the table."
MAX_CHARS = 20_000  # the local limits' max_text_chars


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("fuzz_atlas_model")))


@pytest.fixture(scope="module", autouse=True)
def own_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("fuzz_atlas_cache")))
        yield


# ---- the sentence box ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sentence_app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": tiny_model, "on": "sentence", "text": GOOD_TEXT})
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == 1 and not at.error, messages(at)
    return at


def test_sentence_box_survives_every_input(sentence_app):
    at = sentence_app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"value": text})
    @given(value=bad_texts())
    def case(value):
        tried.append(value)
        set_text(at, "text_area", "atlas_text", value)
        at.run()
        assert_answered(at, repr(value)[:80])
        kept = clean_input(value, MAX_CHARS)[0]
        assert at.session_state["atlas_text"] == kept
        if not kept.strip():
            assert "Type a sentence" in " ".join(messages(at))
        at.text_area(key="atlas_text").set_value(GOOD_TEXT).run()
        assert_no_crash(at, "good sentence after a bad one")
        assert n_charts(at) == 1 and not at.error, messages(at)

    case()
    assert len(tried) >= CASES, len(tried)


# ---- the link --------------------------------------------------------------------------------------

ROLE_SLUGS = ["cls", "sep", "punct", "self", "prev", "next", "broad", "mixed", "first", "induction"]


def _or_bad(*values: str, size: int = 20):
    """One of `values`, or bad text (at most 10,001 characters: a link is read in full)."""
    return st.one_of(st.sampled_from(list(values)), bad_texts(max_size=size, longest=10_001))


LINK_VALUES = {
    "model": _or_bad(
        "", "bundled", "translator", "/no/such/folder", "../../etc", "javascript:alert(1)", "a" * 400
    ),
    "engine": _or_bad("numpy", "torch", "", "NUMPY"),
    "text": bad_texts(max_size=60, longest=10_001),
    "on": _or_bad("corpus", "sentence", "", "Sentence"),
    "stat": _or_bad("role", *ALL_STATS, "", "to_cls;"),
    "roles": st.one_of(
        st.lists(st.sampled_from([*ROLE_SLUGS, "bogus", "", " prev "]), max_size=12).map(",".join),
        bad_texts(max_size=30, longest=10_001),
    ),
    "present": st.sampled_from(["1", "0", "yes", ""]),
}
links = st.fixed_dictionaries({}, optional=LINK_VALUES).filter(
    lambda d: all(utf8_safe(v) for v in d.values())  # a URL carries UTF-8 only
)


@pytest.mark.parametrize(
    "params",
    [
        {"stat": "\x00", "roles": ",,,", "on": "sentence", "text": ""},
        {"roles": "cls," * 3000, "stat": "<script>"},
        {"model": "/no/such/folder", "on": "sentence", "text": "[CLS] [SEP]"},
        {"on": "sentence", "text": NAMED_TEXTS["one_word_10k"]},
    ],
)
def test_named_links(tiny_model, params):
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": tiny_model, **params})
    at.run()
    assert_answered(at, params)


def test_links_survive_any_values(tiny_model):
    tried: list[str] = []

    @FUZZ
    @named_links([name for name in LINK_VALUES if name != "model"], {"model": tiny_model})
    @given(params=links)
    def case(params):
        params = {"model": tiny_model, **params} if "model" not in params else params
        tried.extend(params)
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, {k: v[:60] for k, v in params.items()})

    case()
    print("parameters tried:", dict(Counter(tried)))  # shown with pytest -s
    assert len(set(tried)) == len(LINK_VALUES), Counter(tried)
