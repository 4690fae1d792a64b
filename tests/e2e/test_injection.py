"""Injection, in a real browser (issue 5 §2): text a user types, or a link carries, is shown as text and
never runs as HTML or script.

Every payload tries to set its own flag (window.__xss_N = 1) if it runs. Each is typed as the sentence
on every page (learn, explore) and sent in the URL's `text` parameter (explore: on each view in turn).
After the page has answered, the tests assert:
- no flag is set, in the page or in any frame, and no JavaScript error was thrown;
- no markup came from the payload: no event-handler attribute or script holding the payload, no link
  or source with a javascript:, vbscript: or data:text/html address;
- the payload's text is there literally: in the text box, in the URL, and as the page's tokens
  (explore: the bundled model's WordPiece tokens as chart labels; learn: the toy tokens).
A last test reads the code base for HTML sinks (unsafe_allow_html, st.html, components.html...) and
requires each to be listed with a proof that its input is escaped (there are none today).
"""

from __future__ import annotations

import re
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT, images_settled, send_text, wait_charts, wait_settled

PAYLOADS = {
    "script": "<script>window.__xss_1=1</script> script tag",
    "img-onerror": '<img src=x onerror="window.__xss_2=1"> image onerror',
    "js-link": '<a href="javascript:window.__xss_3=1">javascript link</a>',
    "svg-onload": '<svg onload="window.__xss_4=1"><circle r="9"></circle></svg> svg onload',
    "md-link": "[markdown link](javascript:window.__xss_5=1) and <javascript:window.__xss_5=1>",
    "md-image": '![markdown image](x.png" onerror="window.__xss_6=1) ![x](javascript:window.__xss_6=1)',
    "latex-href": r"$\href{javascript:window.__xss_7=1}{latex href}$ and "
    r"$$\href{javascript:window.__xss_7=1}{x}$$",
    "iframe": '<iframe srcdoc="<script>parent.__xss_8=1</script>"></iframe> iframe',
    "entities": '<details open ontoggle="window.__xss_9=1">details</details> &lt;b&gt;entity&lt;/b&gt; '
    "%{x} <b>bold</b>",
}
# Payloads travel in groups, one sentence each (each within the learn page's 64 toy tokens), so every
# payload is tried everywhere with few page loads.
GROUPS = {
    "script+img+js-link": ("script", "img-onerror", "js-link"),
    "svg+md-link": ("svg-onload", "md-link"),
    "md-image+iframe": ("md-image", "iframe"),
    "latex": ("latex-href",),
    "entities+details": ("entities",),
}
SENTENCES = {name: " ".join(PAYLOADS[k] for k in keys) for name, keys in GROUPS.items()}
EXPLORE_VIEWS = ("head", "lines", "model", "focus")
CHARTS = {"head": 1, "lines": 1, "model": 1, "focus": 2}

# Any trace of a payload that became markup, in one frame.
HAZARDS_JS = r"""() => {
  const found = [];
  const url = /^(javascript|vbscript|data:text\/html)/i;
  // a link to one of the app's own pages carrying the text URL-encoded (no ":", so no scheme): inert
  const ownPage = /^(learn|explore)\?[^:<>"'\s]*$/;
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      const bare = a.value.replace(/[\s\u0000-\u001f]/g, "");
      if (name.startsWith("on") && a.value.includes("__xss"))
        found.push(`${el.tagName} ${name}="${a.value}"`);
      if (["href", "xlink:href", "src", "action", "formaction", "data", "srcdoc"].includes(name)
          && (url.test(bare) || (a.value.includes("__xss") && !ownPage.test(a.value))))
        found.push(`${el.tagName} ${name}="${a.value.slice(0, 80)}"`);
    }
    if (el.tagName === "SCRIPT" && el.textContent.includes("__xss")) found.push("SCRIPT with the payload");
    if (["IFRAME", "OBJECT", "EMBED"].includes(el.tagName)) found.push(`${el.tagName} element`);
  }
  const flags = Object.keys(window).filter((k) => k.startsWith("__xss"));
  return {found, flags};
}"""
# Plotly's drawn label texts of the first chart (tick labels and text points), as shown.
LABELS_JS = """() => {
  const plot = document.querySelector(".js-plotly-plot");
  if (!plot) return [];
  return [...plot.querySelectorAll(".ytick text, .textpoint text")].map((t) => t.textContent);
}"""
# The token tick labels of the last chart (head view: its only one; focus view: the columns).
TICKS_JS = """(axis) => {
  const plot = [...document.querySelectorAll(".js-plotly-plot")].at(-1);
  return plot ? [...plot.querySelectorAll(axis)].map((t) => t.textContent) : [];
}"""


def text_param(page) -> str | None:
    query = urllib.parse.urlparse(page.url).query
    return urllib.parse.parse_qs(query).get("text", [None])[0]


def assert_nothing_ran(page) -> None:
    for frame in page.frames:
        images_settled(frame)  # an <img onerror> fires once its (failing) load has been tried
        result = frame.evaluate(HAZARDS_JS)
        assert not result["flags"], f"a payload ran: {result['flags']} in {frame.url}"
        assert not result["found"], f"payload markup in the page: {result['found']}"
    assert not page.js_errors, page.js_errors
    problems = page.locator("[data-testid='stException'], [data-testid='stAlertContentError']")
    assert not problems.count(), problems.first.inner_text()


