"""Every page on a phone (390x844) and a tablet (768x1024) reads top to bottom (issue 50): the page
never scrolls sideways, the controls come before the first chart, every touch target is at least
24 x 24 px, and explore's head view of a 17-word sentence keeps its cells at least 14 px wide with
the colour bar under the cells (dashboard/screen.py, dashboard/charts/phone.py,
dashboard/styles/phone.css). A laptop's head view is drawn as before. Screenshots of each page at
390x844 go to tests/e2e/screenshots/phone_*.png, to be looked at.

Each page is opened once, on the phone, then turned into a tablet (the window resized), which also
checks that a change of width class refits the charts.
"""

from __future__ import annotations

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import COUNT_DRAWN_JS, wait_settled

PHONE, TABLET, LAPTOP = (390, 844), (768, 1024), (1280, 800)
SENTENCE = "The animal didn't cross the busy street because it was far too tired to walk"  # 17 tokens
HEAD_VIEW = f"/explore?view=head&text={SENTENCE.replace(' ', '%20')}"
PAGES = {
    "learn": "/",
    "explore": HEAD_VIEW,
    "compare": "/compare",
    "atlas": "/atlas",
    "cost": "/cost",
    "train": "/train",
    "circuit": "/circuit",
    "deck": "/deck",
}
MIN_CELL_PX, MIN_TARGET_PX = 14, 24
# The cost page opens on a measurement drawn for everyone alike (no control shapes it); its controls
# come first in its second section, above the charts they drive.
CHART_FIRST = {"cost"}
# The charts a page must have drawn before it is measured: explore's head view is checked cell by cell
CHARTS_MEASURED = {"explore": 1}

# True once the page is drawn for the window's width: the script has finished, the main area shows
# its heading, and the screen probe (drawn with the first chart) says the page was drawn for this
# window's width class (a page without charts has no probe).
DRAWN_FOR_WIDTH_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  if (!document.querySelector("[data-testid='stMain'] [data-testid='stHeading']")) return false;
  return !document.querySelector(".st-key-screen_probe") || !!document.body.dataset.screen;
}"""
# What the test checks, read off the page at once: the document's width, the first control's and
# the first chart's tops, the touch targets under 24 px, and each heatmap's cells and colour bar.
LAYOUT_JS = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const top = (e) => e.getBoundingClientRect().top + main.scrollTop;
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const controls = [...main.querySelectorAll(
    "input, textarea, select, [role=slider], [role=radiogroup], [data-testid=stButtonGroup]")]
    .filter((e) => shown(e.closest("[data-testid=stElementContainer]") || e))
    .filter((e) => !e.closest(".js-plotly-plot"));
  const charts = [...main.querySelectorAll(".js-plotly-plot")].filter(shown);
  const targets = [];
  const selector = "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=slider], "
    + "[role=tab], [role=radio], [role=checkbox], [role=switch], [role=option], [role=button]";
  for (const e of document.querySelectorAll(selector)) {
    const own = e.getBoundingClientRect();
    if (!own.width || !own.height || own.right <= 0 || own.left >= innerWidth) continue;  // off screen
    if (e.closest("[aria-hidden=true]") || getComputedStyle(e).visibility === "hidden") continue;
    if (e.matches("[data-testid=stSkipToContent]")) continue;  // shown on focus, full width then
    // a link inside a sentence is exempt (WCAG 2.5.8); a range input's target is its slider's track,
    // a checkbox's its label
    const inline = e.tagName === "A" && e.closest("p, li, td");
    if (inline && !e.closest("[data-testid=stHeaderActionElements]")) continue;
    const hit = (e.type === "range" && e.closest("[role=group]"))
      || (e.tagName === "INPUT" && e.closest("label")) || e;
    const r = hit.getBoundingClientRect();
    if (Math.max(r.width, own.width) < 23.5 || Math.max(r.height, own.height) < 23.5) {
      const name = e.getAttribute("aria-label") || e.getAttribute("data-title") || e.innerText || e.tagName;
      targets.push(`${name.trim().slice(0, 40)} (${Math.round(r.width)}x${Math.round(r.height)})`);
    }
  }
  // a row of columns that sets a chart before a control: a phone stacks them, the chart first
  const chartThenControl = [...main.querySelectorAll("[data-testid=stHorizontalBlock]")].some((row) => {
    const cols = [...row.children];
    const chart = cols.findIndex((c) => c.querySelector(".js-plotly-plot"));
    return chart >= 0 && cols.slice(chart + 1).some((c) => c.querySelector(
      "input, textarea, select, [role=slider], [role=radiogroup], [data-testid=stButtonGroup]"));
  });
  const maps = charts.map((p) => {
    const layout = p._fullLayout, map = (p._fullData || []).find((t) => t.type === "heatmap");
    if (!layout || !map) return null;
    const columns = map.x ? map.x.length : map.z[0].length;
    const bar = p.querySelector(".colorbar");
    const cellsBottom = p.getBoundingClientRect().top + layout._size.t + layout._size.h;
    return {width: layout.width, cell: layout._size.w / columns,
            bar: map.showscale ? map.colorbar.orientation : null,
            barBelow: bar ? bar.getBoundingClientRect().top >= cellsBottom - 1 : null};
  }).filter(Boolean);
  return {
    scrollWidth: document.documentElement.scrollWidth, mainScrollWidth: main.scrollWidth, width: innerWidth,
    firstControl: controls.length ? top(controls[0]) : null,
    firstChart: charts.length ? top(charts[0]) : null,
    targets: [...new Set(targets)], maps, chartThenControl, screen: document.body.dataset.screen || null,
  };
}"""


