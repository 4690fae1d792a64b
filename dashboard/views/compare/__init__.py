"""The compare page: one model's attention on two sentences, a head at a time, and the heads whose
attention changed most where one word looks.

Modules, one job each:
- page.py     puts the page together: state, model, the two sentences, their results, the charts,
              the ranking
- links.py    the page's URL parameters (a dashboard.state.PageLinks table) and the link checks
- widgets.py  the presets and sentence boxes, the layer/head/focus pickers, the ranking table, and
              their callbacks
The alignment and ranking math is in core/measures/compare.py, the figures in dashboard/charts/compare.py,
the page's text and presets in dashboard/content/compare.py, the model picker in
dashboard/model_pick.py (shared with the atlas page).

Page state lives in st.session_state under "compare_*" keys and is mirrored into the URL at the end
of every run. User text never reaches markdown unescaped (dashboard.widgets.md), and never HTML.
"""

from dashboard.views.compare.page import render

__all__ = ["render"]
