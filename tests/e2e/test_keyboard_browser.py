"""Keyboard only (issue 50, point 3), in Chromium: a page walked with Tab alone.

From the top of the page, Tab goes through every control until the focus leaves the page, and:
- every visible control is reached: the Tab stops include every element the page itself counts as
  focusable and visible (tabIndex >= 0, not disabled, not folded away); a radio group (a segmented
  control, st.radio) is one stop, entered at one option and moved in with the arrows;
- the order is the reading order: Streamlit puts the sidebar before the main area (the "Skip to main
  content" link comes first to jump over it); within each, a stop is never above the one before it,
  unless it is to its right in the same row (the next column of st.columns, the next button of a
  horizontal container), which is reading on along the row;
- each stop is on screen and opaque (Plotly's modebar fades in on focus: waited for), and shows a ring:
  an outline of at least 2 px with at least 3:1 contrast against the background behind it (WCAG 2.4.7,
  1.4.11), which the same element has not once the focus has gone;
- the keyboard alone changes the view: Enter on a button, an arrow on a slider;
- the clicker's keys (→ / PageDown, ← / PageUp: dashboard/clicker.py) typed into a text box, a number
  box or a text area move the caret and never step the page; outside a field
  they do. The page's clicker counts every press it takes (window.__attentionClicker), so a press it
  wrongly took shows at once, with no waiting for something not to happen.
"""

from __future__ import annotations

import itertools
from functools import partial

from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import press, wait_listening, wait_settled
from tests.e2e.test_pages_browser import assert_clean

# In-page helpers, installed once per page load: each element the walk meets gets a number
# (data-kb), so that the stops, the focusable set and the unfocused styles can be compared.
KB_JS = """() => {
  const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex], [contenteditable='true']";
  const shown = (e) => {
    const r = e.getBoundingClientRect();
    const seen = getComputedStyle(e).visibility === "visible" && !e.closest("[inert]");
    return r.width > 0 && r.height > 0 && seen;
  };
  const opacity = (e) => {
    let o = 1;
    for (let p = e; p; p = p.parentElement) o *= +getComputedStyle(p).opacity;
    return o;
  };
  const scroller = (e) => {
    for (let p = e.parentElement; p; p = p.parentElement) {
      const scrolls = /(auto|scroll)/.test(getComputedStyle(p).overflowY);
      if (scrolls && p.scrollHeight > p.clientHeight + 1) return p;
    }
    return document.scrollingElement;
  };
  const paint = (e) => {  // the first colour painted at or behind e
    for (let p = e; p; p = p.parentElement) {
      const c = getComputedStyle(p).backgroundColor;
      if (c && !/rgba\\(.*, 0\\)$/.test(c) && c !== "transparent") return c;
    }
    return "rgb(255, 255, 255)";
  };
  let next = 0;
  const id = (e) => (e.dataset.kb ??= String(next++));
  const ringBox = (e) => {  // the outermost element of e's widget that draws an outline (the ring's box)
    let box = null;
    for (let p = e; p && p.dataset.testid !== "stElementContainer"; p = p.parentElement) {
      if (getComputedStyle(p).outlineStyle !== "none") box = p;
    }
    return box;
  };
  const ring = (box) => {
    if (!box) return null;
    const s = getComputedStyle(box);
    const inside = parseFloat(s.outlineOffset) < 0;
    return {id: id(box), style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor,
            behind: paint(inside ? box : box.parentElement)};
  };
  window.__kb = {
    active() {
      const e = document.activeElement;
      if (!e || e === document.body) return null;
      const box = ringBox(e) || e;
      const r = box.getBoundingClientRect();
      const key = e.closest("[class*='st-key-']");
      const inSidebar = e.closest("[data-testid='stSidebar']"), inMain = e.closest("[data-testid='stMain']");
      const area = inSidebar ? "sidebar" : inMain ? "main" : "top";
      const label = (e.getAttribute("aria-label") || e.innerText || "").trim().slice(0, 40);
      return {
        id: id(e), name: `${e.tagName} ${label}`,
        key: key ? [...key.classList].find((c) => c.startsWith("st-key-")) : null, area,
        x: r.left, right: r.right, y: r.top + scroller(box).scrollTop,
        onScreen: r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth,
        opacity: opacity(box), ring: ring(ringBox(e)),
      };
    },
    settled() {  // no transition is running (Plotly's modebar fades in on focus), or none is focused
      const e = document.activeElement;
      return !e || e === document.body || document.getAnimations().every((a) => a.playState !== "running");
    },
    unfocusedRing(boxId) {
      const box = document.querySelector(`[data-kb="${boxId}"]`);
      return box ? getComputedStyle(box).outlineStyle + " " + getComputedStyle(box).outlineColor : "gone";
    },
    missed(reached) {  // visible focusable elements (radio groups by group) that no Tab stop reached
      const seen = new Set(reached);
      const group = (e) => e.closest("[role='radiogroup']") || e;
      const reachedGroups = new Set([...document.querySelectorAll("[data-kb]")]
        .filter((e) => seen.has(e.dataset.kb)).map(group));
      return [...document.querySelectorAll(FOCUSABLE)]
        .filter((e) => e.tabIndex >= 0 && !e.disabled && shown(e) && !reachedGroups.has(group(e)))
        .map((e) => `${e.tagName} ${(e.getAttribute("aria-label") || e.innerText || "").slice(0, 40)}`);
    },
    sameRow(a, b) {  // b reads on from a along a row: both in one horizontal flex box, b to the right
      const ea = document.querySelector(`[data-kb="${a}"]`), eb = document.querySelector(`[data-kb="${b}"]`);
      for (let p = eb.parentElement; p; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (p.contains(ea) && s.display.includes("flex") && s.flexDirection === "row") return true;
        if (p.contains(ea)) return false;
      }
      return false;
    },
  };
}"""
TOLERANCE_PX = 4  # a help icon sits a few pixels above its switch in the same line
MIN_OPACITY = 0.5
AREAS = ("top", "sidebar", "main")  # the skip link, then the sidebar, then the main area


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(css_a: str, css_b: str) -> float:
    """WCAG contrast ratio of two opaque CSS rgb()/rgba() colours."""
    a, b = (tuple(float(v) for v in c[c.index("(") + 1 : -1].split(",")) for c in (css_a, css_b))
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _tab(page) -> dict | None:
    """Press Tab; the stop it reaches once it has faded in (None: the focus left the page)."""

    def reached():
        page.wait_for_function("() => window.__kb.settled()", timeout=BROWSER_DEADLINE_MS, polling="raf")
        return page.evaluate("() => window.__kb.active()")

    return press(page, "Tab", reached)


