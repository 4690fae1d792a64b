"""The clicker during a rerun, in Chromium: a teacher presses PageDown, and presses it again while the
page is still redrawing for the first press. Both presses count: the second goes one stop further,
never repeats the first and is never undone (the pager's buttons move relative to the step on screen,
so the button the previous run drew still moves the right way; and the step picker's old value, which
the browser sends with the second press because it has not yet redrawn, cannot put the old step back).

The server runs the real app through a wrapper that holds each learn-page run in decoder mode before
it draws the step picker (as a slow laptop would) for as long as the test keeps a hold file, so the
second key lands mid-run, while the browser still shows the previous run's picker and pager, every
time. A fixed two-second wait did not: on a loaded CI machine the first run once ended before the
second key went in (S9's CI run).
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT, StreamlitServer, press, press_while_running
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.slow

WRAPPER = """
import pathlib, runpy, sys, time
sys.path.insert(0, {root!r})
import dashboard.views.learn.decoder as decoder
if not getattr(decoder.step_picker_ui, "slowed", False):  # the wrapper runs again on every rerun
    draw = decoder.step_picker_ui
    def slow_draw(*args, **kwargs):
        hold = pathlib.Path({hold!r})
        while hold.exists():  # held before the picker, the steps and their pager: a slow machine's rerun
            time.sleep(0.05)
        return draw(*args, **kwargs)
    slow_draw.slowed = True
    decoder.step_picker_ui = slow_draw
runpy.run_path({app!r}, run_name="__main__")
"""


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clicker")
    wrapper = folder / "slow_app.py"
    hold = folder / "hold"
    app = ROOT / "dashboard" / "app.py"
    wrapper.write_text(WRAPPER.format(root=str(ROOT), app=str(app), hold=str(hold)))
    gpt2 = make_tiny_gpt2(folder / "gpt2", n_layer=2, n_head=4, n_embd=32)
    with StreamlitServer(app=wrapper) as server:
        server.learn_url = f"{server.url}/learn?example=decoder&model={quote(str(gpt2), safe='')}&present=1"
        server.hold = hold
        try:
            yield server
        finally:
            hold.unlink(missing_ok=True)  # never leave a run held while the server stops


def press_twice_in_one_run(page, server, key: str) -> None:
    """Press `key`, then press it again while the run the first press started is held open, then
    let that run go on."""
    server.hold.touch()
    try:
        press(page, key, lambda: None)
        press_while_running(page, key, lambda: None)
    finally:
        server.hold.unlink(missing_ok=True)


def test_a_key_pressed_during_a_rerun_counts(sized_page, slow_server):
    page = sized_page((1920, 1080))
    page.goto(slow_server.learn_url + "&step=3")
    wait_all_drawn(page, 1)
    # step 3 -> 4 starts a rerun, held; the second PageDown goes in during it: 4 -> causal mask
    press_twice_in_one_run(page, slow_server, "PageDown")
    page.wait_for_url("**step=mask**", timeout=BROWSER_DEADLINE_MS)
    expect(page.get_by_role("heading", name="Causal mask")).to_have_count(1)
    wait_all_drawn(page, 3)
    assert "step=mask" in page.url  # and it stays there: the second press did not go on past it
    # and back: two PageUps, the second during the rerun of the first, from the mask to step 3
    press_twice_in_one_run(page, slow_server, "PageUp")
    page.wait_for_url("**step=3**", timeout=BROWSER_DEADLINE_MS)
    expect(page.get_by_role("heading", name="Step 3 ·")).to_have_count(1)
    assert_clean(page)
