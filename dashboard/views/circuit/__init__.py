"""The circuit page (issue 52 §4): the indirect-object circuit found in SmolLM2 by path patching, drawn
as a graph (layers top to bottom, heads as nodes coloured and shaped by class, edges weighted by the
path-patching effect), with statements computed from it, each head opened on explore, the grids on
request, presenter mode and the deck `circuit` ("How heads work together"). After Wang et al. 2022,
"Interpretability in the Wild: a Circuit for Indirect Object Identification in GPT-2 small"
(arXiv 2211.00593), and Goldowsky-Dill et al. 2023, "Localizing Model Behavior with Path Patching"
(arXiv 2304.05969).

URL parameters (links.py): view (graph | direct | q | k | v | logit | gpt2), prompt, layer, head
(0-indexed in links, shown from 1), present.

Modules, one job each:
- page.py      puts the page together: state, the circuit, the view, then explore's link, the table,
               the record and the runs on request
- data.py      the circuit's file read and checked (no streamlit)
- findings.py  the statements, computed from the circuit, and its edges (no streamlit)
- views.py     the views: one figure each, with its statements beside it
- widgets.py   the view switch, prompt and head pickers, explore's link, the heads' table, the record
- links.py     the page's URL parameters and the explore link
- compute.py   the shipped file, the search run again, the direct effect on one's own sentence
- own.py       the two runs on request (asking first, counting)
The text lives in dashboard/content/circuit.py, the figures in dashboard/charts/circuit.py, the search
in core/measures/circuit.py (core/measures/paths.py, core/measures/ioi.py).
"""

from dashboard.views.circuit.page import render

__all__ = ["render"]
