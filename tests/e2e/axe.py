"""axe-core in the browser tests: WCAG 2.1 A and AA rules run on the page as it stands, and the
violations as lines a person can read (issue 50).

axe-core is the engine `axe-playwright-python` bundles (its axe.min.js); it is injected into the page
once per page load (`axe` survives Streamlit's reruns, which never reload the document) and run with
only the rules tagged WCAG 2.0/2.1 level A or AA. `AxeSweep` gathers what every state of one page
(its views, models, sizes and modes) violates, so a test asserts once, naming each state that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import axe_playwright_python

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import COUNT_DRAWN_JS, wait_settled

AXE_JS = Path(axe_playwright_python.__file__).parent / "axe.min.js"
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
DESKTOP = (1280, 800)
PHONE = (390, 844)
# Runs axe with the WCAG A/AA rules on the whole document; returns the violations as plain objects
# (rule, impact, and per element its selector and axe's failure summary). Injects axe on first use.
RUN_JS = """async ([source, tags]) => {
  if (!window.axe) (0, eval)(source);
  const results = await window.axe.run(document, {
    runOnly: {type: "tag", values: tags},
    resultTypes: ["violations"],
  });
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), summary: n.failureSummary || ""})),
  }));
}"""
CRASHED = "[data-testid='stException']"
# True once the page has drawn what its first run sends: the script has finished, the main area shows
# an element (presenter mode has no page heading; a page the script has not reached yet shows none) and every
# Plotly chart on show is drawn (one in a closed expander or another tab is drawn when opened).
# wait_settled then waits for the layout to stop moving.
DRAWN_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  if (!document.querySelector("[data-testid='stMain'] [data-testid='stElementContainer']")) return false;
  return [...document.querySelectorAll(".js-plotly-plot")].every(
    (p) => !p.checkVisibility() || p.querySelector(".main-svg :is(.trace, g.hm, image)"));
}"""
# True once the window is `width` wide and the page on screen was drawn for its class (the screen
# probe, dashboard/screen.py, marks the body once its class is the one the run was drawn for).
DRAWN_FOR_JS = """([width, screen]) => innerWidth === width &&
  (!document.querySelector(".st-key-screen_probe") || document.body.dataset.screen === screen)"""
SCREEN = {DESKTOP: "wide", PHONE: "phone"}
MAX_NODES = 6  # elements listed per rule in a failure message; the count says how many more


@dataclass(frozen=True)
class Violation:
    """One axe rule broken in one state of a page, with the elements that break it."""

    state: str
    rule: str
    impact: str
    help: str
    nodes: tuple[tuple[str, str], ...]  # (selector, failure summary)

    def __str__(self) -> str:
        lines = [f"[{self.state}] {self.rule} ({self.impact}): {self.help} — {len(self.nodes)} element(s)"]
        for target, summary in self.nodes[:MAX_NODES]:
            lines.append(f"    {target}\n      " + " ".join(summary.split()))
        if len(self.nodes) > MAX_NODES:
            lines.append(f"    ... and {len(self.nodes) - MAX_NODES} more")
        return "\n".join(lines)


def axe_violations(page, state: str) -> list[Violation]:
    """The WCAG 2.1 A/AA violations axe finds on the page now, each labelled with `state`."""
    found = page.evaluate(RUN_JS, [AXE_JS.read_text(encoding="utf-8"), list(WCAG_TAGS)])
    return [
        Violation(
            state=state,
            rule=v["id"],
            impact=v["impact"] or "",
            help=v["help"],
            nodes=tuple((n["target"], n["summary"]) for n in v["nodes"]),
        )
        for v in found
    ]


@dataclass
class AxeSweep:
    """Every violation found on one page over its states; `check` runs axe at both sizes."""

    page_name: str
    found: list[Violation] = field(default_factory=list)
    states: list[str] = field(default_factory=list)

    def check(self, page, state: str) -> None:
        """axe on the page as loaded (at 1280x800), then on the same page turned to a 390x844 phone
        once it has been drawn again for a phone (dashboard/screen.py refits its charts) and settled."""
        for size in (DESKTOP, PHONE):
            if page.viewport_size != {"width": size[0], "height": size[1]}:
                page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_function(DRAWN_FOR_JS, arg=[size[0], SCREEN[size]], timeout=BROWSER_DEADLINE_MS)
            page.wait_for_function(DRAWN_JS, timeout=BROWSER_DEADLINE_MS, polling="raf")
            wait_settled(page, page.evaluate(COUNT_DRAWN_JS))
            label = f"{state} @ {size[0]}x{size[1]}"
            self.states.append(label)
            self.found.extend(axe_violations(page, label))

    def report(self) -> str:
        head = f"axe (WCAG 2.1 A/AA) on {self.page_name}: {len(self.found)} violation(s) in "
        head += f"{len({v.state for v in self.found})} of {len(self.states)} states checked"
        return "\n".join([head, *map(str, self.found)])

    def visit(self, page, url: str, state: str) -> None:
        """Open `url` in a new session at 1280x800, wait until it has settled, and check it (`check`).
        A page showing an exception fails here: axe would pass a page that never drew what it was sent."""
        page.set_viewport_size({"width": DESKTOP[0], "height": DESKTOP[1]})
        page.goto(url)
        page.wait_for_function(DRAWN_JS, timeout=BROWSER_DEADLINE_MS, polling="raf")
        wait_settled(page, page.evaluate(COUNT_DRAWN_JS))
        crashed = page.locator(CRASHED)
        assert not crashed.count(), f"{state}: {crashed.first.inner_text()}"
        self.check(page, state)

    def assert_clean(self, known: tuple[tuple[str, str, str], ...] = ()) -> None:
        """No violation, but for `known` ones: (state, rule, size) each written down with its reason in
        docs/accessibility.md's "Known not to work"; anything else fails."""
        self.found = [
            v for v in self.found if (v.state.split(" @ ")[0], v.rule, v.state.split(" @ ")[1]) not in known
        ]
        assert not self.found, self.report()


def known_by_state(known: tuple[tuple[str, str, str], ...]) -> set[tuple[str, str, str]]:
    """(state, size, rule) for each known (state, rule, size)."""
    return {(state, size, rule) for state, rule, size in known}


def sweep(page, base_url: str, page_name: str, states: list[tuple[str, str]]) -> AxeSweep:
    """Every (state label, path) of one page visited and checked; the caller asserts."""
    found = AxeSweep(page_name)
    for state, path in states:
        found.visit(page, base_url + path, f"{page_name} {state}")
    return found
