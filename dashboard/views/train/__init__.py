"""The train page (/train): a small GPT-2 trained from scratch in NumPy, live, and the moment a
previous-token head and an induction head form (issue 30; the training is core/train/).

Modules, one job each:
- page.py      puts the page together: the run (recorded or your own), the live fragment (a slice
               of training and the redrawn charts every tick), the step control, the findings and
               the hand-off to explore
- session.py   this session's trainer (start, pause, reset, a slice of training under the slots
               every session shares), the recorded run, the folder a model is saved to for explore
- findings.py  what the run did, in words and the ablation chart
- links.py     the page's URL parameters (a dashboard.state.PageLinks table)
- widgets.py   the run picker, the settings, Start / Pause / Reset, the step control
The figures are dashboard/charts/train.py; the text dashboard/content/train.py.
"""

from dashboard.views.train.page import render

__all__ = ["render"]
