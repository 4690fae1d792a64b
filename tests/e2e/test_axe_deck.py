"""axe-core (WCAG 2.1 A/AA) on the decks: each deck's first slide as its link opens it (presenter
mode), and one in page mode, at 1280x800 and 390x844 (issue 50). A slide is a page's view, checked
on its page's own test; here, the deck's bar and each deck's first screen."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.axe import sweep

DECKS = sorted(path.stem for path in (Path(__file__).parents[2] / "dashboard/content/decks").glob("*.json"))
STATES = [
    *((f"{deck} · slide 1", f"/?deck={deck}&slide=1") for deck in DECKS),
    ("attention · slide 2 · page mode", "/?deck=attention&slide=2&present=0"),
]


def test_axe_deck(page, app_server):
    sweep(page, app_server.url, "deck", STATES).assert_clean()
