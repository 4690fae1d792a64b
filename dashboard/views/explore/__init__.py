"""The explore page: a pretrained BERT's attention heads, offline by default.

Views (URL `view`): head (one head as a heatmap), lines (bertviz-style, one layer), model (all
layers × heads as thumbnails) and focus (one token in every head, plus "find the head").

Modules, one job each:
- page.py     puts the page together: state, model, sentence, result, then one view
- links.py    the page's URL parameters (a dashboard.state.PageLinks table), what a link asks for
              and what is checked once the model and text are known
- loading.py  the sidebar's model picker and engine switch, loading with a fallback, parity badge
- widgets.py  the sentence, the options, the layer/head and token pickers, and their callbacks
- results.py  the session's result (hosted mode's new-texts-per-minute bound), the cached grid
- views.py    the four views' drawing code
The examples gallery and the captions live in dashboard/content/explore.py; engine loading and
caching in dashboard/engines.py, shared with the learn page.

Page state lives in st.session_state under "explore_*" keys and is mirrored into the URL at the end
of every run, so a copied link reproduces the view. User text never reaches markdown unescaped
(dashboard.widgets.md), and never reaches HTML. Hosted mode (dashboard/hosted.py, read every run):
only allowlisted models and torch-free engines, fewer tokens and characters, a line cap in the
lines view, new texts per minute bounded.
"""

from dashboard.views.explore.page import render

__all__ = ["render"]
