"""The learn page: one attention layer step by step, from a toy model, a worked example or a real BERT.

page.py puts it together; widgets.py draws the controls; sources.py says what each source adds;
steps.py is the one renderer of the seven steps; checks.py lays out a worked example's verdicts;
compute.py caches; links.py keeps the view in the URL. The text lives in dashboard/content/learn.py.
"""

from dashboard.views.learn.page import render

__all__ = ["render"]