def strip_repeat(label: str) -> str:
    """Plotly labels number repeated tokens ("the (2)"): back to the token."""
    return re.sub(r" \(\d+\)$", "", label)


def test_the_checks_see_markup_that_ran(page):
    """The detector itself, on a page that does render the payloads as HTML."""
    page.set_content(
        '<img src=x onerror="window.__xss_2=1"><a href="javascript:window.__xss_3=1">x</a>'
        "<script>window.__xss_1=1</script>"
    )
    images_settled(page.main_frame)
    result = page.evaluate(HAZARDS_JS)
    assert set(result["flags"]) == {"__xss_1", "__xss_2"}
    assert len(result["found"]) == 3  # the onerror, the javascript: link, the script


# --------------------------------------------------------------------------------------------------
# explore
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wordpiece():
    from tokenizers import Tokenizer

    from core.models.bundled import bundled_model_dir

    tok = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return lambda text: tok.encode(text).tokens


def assert_explore_shows(page, payload: str, view: str, wordpiece) -> None:
    expect(page.locator("[data-testid='stTextArea'] textarea >> nth=0")).to_have_value(payload)
    assert text_param(page) == payload
    tokens = wordpiece(payload)
    expect(page.get_by_text(f"· {len(tokens)} tokens")).to_have_count(1)
    if view == "lines":  # every token drawn as text, twice (queries and keys)
        shown = [strip_repeat(label) for label in page.evaluate(LABELS_JS)]
        assert Counter(shown) == Counter(tokens * 2)
    elif view in ("head", "focus"):  # token tick labels; Plotly may leave some out when crowded
        axis = ".ytick text" if view == "head" else ".xtick text"
        shown = [strip_repeat(label) for label in page.evaluate(TICKS_JS, axis)]
        assert shown
        assert not Counter(shown) - Counter(tokens), "labels that are not the sentence's tokens"


@pytest.fixture
def explore_page(shared_tab, app_server):
    """One explore session on the lines view, which draws every token as text, kept from test to test."""

    def setup(page):
        page.goto(f"{app_server.url}/explore?view=lines&text=warm")
        wait_charts(page, 1, BROWSER_DEADLINE_MS)

    return shared_tab.kept("injection-explore", (1400, 1000), setup)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_explore_text_box(explore_page, group, wordpiece):
    page, payload = explore_page, SENTENCES[group]
    box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
    send_text(page, box, payload)
    wait_settled(page, 1)  # the chart redrawn with the payload's tokens, not the last sentence's
    assert_nothing_ran(page)
    assert_explore_shows(page, payload, "lines", wordpiece)


@pytest.mark.parametrize(("n", "group"), list(enumerate(SENTENCES)), ids=list(SENTENCES))
def test_explore_url(page, app_server, n, group, wordpiece, screenshot_dir):
    view, payload = EXPLORE_VIEWS[n % len(EXPLORE_VIEWS)], SENTENCES[group]
    page.goto(f"{app_server.url}/explore?" + urllib.parse.urlencode({"text": payload, "view": view}))
    wait_settled(page, CHARTS[view], BROWSER_DEADLINE_MS)
    assert_nothing_ran(page)
    assert_explore_shows(page, payload, view, wordpiece)
    if n == 0:
        page.screenshot(path=screenshot_dir / "injection-explore.png")


# --------------------------------------------------------------------------------------------------
# learn
# --------------------------------------------------------------------------------------------------
def toy_tokens(payload: str) -> list[str]:
    from core.lesson.toy import clean_text, tokenize

    return list(tokenize(clean_text(payload)).tokens)


def assert_learn_shows(page, payload: str) -> None:
    expect(page.get_by_label("Sentence", exact=True)).to_have_value(payload)
    assert text_param(page) == payload
    tokens = toy_tokens(payload)
    # the main area's first plain text (the sidebar's link is plain text too)
    code = page.locator("[data-testid='stMain'] [data-testid='stText']").first.inner_text()
    assert code.split("  ·  ") == tokens
    shown = [strip_repeat(label) for label in page.evaluate(LABELS_JS)]
    assert shown
    assert not Counter(shown) - Counter(tokens), "chart labels that are not the sentence's tokens"


@pytest.fixture
def learn_page(shared_tab, app_server):
    """One learn session, kept from test to test."""

    def setup(page):
        page.goto(f"{app_server.url}/learn")
        wait_charts(page, 1, BROWSER_DEADLINE_MS)

    return shared_tab.kept("injection-learn", (1400, 1000), setup)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_learn_text_box(learn_page, group):
    page, payload = learn_page, SENTENCES[group]
    box = page.get_by_label("Sentence", exact=True)
    send_text(page, box, payload, key="Enter")
    wait_settled(page, 1)  # the chart redrawn with the payload's tokens, not the last sentence's
    assert_nothing_ran(page)
    assert_learn_shows(page, payload)


