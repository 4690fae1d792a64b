"""The head atlas page (issue 16 §2): every head of a model measured over a built-in corpus (or the
user's own sentence), as layers × heads grids, a sortable table and a role per head, after Clark et
al. (2019), "What Does BERT Look At?".

URL parameters (links.py): model, engine, text (the user's sentence), on (corpus | sentence), stat
(role, or one of core.measures.atlas.STATS), roles (the role filter, e.g. "cls,prev"). Layers and heads are
0-indexed in links and shown from 1.

Modules, one job each:
- page.py     puts the page together: state, model, what is measured, the atlas, then the views
- links.py    the page's URL parameters (a dashboard.state.PageLinks table)
- compute.py  the corpus atlas (memory store, disk cache, computed with a progress bar) and the
              atlas of one sentence
- widgets.py  the controls, the grid and its click-to-open link, the table, the explanations
- translator.py  the translator's atlas (`?model=translator`: three kinds of heads, the "aligner"
              role), its own page below the shared model picker, branched to from page.py
The text and the corpus live in dashboard/content/atlas.py (atlas_corpus.txt), the statistics in
core/measures/atlas.py, the figures in dashboard/charts/atlas.py.
"""

from dashboard.views.atlas.page import render

__all__ = ["render"]
