"""The atlas page on a decoder in a real browser (issue 29): a GPT-2 built by hand
(tests/role_gpt2.py: a previous-token head, a first-token sink, an induction head, a self head) at
1280x800 and in presenter mode at 1920x1080: the role map prints each head's role, the role filter
names the decoder roles, nothing is cut off, and on a projector the map is in view without scrolling.
"""

from __future__ import annotations

import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import StreamlitServer, click, wait_charts, wait_settled
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.role_gpt2 import make_role_gpt2

pytestmark = pytest.mark.slow
ROLES_SHOWN = ("induction · 1", "first-token sink · 1", "self · 1", "previous token · 1")
# the role map's bottom edge, against the window's: no scrolling to see it on a projector
CHART_OVERFLOW_JS = """() => {
  const chart = document.querySelector(".js-plotly-plot");
  return chart.getBoundingClientRect().bottom - innerHeight;
}"""


@pytest.fixture(scope="module")
def decoder_server(tmp_path_factory):
    model = make_role_gpt2(tmp_path_factory.mktemp("atlas_decoder_model"))
    env = {"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("atlas_decoder_cache"))}
    with StreamlitServer(env=env) as server:
        server.model = str(model)
        yield server


def open_atlas(page, server, **params: str) -> None:
    query = urllib.parse.urlencode({"model": server.model, **params})
    page.goto(f"{server.url}/atlas?{query}")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)  # the first visit measures the atlas
    wait_settled(page, 1)


@pytest.mark.parametrize(
    ("size", "present"), [((1280, 800), False), ((1920, 1080), True)], ids=["1280x800", "presenter-1920x1080"]
)
def test_a_decoder_atlas_names_its_roles(sized_page, decoder_server, screenshot_dir, size, present):
    page = sized_page(size)
    open_atlas(page, decoder_server, **({"present": "1"} if present else {}))
    for word in ("prev.", "first", "induct.", "self"):  # the role map prints each head's role
        expect(page.locator(".js-plotly-plot").get_by_text(word, exact=True).first).to_be_attached()
    roles = page.locator("[data-testid='stButtonGroup']")
    controls = page.get_by_text("Controls: what is measured", exact=False)

    def roles_shown() -> None:
        for label in ROLES_SHOWN:
            expect(roles.get_by_text(label, exact=True)).to_be_visible()

    if present:  # the controls (and so the role filter) are folded away on a projector
        click(page, controls, roles_shown)
    else:
        roles_shown()
    if present:  # folded again for the shot
        click(page, controls, lambda: expect(roles.get_by_text(ROLES_SHOWN[0], exact=True)).to_be_hidden())
        wait_settled(page, 1)
        overflow = page.evaluate(CHART_OVERFLOW_JS)
        assert overflow <= 0, f"the role map runs {overflow:.0f} px past {size[0]}x{size[1]}"
    assert page.evaluate(CUT_TEXT_JS) == []
    assert page.locator("[data-testid='stException']").count() == 0
    assert not page.js_errors, page.js_errors
    name = "presenter" if present else "normal"
    page.screenshot(path=screenshot_dir / f"atlas-decoder-{name}-{size[0]}x{size[1]}.png")
