"""The train page in Chromium: while a run trains the live charts update (the status and the curves
move on), the recorded run's step control walks the snapshots with a clicker's
keys in presenter mode at 1920x1080 with the page fitting the screen, and a finished run opens on
explore's induction view. Screenshots: /tmp/shots/train-*.png.

The server runs the real app through a small wrapper script that shrinks the page's base settings
(width 32, batch 8; the probe of 24 letters and the context of 64 are the real ones, so the maps
look as in class) and puts a recorded run trained here in place of the shipped one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.train.trainer import Trainer, TrainSettings
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT, StreamlitServer, click, press, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_pages_browser import assert_clean

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
BASE = "TrainSettings(width=32, batch=8, record_every=10, warmup=10)"
WRAPPER = """
import runpy, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from core.train.trainer import TrainSettings
import core.models.shipped
from dashboard.views.train import session
session.base_settings = lambda: {base}
core.models.shipped.shipped_model_dir = lambda: Path({recorded!r})
runpy.run_path({app!r}, run_name="__main__")
"""
STATUS = re.compile(r"Step (\d[\d,]*) of")
CURVE_POINTS_JS = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(
    (p) => p.data && p.data[0] && p.data[0].name === 'first occurrences');
  return plot && plot._fullData[0] ? plot._fullData[0].x.length : 0;
}"""
# True once the status shows a later step than `step` and the loss curve has more points than
# `points` (STATUS and CURVE_POINTS_JS, read in the page).
ADVANCED_JS = """([step, points]) => {
  const main = document.querySelector("[data-testid='stMain']");
  const found = main && main.innerText.match(/Step (\\d[\\d,]*) of/);
  const now = found ? Number(found[1].replaceAll(",", "")) : -1;
  return now > step && (CURVE)() > points;
}""".replace("CURVE", CURVE_POINTS_JS)


@pytest.fixture(scope="module")
def train_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("train_browser")
    run = Trainer(TrainSettings(width=32, heads=4, batch=8, steps=100, record_every=10, warmup=10))
    run.run()
    recorded = run.save(folder / "letters-gpt2")
    wrapper = folder / "train_app.py"
    wrapper.write_text(
        WRAPPER.format(
            root=str(ROOT), base=BASE, recorded=str(recorded), app=str(ROOT / "dashboard" / "app.py")
        )
    )
    with StreamlitServer(app=wrapper) as server:
        yield server


def _step(page) -> int:
    found = STATUS.search(page.locator("[data-testid='stMain']").inner_text())
    return int(found.group(1).replace(",", "")) if found else -1


def test_the_live_charts_update_while_training(sized_page, train_server):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(f"{train_server.url}/train?run=own&steps=5000")
    expect(page.get_by_text("Press Start")).to_have_count(1)
    click(page, page.get_by_role("button", name="Start"), lambda: wait_charts(page, 2, BROWSER_DEADLINE_MS))
    # while it trains, the status and the curve move on, twice: live, not once at the end. How
    # often they move is a speed, measured in bench/train_live.py, never asserted here.
    seen = [(_step(page), page.evaluate(CURVE_POINTS_JS))]
    for _ in range(2):
        page.wait_for_function(ADVANCED_JS, arg=list(seen[-1]), timeout=BROWSER_DEADLINE_MS, polling=100)
        seen.append((_step(page), page.evaluate(CURVE_POINTS_JS)))
    steps, points = zip(*seen, strict=True)
    assert list(steps) == sorted(set(steps)) and list(points) == sorted(set(points)), seen
    page.screenshot(path=SHOTS / "train-live-1280x800.png")
    click(
        page,
        page.get_by_role("button", name="Pause"),
        lambda: expect(page.get_by_role("button", name="Resume")).to_have_count(1),
        live=True,  # it is still training: the page reruns by itself
    )
    assert_clean(page)


def test_the_recorded_run_at_1280(sized_page, train_server):
    page = sized_page((1280, 800))
    page.goto(f"{train_server.url}/train?step=50")
    wait_charts(page, 3, BROWSER_DEADLINE_MS)
    wait_settled(page, 3)
    expect(page.get_by_text("Recorded", exact=False).first).to_be_visible()
    assert_clean(page)
    page.screenshot(path=SHOTS / "train-recorded-1280x800.png", full_page=True)


def test_a_clicker_walks_the_snapshots_on_a_projector(sized_page, train_server):
    page = sized_page((1920, 1080))
    page.goto(f"{train_server.url}/train?present=1&step=50")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    wait_settled(page, 2)
    overflow = page.evaluate(OVERFLOW_JS)
    page.screenshot(path=SHOTS / "train-presenter-1920x1080.png")
    for chart in page.locator(".js-plotly-plot").all()[:2]:
        expect(chart).to_be_in_viewport(ratio=0.95)
    for key, step in (("ArrowRight", 60), ("PageDown", 70), ("ArrowLeft", 60), ("PageUp", 50)):
        press(page, key, lambda step=step: page.wait_for_url(f"**step={step}**", timeout=BROWSER_DEADLINE_MS))
        expect(page.get_by_text(f"attention on the probe at step {step}")).to_have_count(1)
    assert overflow <= 0, f"the step's view runs {overflow:.0f} px past 1920x1080"
    assert_clean(page)


def test_a_finished_run_opens_on_explore(sized_page, train_server):
    page = sized_page((1280, 800))
    page.goto(f"{train_server.url}/train?run=own&steps=50")
    click(
        page,
        page.get_by_role("button", name="Start"),
        lambda: expect(page.get_by_text("What happened, measured")).to_have_count(
            1, timeout=BROWSER_DEADLINE_MS
        ),
    )
    wait_charts(page, 3, BROWSER_DEADLINE_MS)
    page.screenshot(path=SHOTS / "train-done-1280x800.png", full_page=True)
    with page.context.expect_page() as opened:
        click(page, page.get_by_role("link", name="Open this model on explore"), lambda: None)
    explore = opened.value
    explore.wait_for_load_state()
    assert "view=induction" in explore.url and "attention-explorer-trained" in explore.url
    wait_charts(explore, 1, BROWSER_DEADLINE_MS)
    expect(explore.locator("[data-testid='stException']")).to_have_count(0)
    assert not explore.get_by_text("Could not use the model").count()
    explore.screenshot(path=SHOTS / "train-handoff-explore-1280x800.png")
    explore.close()
