"""The scripts and style blocks that issue 50's accessibility work sends to the browser carry no text
of the user's or of a link. Proof for tests/e2e/test_injection.py's ESCAPED_SINKS entries of
dashboard/chart_access.py, chart_hover.py, page_style.py and screen.py: each script is one constant
handed over once; the only data any of them receives is a width class from a fixed set; the
stylesheets are the product's own files; the width rule is formatted from an int alone."""

from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go
import pytest

from dashboard import chart_hover, page_style, screen
from dashboard.charts.phone import fit_figure
from tests.e2e.test_injection import PAYLOADS

ROOT = Path(__file__).resolve().parents[2]


def source(name: str) -> str:
    return (ROOT / "dashboard" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "script"),
    [("chart_access.py", "_MARKS_JS"), ("chart_hover.py", "_JS"), ("screen.py", "_JS")],
)
def test_each_component_script_is_one_constant(name, script):
    text = source(name)
    assert f"js={script})" in text and text.count("js=") == 1  # handed over once, as is
    assert re.search(rf"^{script} = \"\"\"", text, re.M), "defined once, as a plain string"
    assert f"{script}.format(" not in text and f'{script} = f"""' not in text


def test_the_hover_script_is_filled_with_the_module_constants_only():
    text = source("chart_hover.py")
    (filling,) = re.findall(r"_JS %= \{(.*?)\}", text, re.S)
    values = re.findall(r"\"\w+\":\s*([^,\n]+)", filling)
    assert values and all(re.fullmatch(r"[A-Z_]+", v.strip()) for v in values), values
    for name in values:  # each a number or a colour of the module's own
        value = getattr(chart_hover, name.strip())
        assert isinstance(value, int | float) or re.fullmatch(r"[#\w(),. %-]+", value), value


def test_only_the_screen_probe_takes_data_and_only_a_fixed_class():
    assert "data=" not in source("chart_access.py") and "data=" not in source("chart_hover.py")
    assert source("screen.py").count("data=") == 1 and 'data={"drawn": width_class()}' in source("screen.py")
    for agent in [*PAYLOADS.values(), "Mozilla/5.0 (iPhone) Mobile", "Android Tablet", ""]:
        assert screen.guess_from_user_agent(agent) in {*screen.SCREENS, screen.WIDE}


def test_a_reported_width_outside_the_classes_is_not_kept(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(screen.st, "session_state", state)
    for reported in [*PAYLOADS.values(), "phone", "tablet" + next(iter(PAYLOADS.values())), "wide"]:
        state[screen.PROBE_KEY] = {"width": reported}
        screen._remember()
        kept = state.get(screen.WIDTH_KEY)
        assert kept in {None, "phone", "wide"}, kept
    assert state[screen.WIDTH_KEY] == "wide"
    assert set(PAYLOADS.values()).isdisjoint({state[screen.WIDTH_KEY]})


def test_the_stylesheet_is_the_style_files_alone():
    css = page_style.stylesheet()
    files = sorted(page_style.STYLES.glob("*.css"))
    assert files and css.startswith("<style>") and css.endswith("</style>")
    assert css == "<style>\n" + "\n".join(p.read_text(encoding="utf-8") for p in files) + "\n</style>"
    assert "stylesheet()" in source("page_style.py") and "def stylesheet() ->" in source("page_style.py")


def test_the_width_rule_is_made_of_an_int():
    fig = go.Figure(go.Heatmap(z=[[0.1] * 30] * 30, x=[f"w{i}" for i in range(30)]))
    fit = fit_figure(fig, screen.SCREENS["phone"])
    assert isinstance(fit.min_width, int)
    rule = screen._least_width_css(-(-fit.min_width // 8) * 8)
    assert re.fullmatch(
        r"<style>@media \(max-width: 1023\.98px\) \{ \[[^<>]*\] \{ min-width: \d+px; \} \}</style>", rule
    )
    assert "st." + "html(_least_width_css(width))" in source("screen.py")  # split: not a sink itself
    assert "width = -(-fit.min_width // 8) * 8" in source("screen.py")