def walk(page, limit: int = 150) -> list[dict]:
    """Tab from the top of the page until the focus leaves it; the stops, in order."""
    page.evaluate(KB_JS)
    stops = []
    while (stop := _tab(page)) is not None:
        stops.append(stop)
        assert len(stops) < limit, "Tab never leaves the page: a focus trap?"
    return stops


def check_walk(page, stops: list[dict]) -> None:
    """Every visible control reached, in reading order, each on screen with a ring it has only when
    focused (the focus has left the page when this runs)."""
    missed = page.evaluate("(ids) => window.__kb.missed(ids)", [s["id"] for s in stops])
    assert not missed, f"Tab never reaches: {missed}"
    areas = [AREAS.index(s["area"]) for s in stops]
    assert areas[0] == 0 and areas.count(0) <= 2, stops[:3]  # the skip link (and a header button)
    for a, b in itertools.pairwise(stops):
        # seen: on screen and not faded out (a caption's link is drawn faded, as its caption is; whether
        # its text contrasts enough is axe's color-contrast rule, run on every page)
        assert b["onScreen"] and b["opacity"] >= MIN_OPACITY, f"focused but not seen: {b}"
        if a["area"] == b["area"] and b["y"] < a["y"] - TOLERANCE_PX:
            row = page.evaluate("([a, b]) => window.__kb.sameRow(a, b)", [a["id"], b["id"]])
            side = b["x"] > a["x"] and row
            assert side, f"Tab goes back up the page: {a['name']} -> {b['name']}"
    sidebar = [i for i, s in enumerate(stops) if s["area"] == "sidebar"]
    main = [i for i, s in enumerate(stops) if s["area"] == "main"]
    assert not sidebar or not main or max(sidebar) < min(main), "the sidebar and the main area interleave"
    for stop in stops:
        ring = stop["ring"]
        assert ring and ring["style"] != "none" and ring["width"] >= 2, f"no ring: {stop}"
        assert contrast(ring["color"], ring["behind"]) >= 3, f"a faint ring: {stop}"
        gone = page.evaluate("(id) => window.__kb.unfocusedRing(id)", ring["id"])
        assert gone != f"{ring['style']} {ring['color']}", f"the ring shows without the focus: {stop}"