@pytest.mark.parametrize(("n", "group"), list(enumerate(SENTENCES)), ids=list(SENTENCES))
def test_learn_url(page, app_server, n, group, screenshot_dir):
    payload = SENTENCES[group]
    page.goto(f"{app_server.url}/learn?" + urllib.parse.urlencode({"text": payload}))
    wait_settled(page, 1, BROWSER_DEADLINE_MS)
    assert_nothing_ran(page)
    assert_learn_shows(page, payload)
    if n == 0:
        page.screenshot(path=screenshot_dir / "injection-learn.png")


# --------------------------------------------------------------------------------------------------
# HTML sinks in the code base
# --------------------------------------------------------------------------------------------------
# A call that hands a string to the browser as HTML or script.
SINKS = re.compile(
    r"unsafe_allow_html|\bst\.html\s*\(|components\.v1|components\.html|components\.iframe|"
    r"declare_component|components\.v2\.component\s*\(|dangerouslySetInnerHTML|\.innerHTML\b"
)
# Each allowed sink, as "path: the line's text", mapped to the test that feeds it PAYLOADS and shows
# its input escaped ("tests/...py::test_name"). Add an entry and its proof when a page needs one.
# The four below send fixed text only (a stylesheet, a rule, a scroll script whose only fields are
# an int and an anchor from a fixed set): their proof checks every st.html body against them.
_FIXED_HTML_PROOF = "tests/dashboard/test_fixed_html.py::test_fixed_html_carries_no_user_text"
_FIXED_SCRIPTS = "tests/dashboard/test_fixed_scripts.py::"
ESCAPED_SINKS: dict[str, str] = {
    "dashboard/presenter.py: st.html(_PRESENTER_CSS)": _FIXED_HTML_PROOF,
    "dashboard/views/learn/translator_steps.py: st.html(_BIG_TABLE)": _FIXED_HTML_PROOF,
    "dashboard/views/learn/widgets.py: st.html(_SCROLL.format(run=int(run), anchor=anchor), "
    "unsafe_allow_javascript=True)": _FIXED_HTML_PROOF,
    'dashboard/clicker.py: _component = st.components.v2.component("attention_explorer.clicker", js=_JS)': (
        "tests/dashboard/test_presenter.py::test_the_clicker_script_is_fixed"
    ),
    "dashboard/decks/bar.py: st.html(_BAR_CSS)": "tests/dashboard/test_fuzz_deck.py::"
    "test_markup_in_a_deck_is_shown_as_text_and_the_bar_sends_only_fixed_html",
    # issue 50's scripts and style blocks: fixed scripts, a class from a fixed set, the style files
    'dashboard/chart_access.py: _marks = st.components.v2.component("attention_explorer.chart_marks", '
    "js=_MARKS_JS)": _FIXED_SCRIPTS + "test_each_component_script_is_one_constant",
    'dashboard/chart_hover.py: _component = st.components.v2.component("attention_explorer.chart_hover", '
    "js=_JS)": _FIXED_SCRIPTS + "test_the_hover_script_is_filled_with_the_module_constants_only",
    "dashboard/page_style.py: st.html(css)": _FIXED_SCRIPTS + "test_the_stylesheet_is_the_style_files_alone",
    'dashboard/screen.py: _probe = st.components.v2.component("attention_explorer.screen", js=_JS)': (
        _FIXED_SCRIPTS + "test_only_the_screen_probe_takes_data_and_only_a_fixed_class"
    ),
    "dashboard/screen.py: st.html(_least_width_css(width))  # style only: Streamlit puts it out of the "
    "page's flow": _FIXED_SCRIPTS + "test_the_width_rule_is_made_of_an_int",
}
SKIP_DIRS = {".venv", ".git", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache"}


def html_sinks() -> dict[str, int]:
    """{"path: line text": line number} for every line of the code base that hands the browser HTML."""
    found = {}
    this_file = Path(__file__).resolve()
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in {".py", ".js", ".ts", ".tsx", ".html"} or path.resolve() == this_file:
            continue
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if SINKS.search(line):
                found[f"{path.relative_to(ROOT)}: {line.strip()}"] = number
    return found


def test_every_html_sink_has_escaped_input():
    sinks = html_sinks()
    unproven = [f"{sink} (line {number})" for sink, number in sinks.items() if sink not in ESCAPED_SINKS]
    assert not unproven, (
        "HTML reaches the browser here without a proof that its input is escaped; escape it "
        "(html.escape) and add the line to ESCAPED_SINKS with a test that feeds it PAYLOADS:\n"
        + "\n".join(unproven)
    )
    for sink, proof in ESCAPED_SINKS.items():
        path, _, name = proof.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{sink}: no proof {proof}"


def test_sink_scan_finds_sinks():
    """The scanner itself: it flags the usual spellings, and not escaped markdown."""
    samples = [
        "st.markdown(text, unsafe_allow_html=True)",
        "st.html(text)",
        "import streamlit.components.v1 as components",
        "components.html(text)",
        'st.components.v2.component("name", js=script)',
    ]
    assert all(SINKS.search(line) for line in samples)
    assert not SINKS.search("st.markdown(md(text))")
