"""The train page's teaching text: what training shows, the controls' labels, and the statements the
page makes about a run (filled in from core/train/findings.py's measurements)."""

from __future__ import annotations

TITLE = "Watch heads form: train a GPT from scratch"
INTRO = (
    "A GPT-2-shaped model, trained here in NumPy from random weights, on letters: each sequence repeats "
    "a random cycle of 3 to 12 different letters (*qfwk qfwk qf…*). Once the cycle has been seen, each "
    "letter can be predicted by finding the current letter earlier and copying what came next there. "
    "Nobody tells a head what to do. Follow the loss on the **repeats** against the loss on **first "
    "occurrences**, and each head's scores: Olsson et al. (2022) saw a *previous-token* head in layer 1 "
    "and an *induction* head in layer 2 form as the repeats' loss dropped. The statements below say, "
    "measured, what this run did. Layers and heads are numbered from 1 on screen."
)

SOURCE_LABEL = "Run"
SOURCES = {"recorded": "Recorded run", "own": "Train your own"}
SOURCE_HELP = (
    "The recorded run ships with the product: the heads form at once with the step control. "
    "Train your own runs live here, with your settings."
)
RECORDED = (
    "**Recorded** run: {layers} layers, {heads} heads, {steps:,} steps, learning rate {lr:g}, "
    "seed {seed} (trained in {seconds:.0f} s). It is recreated exactly by `{command}`."
)
NO_RECORDED = "This copy of the product has no recorded run: train your own."

SETTINGS = "Training settings"
LAYERS_LABEL = "Layers"
LAYERS_HELP = "With one layer no induction head can form: it needs two heads in a row."
HEADS_LABEL = "Heads per layer"
STEPS_LABEL = "Steps"
LR_LABEL = "Learning rate"
SEED_LABEL = "Seed"
SEED_HELP = "The initial weights and the data. The same seed and settings give the same run."

START, RESUME, PAUSE, RESET = "Start", "Resume", "Pause", "Reset"
START_HELP = "Train with these settings (a new run when they differ from the paused one)."
STATUS = "Step **{step:,}** of {steps:,} · {seconds:.1f} s of training"
STATUS_RUNNING = " · training…"
STATUS_DONE = " · done"
PRESS_START = "Press **Start** to train a model with these settings; the charts grow as it learns."
WAITING = (
    "Waiting for a turn: {busy} runs are training on this server right now, at most {most} at a time "
    "so that every page stays quick. Yours goes on in a moment."
)
CAPPED = (
    "This public demo trains at most {steps:,} steps and {heads} heads, so that a class can train at once."
)

CURVES_TITLE = "What the model learns, step by step"
LOSS_AXIS = "loss (nats)"
LOSS_FIRST = "first occurrences"
LOSS_REPEAT = "repeats"
PREVIOUS_AXIS = "previous-token"
INDUCTION_AXIS = "induction"
STEP_AXIS = "training step"
HEAD_NAME = "L{layer} H{head}"
SHOWN_STEP = "step shown"

STEP_LABEL = "Snapshot (training step)"
PREV, NEXT = "Previous", "Next"
MAPS_TITLE = "Each head's attention on the probe at step {step:,}"
MAPS_CAPTION = (
    "The probe: <s>, {n} random letters, the same {n} again. Rows: the letter that attends (from); "
    "columns: the letter attended to (to). A **previous-token** head is the line just below the "
    "diagonal; an **induction** head is the stripe {shift} cells further left in the second half: each "
    "letter looks at what followed its earlier occurrence. Layer = row of maps (L1, L2), head = column."
)
FROM_AXIS, TO_AXIS = "from", "to"

FINDINGS = "What happened, measured at step {step:,}"
FINDINGS_ELSEWHERE = (
    "These statements and the chart below are about step {last:,}, the run's last recorded step; the "
    "maps above show step {shown:,}."
)
FINDINGS_NOT_YET = "The statements appear when the run is done (or paused: press Pause to see them so far)."
DROP = (
    "The repeats' loss fell fastest between steps **{start:,}** and **{end:,}**: from {before:.2f} to "
    "{after:.2f} nats."
)
DROP_WITH = (
    " The best induction score rose fastest there too ({ind_before:.2f} → {ind_after:.2f}): the heads "
    "and the loss changed together."
)
DROP_WITHOUT = " The best induction score did not rise fastest there ({ind_before:.2f} → {ind_after:.2f})."
NO_DROP = "The repeats' loss did not fall: the model has not learned to copy yet."
PREVIOUS_HEAD = (
    "**Layer 1, head {head}** is the previous-token head: {score:.0%} of its attention goes to the "
    "token just before."
)
NO_PREVIOUS = (
    "No layer-1 head is a previous-token head yet (the best puts {score:.0%} of its attention on the "
    "token just before; {minimum:.0%} counts)."
)
INDUCTION_HEADS = (
    "**{heads}** {verb} induction {noun}: a prefix-matching score of at least {minimum:.2f} on the probe "
    "(the start token, {length} different letters, the same {length} again){highest}."
)
INDUCTION_HIGHEST = "; the highest, **layer {layer}, head {head}**, scores {score:.2f}"
INDUCTION_ONE = "; it scores {score:.2f}"
INDUCTION_ELSEWHERE = (
    "Explore's induction view names and switches off induction heads by the same score and the same "
    "{minimum:.2f}, on random tokens instead of the probe: which head scores highest can change with the "
    "tokens."
)
NO_INDUCTION = (
    "No head after layer 1 is an induction head yet (best prefix-matching score {score:.2f}; "
    "{minimum:.2f} counts)."
)
ONE_LAYER = (
    "With **one layer** no induction head can form: finding where a letter stood before and reading "
    "what followed needs two heads in a row. Instead: the repeats' loss went from {first:.2f} to "
    "{last:.2f} nats (first occurrences: {first_fresh:.2f} → {last_fresh:.2f}); the best prefix-matching "
    "score is {score:.2f}."
)
ABLATION_TITLE = "The repeats' loss with each head cut (nats; dashed: every head in place, {baseline:.2f})"
ABLATION_AXIS = "head"
ABLATION_BIGGEST = (
    "Cutting **{name}** hurts the repeats most: their loss goes from {baseline:.2f} to {loss:.2f} nats."
)
ABLATION_SPINNER = "Cutting each head in turn…"

OPEN = "Open this model on explore"
OPEN_HELP = "Find-the-head, ablation, the induction test and the atlas on the model trained here."
OPEN_CAPTION = "Saved for this session only, in a temporary folder on this server."
OPEN_RECORDED_CAPTION = "The recorded model, as it ships with the product."
SAVE_FAILED = "Could not save the model for explore ({reason})."
STEP_NOTE = (
    "The link's `step` value {asked} is outside this run's steps {first:,}–{last:,}; showing step "
    "{nearest:,}, the nearest snapshot."
)
ABLATION_EXPANDER = "What cutting each head does to the repeats' loss"