def clicker_counts(page) -> dict:
    """The presses the page's clicker has taken so far (dashboard/clicker.py), and whether it listens."""
    return page.evaluate(
        "() => ({on: document.body.dataset.clicker, next: window.__attentionClicker?.next ?? 0,"
        " prev: window.__attentionClicker?.prev ?? 0})"
    )


def caret(box) -> int | None:
    return box.evaluate("(e) => e.selectionStart")


def keys_stay_in(page, box, moves_caret: bool = True) -> None:
    """The clicker's four keys pressed in the field `box` (focused) move its caret (when it has one the
    page can read) and are none of them the clicker's."""
    before = clicker_counts(page)
    assert before["on"] == "on", "the page binds no stepper: the test would prove nothing"
    press(page, "End", lambda: None, on=box)
    end = caret(box)
    press(page, "ArrowLeft", lambda: None, on=box)
    if moves_caret:
        assert caret(box) == end - 1, "← did not move the caret"
    press(page, "ArrowRight", lambda: None, on=box)
    if moves_caret:
        assert caret(box) == end, "→ did not move the caret"
    for key in ("PageDown", "PageUp"):
        press(page, key, lambda: None, on=box)
    assert clicker_counts(page) == before, "a key typed into a field stepped the page"


def test_learn_page_by_keyboard(page, app_server):
    page.goto(app_server.url + "/learn")
    wait_settled(page, 1)
    stops = walk(page)
    check_walk(page, stops)
    names = [s["name"] for s in stops]
    reached = "\n".join(names)
    assert "Collapse sidebar" in reached and "Next: 2" in reached, reached
    # the keyboard alone: Tab on to the pager's Next button, Enter on it
    while "Next: 2" not in (stop := _tab(page) or {"name": "left the page"})["name"]:
        assert stop["name"] != "left the page", "Tab never reached the pager's Next button"
    press(page, "Enter", partial(page.wait_for_url, "**step=2**", timeout=BROWSER_DEADLINE_MS))
    # the clicker's keys inside fields: a text box, a number box
    keys_stay_in(page, page.locator(".st-key-learn_text input"))
    keys_stay_in(page, page.locator(".st-key-learn_d_model input"), moves_caret=False)  # type=number
    assert "step=2" in page.url
    # and outside a field the same key steps the page, once
    heading = page.get_by_role("heading", name="Step 3 ·")
    nxt = page.get_by_role("button", name="Next: 3")
    press(page, "ArrowRight", partial(expect(heading).to_have_count, 1), on=nxt)
    wait_listening(page)
    assert "step=3" in page.url and clicker_counts(page)["next"] == 1
    assert_clean(page)
    # the deck editor binds no stepper: its fields' keys are never the clicker's, whatever they are
    page.goto(app_server.url + "/deck")
    wait_listening(page)
    assert clicker_counts(page)["on"] == "off"


def test_explore_head_view_by_keyboard(page, app_server):
    page.goto(app_server.url + "/explore?view=head&layer=0&head=0")
    wait_settled(page, 1)
    check_walk(page, walk(page))
    # the clicker's keys in the sentence's text area move its caret, never the head
    keys_stay_in(page, page.locator(".st-key-explore_text textarea"))
    # an arrow on a slider changes the view (the slider's key, not the clicker's)
    before = clicker_counts(page)
    layer = page.locator("[data-testid='stSlider'] input").first
    layer_1 = partial(page.wait_for_url, "**layer=1**", timeout=BROWSER_DEADLINE_MS)
    press(page, "ArrowRight", layer_1, on=layer)
    assert clicker_counts(page) == before and "head=0" in page.url
    # outside a field, PageDown steps the head
    nxt = page.get_by_role("button", name="Next head")
    press(page, "PageDown", partial(page.wait_for_url, "**head=1**", timeout=BROWSER_DEADLINE_MS), on=nxt)
    assert clicker_counts(page)["next"] == before["next"] + 1
    assert_clean(page)
