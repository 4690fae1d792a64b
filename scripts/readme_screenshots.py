"""Take the README's screenshots: `.venv/bin/python scripts/readme_screenshots.py`.

Starts the app (`streamlit run`, loopback only), opens each page in headless Chromium at 1600x1000,
in presenter mode (the chart first, as on a projector), and writes
docs/screenshots/{learn,learn-bert,explore,compare,atlas,cost}.png. Rerun it after a change to what a page
looks like, and look at the pictures before committing them.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import StreamlitServer, browser, wait_charts  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
SHOTS = {  # file name -> (path and query, charts to wait for)
    "learn": ("/learn?present=1&text=The+cat+sat+on+the+mat&step=5", 1),
    "learn-bert": ("/learn?present=1&example=bert&text=The+bank+approved+the+loan.&layer=2&step=5", 1),
    "explore": ("/explore?present=1", 1),
    "compare": ("/compare?present=1&preset=trophy&show=diff", 1),
    "atlas": ("/atlas?present=1", 1),
    "cost": ("/cost?present=1&part=price", 1),
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with StreamlitServer() as server, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1600, "height": 1000})
        for name, (path, charts) in SHOTS.items():
            page.goto(server.url + path)
            wait_charts(page, charts, timeout_ms=120_000)
            page.wait_for_timeout(1500)  # the last chart's transition
            page.screenshot(path=str(OUT / f"{name}.png"))
            print(f"wrote {OUT / name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
