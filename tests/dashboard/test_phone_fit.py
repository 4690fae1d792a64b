"""A figure fitted to a phone or a tablet (dashboard/charts/phone.py) and the screen's seam
(dashboard/screen.py), without a browser (issue 50). The browser test (tests/e2e/test_phone_browser.py)
checks the drawn result."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from dashboard import screen
from dashboard.charts.explore import head_heatmap
from dashboard.charts.heatmap import matrix_heatmap
from dashboard.charts.phone import (
    CHAR_EM,
    MIN_CELL_PX,
    NUMBER_PAD_PX,
    PHONE,
    TABLET,
    columns,
    fit_figure,
)

WORDS = "the animal didn ' t cross the street because it was too tired to walk home".split()


def _head(n: int, title: str = "Layer 1, head 1") -> go.Figure:
    z = np.random.default_rng(n).dirichlet(np.ones(n), n)
    return head_heatmap(z, (WORDS * (n // len(WORDS) + 1))[:n], title=title)


def _plot_px(fig: go.Figure, min_width: int | None, screen_px: int) -> float:
    """The cells' width at the narrowest screen: the chart's width less the margins Plotly would
    keep, taken generously (the figure's own margins and its row labels at 0.6 em a character)."""
    width = max(min_width or 0, screen_px)
    trace = fig.data[0]
    font = fig.layout.yaxis.tickfont.size or fig.layout.font.size
    labels = max(len(str(y)) for y in trace.y) * 0.6 * font + 8
    labels += 1.6 * font if fig.layout.yaxis.title.text else 0
    return width - max(fig.layout.margin.l, labels) - max(fig.layout.margin.r, 30)


@pytest.mark.parametrize("n", [8, 17, 40])
@pytest.mark.parametrize("screen_class", [PHONE, TABLET])
def test_cells_are_at_least_14_px_wide(n, screen_class):
    fit = fit_figure(_head(n), screen_class)
    assert _plot_px(fit.figure, fit.min_width, screen_class.content_px) / n >= MIN_CELL_PX


def test_a_phone_gets_the_colour_bar_below_and_every_column_label():
    fig = _head(17)
    fit = fit_figure(fig, PHONE)
    bar, axis = fit.figure.data[0].colorbar, fit.figure.layout.xaxis
    assert bar.orientation == "h" and bar.yanchor == "top" and bar.y < 0  # under the cells
    assert fit.figure.layout.height > fig.layout.height  # the bar's room added, the cells' kept
    assert axis.dtick == 1 and axis.tickangle == -90  # all 17 labels, upright
    assert fit.min_width is not None and fit.min_width > PHONE.content_px  # its box scrolls


def test_numbers_are_dropped_where_a_cell_is_narrower_than_them():
    values = np.random.default_rng(0).normal(size=(6, 8))  # "+0.2642": 7 characters in a ~35 px cell
    fig = matrix_heatmap(values, WORDS[:6], [str(i) for i in range(1, 9)], title="X", col_title="dim")
    assert fig.data[0].texttemplate  # printed on a laptop
    fit = fit_figure(fig, PHONE)
    assert fit.figure.data[0].texttemplate is None and fit.figure.data[0].text is None


def test_numbers_that_fit_are_kept_in_a_font_that_fits():
    fig = _head(4)  # 4 columns of "0.25"
    fit = fit_figure(fig, PHONE)
    trace = fit.figure.data[0]
    assert trace.texttemplate == "%{text}"
    cell = _plot_px(fit.figure, fit.min_width, PHONE.content_px) / columns(trace)
    assert 4 * CHAR_EM * trace.textfont.size + NUMBER_PAD_PX <= cell


def test_a_wide_screen_gets_the_figure_itself():
    fig = _head(17)
    fit = fit_figure(fig, None)
    assert fit.figure is fig and fit.min_width is None


def test_the_figure_given_is_left_as_it_was():
    """A figure may be cached and shared with a laptop's session: fitting works on a copy."""
    fig = _head(17)
    before = fig.to_json()
    fit_figure(fig, PHONE)
    assert fig.to_json() == before


def test_a_long_title_is_broken_over_lines():
    title = "Layer 1, head 1 · words merged · [CLS]/[SEP] hidden, rows renormalised"
    fig = _head(6, title)
    fit = fit_figure(fig, PHONE)
    assert "<br>" in fit.figure.layout.title.text
    assert fit.figure.layout.title.text.replace("<br>", " ") == title
    assert fit.figure.layout.margin.t > fig.layout.margin.t


def test_a_chart_without_a_heatmap_is_not_copied():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"title": {"text": "Loss"}})
    assert fit_figure(fig, PHONE).figure is fig


def test_hundreds_of_columns_are_not_widened():
    """512 columns at 14 px would be a 7000 px strip to scroll: drawn as on any screen (a known limit)."""
    assert fit_figure(_head(120), PHONE).min_width is None


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148 Safari/604.1", "phone"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/120.0 Mobile Safari/537.36", "phone"),
        ("Mozilla/5.0 (Linux; Android 14; SM-X710) Chrome/120.0 Safari/537.36", "tablet"),
        ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0 Safari/537.36", "wide"),
    ],
)
def test_the_user_agent_guesses_the_first_run(agent, expected):
    assert screen.guess_from_user_agent(agent) == expected


def test_fit_chart_on_a_laptop_hands_back_the_same_figure(monkeypatch):
    monkeypatch.setattr(screen, "screen_ui", lambda: None)
    monkeypatch.setattr(screen, "width_class", lambda: "wide")
    fig, kwargs = _head(17), {"on_select": "ignore"}
    assert screen.fit_chart(fig, kwargs) == (fig, kwargs)


def test_fit_chart_on_a_phone_marks_the_least_width(monkeypatch):
    styles = []
    monkeypatch.setattr(screen, "screen_ui", lambda: None)
    monkeypatch.setattr(screen, "width_class", lambda: "phone")
    monkeypatch.setattr(screen.st, "html", styles.append)
    _, kwargs = screen.fit_chart(_head(17), {})
    width = kwargs["width"]
    assert width % 8 == 0 and width >= fit_figure(_head(17), PHONE).min_width
    assert styles == [screen._least_width_css(width)]
    assert f"[width='{width}px']" in styles[0] and f"min-width: {width}px" in styles[0]


def test_plots_side_by_side_keep_their_width_on_a_phone():
    """Two line charts side by side in 358 px had their tick labels run together: on a phone each
    keeps a least width (the chart scrolls in its box); plots one above another need none."""
    beside = make_subplots(rows=1, cols=2)
    above = make_subplots(rows=2, cols=1)
    for fig in (beside, above):
        fig.add_trace(go.Scatter(x=[1, 2], y=[1, 2]), row=1, col=1)
    assert fit_figure(beside, PHONE).min_width >= 2 * 240
    assert fit_figure(above, PHONE).min_width is None
