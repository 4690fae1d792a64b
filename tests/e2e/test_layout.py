"""Nothing cut at 1280x800 and 1920x1080: on every learn mode (all steps and the heads at once) and
every explore view, in normal and presenter mode, no widget label, option, button, expander or tab
label is cut short (an ellipsis, or text wider than its box). One server, one browser."""

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


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_label_is_cut(sized_page, app_server, size):
    page = sized_page(size)
    found = []
    for path in PAGES:
        page.goto(app_server.url + path)
        wait_charts(page, 1, BROWSER_DEADLINE_MS)
        wait_settled(page, 1)  # Plotly's layout done, the fonts in: the labels at their final width
        found += [f"{path} at {size[0]}x{size[1]}: {text!r}" for text in page.evaluate(CUT_TEXT_JS)]
    assert not found, "cut or ellipsised text:\n" + "\n".join(found)