def _drawn(page, name: str) -> dict:
    """Wait until the page is drawn for the window's width and has settled; its layout. A page's
    charts may still be drawing when its run ends: the charts the test measures are waited for."""
    page.wait_for_function(DRAWN_FOR_WIDTH_JS, timeout=BROWSER_DEADLINE_MS, polling="raf")
    wait_settled(page, max(CHARTS_MEASURED.get(name, 0), page.evaluate(COUNT_DRAWN_JS)))
    crashed = page.locator("[data-testid='stException']")
    assert not crashed.count(), crashed.first.inner_text()
    return page.evaluate(LAYOUT_JS)


def _problems(name: str, size: tuple[int, int], seen: dict) -> list[str]:
    where = f"{name} at {size[0]}x{size[1]}"
    found = []
    if max(seen["scrollWidth"], seen["mainScrollWidth"]) > seen["width"]:
        found.append(f"{where}: the page scrolls sideways ({seen['scrollWidth']} px > {seen['width']})")
    first_control, first_chart = seen["firstControl"], seen["firstChart"]
    if None not in (first_control, first_chart) and first_control > first_chart and name not in CHART_FIRST:
        found.append(f"{where}: the first chart comes before the first control")
    if seen["chartThenControl"]:
        found.append(f"{where}: a row of columns sets a chart before a control (a phone stacks it first)")
    found += [f"{where}: touch target under {MIN_TARGET_PX} px: {t}" for t in seen["targets"]]
    if name == "explore":
        head = seen["maps"][0] if seen["maps"] else None
        if head is None or head["cell"] < MIN_CELL_PX:
            found.append(f"{where}: the head view's cells are narrower than {MIN_CELL_PX} px: {head}")
        elif head["bar"] != "h" or not head["barBelow"]:
            found.append(f"{where}: the head view's colour bar is not under its cells: {head}")
    return found


def _screenshot(page, path) -> None:
    """The whole page at the phone's width: the window made as tall as the page (Streamlit scrolls its
    main area, not the document, so a full-page screenshot would show one screen), then put back."""
    tall = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
    # room to spare below: a window exactly as tall as the page can make its scroll bar come and go
    page.set_viewport_size({"width": PHONE[0], "height": max(PHONE[1], min(tall + 200, 12000))})
    wait_settled(page, page.evaluate(COUNT_DRAWN_JS))
    page.screenshot(path=str(path))


def _resize(page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_function("(w) => innerWidth === w", arg=size[0], polling="raf")


def test_every_page_reads_top_to_bottom_on_a_phone_and_a_tablet(sized_page, app_server, screenshot_dir):
    page = sized_page(PHONE)
    found = []
    for name, path in PAGES.items():
        page.goto(app_server.url + path)
        found += _problems(name, PHONE, _drawn(page, name))
        _screenshot(page, screenshot_dir / f"phone_{name}.png")
        _resize(page, TABLET)
        found += _problems(name, TABLET, _drawn(page, name))
    assert not page.js_errors, page.js_errors
    assert not found, "\n".join(found)


def test_a_laptop_draws_the_head_view_as_before(sized_page, app_server):
    """At 1280x800 the figure is the builder's own: it spans its column (no least width), its colour
    bar stands at the right of the cells, and its numbers are printed."""
    page = sized_page(LAPTOP)
    page.goto(app_server.url + HEAD_VIEW)
    seen = _drawn(page, "explore")
    assert seen["screen"] == "wide"
    marked = page.evaluate("""() => document.querySelector('.stPlotlyChart')
      .closest("[data-testid='stElementContainer']").getAttribute('width')""")
    assert not (marked or "").endswith("px"), marked  # no least width given: it spans its column
    head = page.evaluate("""() => { const p = document.querySelector('.js-plotly-plot');
      const map = p._fullData.find((t) => t.type === 'heatmap');
      return {width: p._fullLayout.width, box: p.getBoundingClientRect().width,
              bar: map.colorbar.orientation, text: map.texttemplate || null}; }""")
    assert abs(head["width"] - head["box"]) <= 1, head  # the column's width: stretched, as before
    assert (head["bar"], head["text"]) == ("v", "%{text}"), head
