"""The train page (/train): a small GPT-2 trained from scratch in NumPy, live, and the moment a
previous-token head and an induction head form (issue 30; the training is core/train/); or, as its
second task (?task=translate), a small translator and the moment its cross-attention heads align
with the words (issue 38; core/translate/).

Modules, one job each:
- page.py      puts the page together for either task: the task, the run (recorded or your own),
               the live fragment (a slice of training and the redrawn charts every tick), the step
               control, the findings and the hand-off to explore; and the letter task's own parts
- task.py      what the frame needs from a task (TaskView)
- translate.py the translator's own parts: its curves, cross-attention maps, findings, hand-off
- session.py   this session's trainer per task (start, pause, reset, a slice of training under the
               slots every session shares), the recorded runs, the folder a model is saved to
- findings.py  what a letter run did, in words and the ablation chart
- links.py     the page's URL parameters (a dashboard.state.PageLinks table)
- widgets.py   the task and run pickers, the settings, Start / Pause / Reset, the step control
The figures are dashboard/charts/train.py and translate.py; the text dashboard/content/train.py and
train_translate.py.
"""

from dashboard.views.train.page import render

__all__ = ["render"]
