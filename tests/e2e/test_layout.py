"""Nothing cut at 1280x800 and 1920x1080: on every learn mode (all steps and the heads at once) and
every explore view, in normal and presenter mode, no widget label, option, button, expander or tab
label is cut short (an ellipsis, or text wider than its box), no chart's title, axis title or tick
label runs past its chart, and no two tick labels of an axis overlap. One server, one browser."""

from __future__ import annotations

import pytest

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import wait_charts, wait_settled

VIEWPORTS = ((1280, 800), (1920, 1080))
PAGES = (
    *(f"/learn?step=all{mode}" for mode in ("", "&example=bert", "&example=cat-mat", "&example=i-love-nlp")),
    "/learn?step=5&present=1",
    *(f"/explore?view={view}" for view in ("head", "lines", "model", "focus")),
    "/explore?view=head&present=1",
)
# Pages that set charts two or three to a row, at the laptop's size only: a wider screen gives them room.
LAPTOP_PAGES = (
    "/learn?step=heads&example=decoder&model=letters",
    *(f"/explore?model=letters&view={view}" for view in ("generate", "induction")),
    "/explore?model=translator",  # the cross-attention beside every head's alignment
    "/explore?model=translator&view=generate",  # the words it weighed beside what each head read
)
# Text elements that must show in full: widget labels, segmented-control and pill options, buttons,
# expander summaries, tab labels, radio options, selectbox values.
CUT_TEXT_JS = """() => {
  const selectors = [
    '[data-testid="stWidgetLabel"] *', '[data-testid="stButtonGroup"] button',
    '[data-testid="stButtonGroup"] button *', 'button p', '[data-testid="stExpander"] summary *',
    '[data-baseweb="tab"] *', '[role="radiogroup"] label *', '[data-baseweb="select"] div',
  ];
  const cut = [];
  const seen = new Set();
  for (const el of document.querySelectorAll(selectors.join(','))) {
    if (seen.has(el)) continue;
    seen.add(el);
    const text = (el.innerText || '').trim();
    const box = el.getBoundingClientRect();  // a folded sidebar sits off screen, at the left
    if (!text || box.width < 1 || box.right <= 0) continue;
    if (el.closest('details:not([open])') && !el.closest('summary')) continue;
    const style = getComputedStyle(el);
    const wider = el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible';
    const ellipsis = style.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1;
    if (wider || ellipsis) cut.push(text.slice(0, 80));
  }
  return [...new Set(cut)];
}"""
# Plotly neither wraps nor shrinks a title: one wider than its chart runs past the SVG's edge and is
# clipped there. Each chart's titles and tick labels must lie inside its SVG, and the tick labels of an
# axis must not overlap one another (compared as boxes turned by the labels' own angle, so slanted
# labels count only when their letters meet).
CUT_CHART_TEXT_JS = """() => {
  const found = [];
  const box = (t) => {  // h: the font's em, which holds the letters (a line's box is taller)
    const r = t.getBoundingClientRect(), m = t.getScreenCTM(), scale = Math.hypot(m.a, m.b);
    return {x: r.x + r.width / 2, y: r.y + r.height / 2, angle: Math.atan2(m.b, m.a),
            w: t.getBBox().width * scale, h: parseFloat(getComputedStyle(t).fontSize) * scale};
  };
  const meet = (a, b) => {
    const ux = Math.cos(a.angle), uy = Math.sin(a.angle), dx = b.x - a.x, dy = b.y - a.y;
    return Math.abs(dx * ux + dy * uy) < (a.w + b.w) / 2 - 1
      && Math.abs(-dx * uy + dy * ux) < (a.h + b.h) / 2 - 1;
  };
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const svg = plot.querySelector('.main-svg');
    const frame = svg && svg.getBoundingClientRect();
    if (!frame || frame.width < 1 || plot.closest('details:not([open])')) continue;
    const name = (plot.querySelector('.gtitle')?.textContent || 'untitled chart').slice(0, 60);
    for (const t of plot.querySelectorAll('text.gtitle, text[class$="title"], .xtick text, .ytick text')) {
      const r = t.getBoundingClientRect(), text = t.textContent.trim();
      if (!text || r.width < 1) continue;
      if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1
          || r.bottom > frame.bottom + 1) found.push(`${name}: ${text.slice(0, 80)} (past the chart)`);
    }
    for (const axis of plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above')) {
      const labels = [...axis.querySelectorAll('text')].filter(
        (t) => t.textContent.trim() && t.getBoundingClientRect().width >= 1).map((t) => [t, box(t)]);
      const hit = labels.find(([, a], i) => labels.slice(i + 1).some(([, b]) => meet(a, b)));
      if (hit) found.push(`${name}: tick labels overlap at ${hit[0].textContent.slice(0, 20)}`);
    }
  }
  return [...new Set(found)];
}"""


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_label_is_cut(sized_page, app_server, size):
    page = sized_page(size)
    found = []
    for path in PAGES + (LAPTOP_PAGES if size == VIEWPORTS[0] else ()):
        page.goto(app_server.url + path)
        wait_charts(page, 1, BROWSER_DEADLINE_MS)
        wait_settled(page, 1)  # Plotly's layout done, the fonts in: the labels at their final width
        cut = page.evaluate(CUT_TEXT_JS) + page.evaluate(CUT_CHART_TEXT_JS)
        found += [f"{path} at {size[0]}x{size[1]}: {text!r}" for text in cut]
    assert not found, "cut or ellipsised text:\n" + "\n".join(found)
