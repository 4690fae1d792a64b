"""No key lost (issue 48): a lecturer's clicker gets no second press. Fifty PageDowns at uneven gaps on
explore's heads in presenter mode, beside two busy processes, some of them while a run is held open,
move exactly fifty heads: none lost, none doubled.

The cause this guards against: the keys used to be buttons' shortcuts, and a button's click is one
boolean, sent on a timer the loaded browser ran seconds late and merged with a click of the same button
still waiting; 4 of 50 presses were lost so (every one of them heard: its default prevented). The page
now counts the presses and sends the count (dashboard/clicker.py).

The server runs the real app through a wrapper that holds a run at its start (when it sets the
clicker's place) for as long as the test keeps a hold file: keys pressed then land while the script
runs, every time, not only when the machine happens to be slow.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT, StreamlitServer, press_at_gaps, press_while_running, wait_listening
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

pytestmark = pytest.mark.slow

PRESSES = 50
HEADS = 12  # all-MiniLM-L6-v2, the bundled model: 6 layers of 12 heads, so 50 steps never wrap
WRAPPER = """
import pathlib, runpy, sys, time
sys.path.insert(0, {root!r})
import dashboard.clicker as clicker
if not getattr(clicker.slot, "held", False):  # the wrapper runs again on every rerun
    place = clicker.slot
    def held_slot():
        hold = pathlib.Path({hold!r})
        while hold.exists():  # a run held at its start, the previous run's page still on screen
            time.sleep(0.05)
        return place()
    held_slot.held = True
    clicker.slot = held_slot
runpy.run_path({app!r}, run_name="__main__")
"""


@pytest.fixture(scope="module")
def busy_server(tmp_path_factory):
    """The app behind the hold wrapper, with two CPU-bound processes beside it for the whole module."""
    folder = tmp_path_factory.mktemp("clicker_count")
    wrapper, hold = folder / "held_app.py", folder / "hold"
    wrapper.write_text(WRAPPER.format(root=str(ROOT), app=str(ROOT / "dashboard" / "app.py"), hold=str(hold)))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        with StreamlitServer(app=wrapper) as server:
            server.hold = hold
            try:
                yield server
            finally:
                hold.unlink(missing_ok=True)  # never leave a run held while the server stops
    finally:
        for process in busy:
            process.kill()
            process.wait()


def _at_head(page, flat: int) -> None:
    """Wait until the page has finished its runs showing head `flat` (counted across layers)."""
    layer, head = divmod(flat, HEADS)
    page.wait_for_url(f"**layer={layer}&head={head}&**", timeout=BROWSER_DEADLINE_MS)
    wait_listening(page)
    expect(page.get_by_text(f"Layer {layer + 1}, head {head + 1}").first).to_be_visible()
    assert f"layer={layer}&head={head}&" in page.url, page.url  # and no later run moved it on


def test_fifty_uneven_presses_move_fifty_heads(sized_page, busy_server):
    page = sized_page((1920, 1080))
    page.goto(busy_server.url + "/explore?view=head&present=1&layer=0&head=0")
    wait_all_drawn(page, 1)
    wait_listening(page)
    rng = random.Random(48)  # the gaps are the input: the same uneven presses on every run
    done = 0
    while done < PRESSES:  # 10 presses a burst, then the count is checked: a loss and a double never cancel
        busy_server.hold.touch()  # the burst's first key starts a run that is held open
        try:
            press_at_gaps(page, "PageDown", [0.0])
            press_while_running(page, "PageDown", lambda: None)  # lands while that run is held
        finally:
            busy_server.hold.unlink(missing_ok=True)
        press_at_gaps(page, "PageDown", [rng.choice((0.02, 0.1, 0.3, 0.7, 1.5)) for _ in range(8)])
        done += 10
        _at_head(page, done)
    assert_clean(page)
