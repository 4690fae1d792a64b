"""URL query parameters are input too (issue 5, section 1): a link with unknown pages, layers and
heads out of range, negative or non-numeric values, an unknown example, a model id with path
traversal or a URL must open a sane default view with a clear message, never an exception.

A link is read once, on a session's first run, so each case opens a fresh session (AppTest). URL
values cannot carry lone surrogates (the browser percent-encodes UTF-8, and Streamlit decodes with
errors="replace"), so the generated text has them replaced by U+FFFD, as the server would.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlencode

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.runtime.state.query_params import sanitize_query_string
from streamlit.testing.v1 import AppTest

from core.lesson.attention import MASK_KINDS
from core.lesson.worked_examples import EXAMPLES as LEARN_EXAMPLES
from dashboard.content.explore import EXAMPLES as EXPLORE_EXAMPLES
from dashboard.content.explore import VIEWS
from dashboard.content.learn import D_K_CHOICES, STEP_VIEWS
from dashboard.state import clean_input
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    ROOT,
    Long,
    assert_answered,
    bad_texts,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_links,
    open_path,
    page_script,
)
from tests.deadline import APPTEST_DEADLINE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

TRAVERSALS = [
    "../../etc",
    "../../../../../../etc/passwd",
    "..",
    "/etc/../etc",
    "./../x",
    "..\\..\\windows",
    "%2e%2e%2f%2e%2e%2fetc",
    "https://huggingface.co/bert-base-uncased",
    "http://169.254.169.254/latest/meta-data/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "//evil.example/x",
    "/",
    "~",
    "bert-base-uncased/../../x",
    "~nosuchuser/model",
    "/" + "a" * 299,
]
NUMBERS = [
    "-1", "-0", "0", "1", "2", "5", "6", "7", "8", "9", "12", "16", "17", "63", "64", "65", "511", "512",
    "999", "1000", "99999", "100000", "2147483647", "2147483648", "-2147483649", "9" * 30, "9" * 5000,
    "1.5", "1e3", "0x10", "+3", " 3 ", "3_0", "٣", "NaN", "inf", "", " ", "abc", "1;DROP TABLE", "[1]",
]  # fmt: skip


def shown_result(at):
    """The result the explore page is showing (the shared cache holds it; the session, its key)."""
    from dashboard.engines import compute_attention

    return compute_attention(*at.session_state["explore_result_key"])


def as_decoded(text: str) -> str:
    """The text as Streamlit reads it from a URL: lone surrogates arrive as U+FFFD."""
    if isinstance(text, Long):
        return Long(clean_input(text.piece, 10**7)[0], len(text))
    return clean_input(text, 10**7)[0]


def url_text() -> st.SearchStrategy[str]:
    # Up to 10,001 characters: a longer query string makes Streamlit ignore the whole link (see
    # as_read); the explicit examples cover 1 MB once per page instead of in many cases.
    return bad_texts(longest=10_001).map(as_decoded)


def url_value(*choices: str) -> st.SearchStrategy[str | list[str]]:
    single = st.one_of(st.sampled_from([*choices, *NUMBERS, *TRAVERSALS]), url_text())
    return st.one_of(single, single, st.lists(single, min_size=2, max_size=3))  # ?a=1&a=2 too


def as_read(params: dict) -> dict[str, str]:
    """The values the page reads: the last of a repeated parameter, and nothing at all when the
    query string is longer than Streamlit accepts (512 Ki characters: it is ignored, and logged)."""
    if not sanitize_query_string(urlencode(params, doseq=True)):
        return {}
    return {name: last(value) for name, value in params.items()}


def last(value: str | list[str]) -> str:
    """What st.query_params.get returns for a repeated parameter: the last value."""
    return value[-1] if isinstance(value, list) else value


def int_ok(value: str, lo: int, hi: int) -> bool:
    try:
        return lo <= int(value) <= hi
    except ValueError:
        return False


def open_page(script: str, params: dict) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    return at.run()


def assert_named(at: AppTest, name: str, says: str | None = None) -> None:
    shown = " ".join(messages(at))
    assert (says or f"`{name}`") in shown, (name, shown)


# ================================================================================================
# learn
# ================================================================================================

LEARN_SCRIPT = page_script("learn")
LEARN_INTS = {
    "d_model": (1, 64),
    "heads": (1, 8),
    "d_k": (0, 64),
    "seed": (0, 2**31 - 1),
    "window": (0, 16),
    "head": (0, 7),
}
LEARN_CHOICES = {"scale": ("0", "1"), "pe": ("0", "1"), "mask": MASK_KINDS, "step": STEP_VIEWS}

learn_links = st.fixed_dictionaries(
    {},
    optional={
        "example": url_value(*LEARN_EXAMPLES),
        "text": url_value(),
        **{name: url_value() for name in LEARN_INTS},
        **{name: url_value(*choices) for name, choices in LEARN_CHOICES.items()},
        "page": url_value("explore", "learn"),  # not a parameter of this page: ignored
    },
)


def check_learn_link(at: AppTest, params: dict) -> None:
    assert_answered(at, params)
    assert at.title[0].value == "Learn: attention from scratch"
    values = as_read(params)
    if (raw := values.get("example")) and raw not in LEARN_EXAMPLES:
        assert_named(at, "example", "worked example this page does not have")
    for name, (lo, hi) in LEARN_INTS.items():
        raw = values.get(name, "")
        if raw != "" and not int_ok(raw, lo, hi):
            assert_named(at, name)
    if (raw := values.get("d_k", "")) != "" and int_ok(raw, 0, 64) and int(raw) not in D_K_CHOICES:
        assert_named(at, "d_k")
    for name, choices in LEARN_CHOICES.items():
        raw = values.get(name, "")
        if raw != "" and raw not in choices:
            assert_named(at, name)
    heads = int(values["heads"]) if int_ok(values.get("heads", ""), 1, 8) else 2
    if int_ok(values.get("head", ""), 0, 7) and int(values["head"]) >= heads:
        assert_named(at, "head")
        assert at.session_state["learn_head"] == 0


def test_learn_links():
    tried = []

    @FUZZ
    @named_links([*LEARN_INTS, *LEARN_CHOICES, "example", "text"])
    @example({"example": "nope"})
    @example({"d_model": "-3", "heads": "abc", "seed": "9" * 5000, "window": "17"})
    @example({"heads": "2", "head": "7"})
    @example({"d_k": "5", "mask": "<script>", "scale": "2", "pe": "yes"})
    @example({"text": "\ufffd" * 3, "example": "../../etc"})
    @example({"text": Long("x", 1_000_000)})
    @example({"head": ["1", "9"], "heads": ["8", "0"]})
    @given(params=learn_links)
    def case(params):
        tried.append(len(params))
        check_learn_link(open_page(LEARN_SCRIPT, params), params)

    case()
    print(f"{len(tried)} links, parameters per link:", dict(Counter(tried)))
    assert len(tried) >= CASES


# ================================================================================================
# explore
# ================================================================================================

EXPLORE_SCRIPT = page_script("explore")
EXPLORE_INTS = {"layer": (0, 999), "head": (0, 999)}
EXPLORE_WORDS = ("focus", "target")  # word references: "it", "the#2"; an old link's number is a position
TINY = {"layers": 2, "heads": 2}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("url_model")))


def explore_links(tiny_model: str) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        # three links in four use the tiny model (fast), the rest a fuzzed model (which falls back
        # to the bundled one)
        {"model": st.integers(0, 3).flatmap(lambda i: st.just(tiny_model) if i else url_value("bundled"))},
        optional={
            "example": url_value(*EXPLORE_EXAMPLES),
            "text": url_value(),
            "view": url_value(*VIEWS),
            "engine": url_value("torch", "numpy"),
            **{name: url_value() for name in (*EXPLORE_INTS, *EXPLORE_WORDS)},
            "merge": url_value("1", "0"),
            "hide": url_value("1", "0"),
        },
    )


def check_explore_link(at: AppTest, params: dict, tiny_model: str) -> None:
    from dashboard.engines import ENGINES

    assert_answered(at, params)
    assert at.title[0].value == "Explore: a pretrained model's attention"
    values = as_read(params)
    model = values.get("model", "bundled").strip()
    if model not in ("", "bundled", tiny_model):
        assert at.error, ("a model the page cannot use is reported", model)
    elif not at.error:
        assert n_charts(at) or "Type a sentence" in " ".join(messages(at))
    if (raw := values.get("example")) and raw not in EXPLORE_EXAMPLES:
        assert_named(at, "example", "unknown example")
    for name, choices in (("view", VIEWS), ("engine", ENGINES)):
        raw = values.get(name, "")
        if raw != "" and raw not in choices:
            assert_named(at, name)
    result = shown_result(at) if "explore_result_key" in at.session_state else None
    for name in EXPLORE_INTS:  # any whole number is read; the model's range is checked once it has run
        raw = values.get(name, "")
        if raw == "":
            continue
        if not int_ok(raw, -(10**5000), 10**5000):
            assert_named(at, name)
        elif result is not None and model == tiny_model:
            size = {"layer": result.n_layers, "head": result.n_heads}[name]
            if not 0 <= int(raw) < size:
                assert_named(at, name)
    # an example picks its own words (unless the link names both), and a text without words shows none
    refs = [clean_input(values.get(name, ""), 100)[0].strip() for name in EXPLORE_WORDS]
    example_picks = at.session_state["explore_example"] is not None and not all(refs)
    if result is not None and not example_picks and not result.special_mask.all():
        from dashboard.views.explore.links import MAX_REF_CHARS, token_of

        for name in EXPLORE_WORDS:
            ref = clean_input(values.get(name, ""), MAX_REF_CHARS)[0].strip()
            if ref and token_of(result, ref) is None:
                assert_named(at, name)


def test_explore_links(tiny_model):
    tried = []

    @FUZZ
    @named_links(
        [*EXPLORE_INTS, *EXPLORE_WORDS, "example", "text", "engine", "merge", "hide"],
        {"model": tiny_model},
        view=VIEWS,
    )
    @example({"model": "../../etc"})
    @example({"model": "https://evil.example/model"})
    @example({"model": tiny_model, "layer": "5", "head": "-1", "focus": "99999", "target": "abc"})
    @example({"model": tiny_model, "view": "../../etc", "engine": "rm -rf", "example": "nope"})
    @example({"model": tiny_model, "layer": "1", "head": "1", "view": "model", "text": Long("x", 1_000_000)})
    @example({"model": tiny_model, "text": "\x00", "view": "focus", "hide": "1"})
    @given(params=explore_links(tiny_model))
    def case(params):
        tried.append(last(params["model"]) == tiny_model)
        check_explore_link(open_page(EXPLORE_SCRIPT, params), params, tiny_model)

    case()
    print(f"{len(tried)} links, on the tiny model:", dict(Counter(tried)))
    assert len(tried) >= CASES


# ================================================================================================
# unknown pages
# ================================================================================================


@pytest.mark.parametrize("page", ["nonexistent", "../../etc/passwd", "learn/../explore", "%00", "explore/x"])
def test_an_unknown_page_opens_the_learn_page_and_says_so(monkeypatch, page):
    """Streamlit answers a path no page has with its "Page not found" notice (a page_not_found
    message, shown as a dialog) and runs the default page: the learn page, complete."""
    from streamlit.commands import navigation

    sent = []
    original_notice = navigation.send_page_not_found
    monkeypatch.setattr(navigation, "send_page_not_found", lambda ctx: (sent.append(1), original_notice(ctx)))
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=APPTEST_DEADLINE).run()
    open_path(monkeypatch, page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert sent, "Streamlit's page-not-found notice was sent"
    assert at.title[0].value == "Learn: attention from scratch"
    assert at.subheader[0].value.startswith("Step 1")  # the default view: step 1
    assert n_charts(at) >= 1


@pytest.mark.parametrize(
    ("path", "title"), [("learn", "Learn"), ("home", "Learn"), ("explore", "Explore"), ("", "Learn")]
)
def test_the_pages_open_by_their_paths(monkeypatch, path, title):
    open_path(monkeypatch, path)
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=APPTEST_DEADLINE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.startswith(title)


def test_the_sidebar_shows_the_link_to_the_view_on_screen(monkeypatch):
    """The sidebar's link is the page's own query (what the address bar holds), in a plain text
    element (never read as markdown), the sentence percent-encoded."""
    open_path(monkeypatch, "explore")
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=APPTEST_DEADLINE)
    sentence = "The `trophy` fit [here](javascript:x) <b>too</b>."
    at.query_params["text"] = sentence
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    links = [t.value for t in at.sidebar.text if "text=" in t.value]
    assert len(links) == 1, [t.value for t in at.sidebar.text]
    query = links[0].split("?", 1)[1]
    assert query == urlencode({"text": sentence, "view": "head", "layer": 0, "head": 0})
