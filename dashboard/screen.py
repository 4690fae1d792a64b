"""What the browser tells about the screen, and charts fitted to it (issue 50: the phone layout).

Owned by the phone-layout work; `fit_chart` is called by dashboard.widgets.chart for every chart.
"""

from __future__ import annotations

import plotly.graph_objects as go


def fit_chart(fig: go.Figure, kwargs: dict) -> tuple[go.Figure, dict]:
    """The figure and st.plotly_chart's arguments as this screen should draw them."""
    return fig, kwargs
