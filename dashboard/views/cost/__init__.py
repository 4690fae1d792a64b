"""The cost page: what attention costs, measured live, and the efficient variants the source
article names, tried on a real head and in the whole model.

Modules, one job each:
- page.py     puts the page together: state, model, then the parts (the price; one head; the
              whole model; one more token, a decoder's), one at a time in presenter mode
- generation.py  part 4: one more token with the KV cache and without, the cache's size at n
- links.py    the page's URL parameters (a dashboard.state.PageLinks table) and the checks that
              wait for the model and the sentence
- widgets.py  the sentence, layer/head, variant and parameter pickers, the presenter part switch
- measure.py  the measurements, shared by every session of a server (st.cache_resource): the price
              curves (resumable, a progress bar), each variant's timings, the whole-model sweeps,
              a decoder's one more token
The variants are core/cost/variants.py, their cost core/cost/price.py, the whole-model runs
core/cost/variant_model.py; the figures dashboard/charts/cost.py; the text dashboard/content/cost.py.

Page state lives in st.session_state under "cost_*" keys and is mirrored into the URL at the end of
every run. User text never reaches markdown unescaped (dashboard.widgets.md), and never HTML.
"""

from dashboard.views.cost.page import render

__all__ = ["render"]
