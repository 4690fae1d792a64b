"""What a view says before and during a long piece of work (dashboard/long_work.py): the line that
asks first, the time left under a counting bar, and how a number of seconds is written. Data, not
code: dashboard/long_work.py fills the {fields}.
"""

from __future__ import annotations

# "<what> takes about <time> on this machine (<count> runs of the model)." A view's `what` starts with
# a capital and names the work ("Switching off each of the 270 heads in turn").
ASK = "{what} takes about {about} on this machine ({runs:,} runs of the model)."
ASK_ONE_RUN = "{what} takes about {about} on this machine."
BUTTON_HELP = "Starts the work now; a bar counts it. The result is kept for this input."

# Under a counting bar, after the view's own "Ablated 40 of 270 heads".
LEFT = " · about {about} left"

# How a number of seconds is written ("about 6 s", "about 2 min").
SECONDS = "{n} s"
MINUTES = "{n} min"

# ---- explore's induction view (its own text is in dashboard/content/decoder.py) ----------------------
INDUCTION_ASK = "Running {n} random tokens, then again with up to {top} induction heads off,"
INDUCTION_BUTTON = "Run the induction test (2 runs)"
INDUCTION_PROGRESS = "Ran {done} of {total} runs"
