"""Hover to isolate (issue 51, point 3; dashboard/chart_hover.py) in Chromium at 1280x800, on one page
load of explore's lines view on the bundled model: pointing at a word's label leaves only its lines
opaque (every line's opacity read from the SVG, its words told by where it is drawn, not by the
script's own bookkeeping), pointing away brings them all back; the keyboard does the same (Tab onto
the labels, arrows between them, the clicker's arrows left alone); after a redraw (all heads, a
resize) too; and the head view's heatmap outlines the hovered cell's row and column.
Screenshots: hover-isolate-*.png."""

from __future__ import annotations

from tests.e2e.harness import click, press, wait_settled, wait_still
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

# Each drawn line of the lines chart: its query and key (the nearest label dot to each end), its own
# opacity (its trace's, the weight's bin) and the opacity it is seen with (every ancestor's included).
LINES_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const dots = {};
  for (const g of gd.querySelectorAll('.scatterlayer .trace')) {
    const side = g.__data__?.[0]?.trace?.meta?.words;
    if (side) dots[side] = [...g.querySelectorAll('path.point')].map(
      (p) => +/translate\\([^,]+,([^)]+)\\)/.exec(p.getAttribute('transform'))[1]);
  }
  const nearest = (ys, y) => ys.reduce(
    (best, v, i) => Math.abs(v - y) < Math.abs(ys[best] - y) ? i : best, 0);
  const seen = (e) => {
    let o = 1;
    for (; e && e !== gd; e = e.parentElement) o *= +getComputedStyle(e).opacity;
    return o;
  };
  return [...gd.querySelectorAll('.scatterlayer .trace path.js-line')].map((p) => {
    const [, y0, y1] = /^M[^,]+,([^L]+)L[^,]+,(.+)$/.exec(p.getAttribute('d'));
    const own = +getComputedStyle(p.closest('.trace')).opacity;
    return { query: nearest(dots.query, +y0), key: nearest(dots.key, +y1), own, seen: seen(p) };
  });
}"""
# True when only the lines of word `i` on `side` are seen at their own opacity, the others faded to a
# tenth or less; side null: every line at its own opacity.
ISOLATED_JS = f"""([side, i]) => {{
  const lines = ({LINES_JS})();
  const kept = (l) => side === null || l[side] === i;
  const ok = (l) => kept(l) ? Math.abs(l.seen - l.own) < 1e-3 : l.seen <= 0.1 * l.own + 1e-6;
  return lines.some(kept) && lines.every(ok);
}}"""
# The centre of word i's label on `side`, in page pixels.
LABEL_JS = """([side, i]) => {
  const gd = document.querySelector('.js-plotly-plot');
  const g = [...gd.querySelectorAll('.scatterlayer .trace')].find(
    (t) => t.__data__?.[0]?.trace?.meta?.words === side);
  const label = g.querySelectorAll('.textpoint text')[i];
  label.scrollIntoView({ block: 'nearest', behavior: 'instant' });  // on screen, to be pointed at
  const r = label.getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2];
}"""
HEADS_DRAWN_JS = """(n) => new Set((document.querySelector('.js-plotly-plot')?._fullData || [])
  .filter((t) => t.meta?.head !== undefined && t.visible === true).map((t) => t.meta.head)).size >= n"""
FOCUSED_JS = """() => {
  const e = document.activeElement;
  const label = e?.closest('.js-plotly-plot') && e.getAttribute('role') === 'button';
  return label ? e.getAttribute('aria-label') : null;
}"""
CLICKER_JS = "() => [window.__attentionClicker?.next ?? 0, window.__attentionClicker?.prev ?? 0]"
# The outline's two boxes (row, column) and the heatmap's cells, in page pixels.
CROSS_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const rects = [...document.querySelectorAll('.ae-crosshair rect.edge')];
  return [rects.map(box), box(document.querySelector('g.hm image'))];
}"""


def _isolated(page, side, i):
    page.wait_for_function(ISOLATED_JS, arg=[side, i], polling="raf")


def _point_at(page, side, i):
    page.mouse.move(*page.evaluate(LABEL_JS, [side, i]))
    _isolated(page, side, i)


def _away(page):
    page.mouse.move(5, 5)  # over the sidebar
    _isolated(page, None, None)


def _hover_and_keyboard(page, shots):
    _point_at(page, "query", 2)
    page.screenshot(path=shots / "hover-isolate-query.png")
    _point_at(page, "key", 9)  # the lines to it, from every query
    _away(page)
    page.get_by_role("switch", name="All heads").focus()
    focused = None
    for _ in range(20):  # Tab on to the chart's labels (the toolbar's buttons first): one stop
        focused = press(page, "Tab", lambda: page.evaluate(FOCUSED_JS))
        if focused:
            break
    assert focused == "show only the lines from “[CLS]”"  # the first query's
    _isolated(page, "query", 0)
    assert page.evaluate("() => document.body.dataset.clicker") == "on"  # ← → step the layer here...
    for key, side, i in (("ArrowDown", "query", 1), ("ArrowDown", "query", 2), ("ArrowRight", "key", 2)):
        press(page, key, lambda side=side, i=i: _isolated(page, side, i))
    page.screenshot(path=shots / "hover-isolate-focus.png")
    assert page.evaluate(CLICKER_JS) == [0, 0]  # ...but on a label they move between labels
    press(page, "Tab", lambda: _isolated(page, None, None))  # off the chart: one stop


def _heatmap_outline(page, shots):
    image = page.locator("g.hm image")
    image.scroll_into_view_if_needed()
    wait_still(page, image)
    cells = image.bounding_box()
    x, y = cells["x"] + cells["width"] * 0.55, cells["y"] + cells["height"] * 0.3
    page.mouse.move(x, y)
    page.wait_for_selector(".js-plotly-plot .hovertext")  # Plotly's own label: the cell is hovered
    page.wait_for_function("() => document.querySelectorAll('.ae-crosshair rect.edge').length === 2")
    (row, column), image = page.evaluate(CROSS_JS)
    assert row[1] <= y <= row[3] and abs(row[0] - image[0]) < 2 and abs(row[2] - image[2]) < 2
    assert column[0] <= x <= column[2] and abs(column[1] - image[1]) < 2 and abs(column[3] - image[3]) < 2
    page.screenshot(path=shots / "hover-isolate-heatmap.png")
    page.mouse.move(5, 5)
    page.wait_for_function("() => !document.querySelector('.ae-crosshair')")


def test_hover_isolates_a_words_lines(sized_page, app_server, screenshot_dir):
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/explore?view=lines")
    wait_all_drawn(page, 1)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    wait_settled(page, 1)
    _hover_and_keyboard(page, screenshot_dir)

    switch = page.get_by_role("switch", name="All heads")  # its label takes the pointer: Space turns it on
    press(page, "Space", lambda: page.wait_for_function(HEADS_DRAWN_JS, arg=2), on=switch)
    wait_settled(page, 1)
    _point_at(page, "key", 9)  # after Plotly's redraw with every head
    page.screenshot(path=screenshot_dir / "hover-isolate-all-heads.png")
    _away(page)
    page.set_viewport_size({"width": 1200, "height": 800})  # a resize redraws the chart too
    wait_settled(page, 1)
    _point_at(page, "query", 3)
    _away(page)

    option = page.locator('[data-testid="stButtonGroup"] button').filter(has_text="Head").first
    click(page, option, lambda: page.wait_for_selector("g.hm image"))
    wait_settled(page, 1)
    _heatmap_outline(page, screenshot_dir)
    assert_clean(page)
