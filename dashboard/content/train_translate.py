"""The train page's text for its second task, the translator (core/translate/, issue 38): what it
shows, its labels, and the statements the page makes about a run (filled in from
core/translate/findings.py's measurements). The controls' words the two tasks share (Start, Pause,
Steps, the status line) are in dashboard/content/train.py. Markdown; nothing a user typed goes in."""

from __future__ import annotations

TASK_LABEL = "Task"
TASKS = {"letters": "Induction (letter GPT-2)", "translate": "Alignment (translator)"}
TASK_CAPTIONS = {
    "letters": "A small GPT learns to copy repeated letters.",
    "translate": "A small encoder-decoder learns English → French.",
}

TITLE = "Watch heads align: train a translator from scratch"
INTRO = (
    "An encoder-decoder (BART's layout, much smaller), trained here in NumPy from random weights, on "
    "sentence pairs from a small grammar: *the black cat sees the dog* → *le chat noir voit le chien*. "
    "French puts most adjectives after the noun, turns *not* into *ne … pas* and *near the* into *près "
    "de* or *près du*, so the words do not line up one to one. The decoder reads the English through "
    "**cross-attention**: while it writes each French word, each head weighs the English words. Nobody "
    "tells a head which English word a French word renders; the grammar knows it, so the page can "
    "score each head's **alignment**: how often its largest weight falls on the right English word. "
    "Follow the loss, the share of unseen sentences translated exactly, and every head's alignment. "
    "Layers and heads are numbered from 1 on screen."
)
RECORDED = (
    "**Recorded** run: {layers} encoder and {layers} decoder layers, {heads} heads each, width {width}, "
    "{steps:,} steps, learning rate {lr:g}, seed {seed} (trained in {seconds:.0f} s). `{command}` trains "
    "it again."
)
RECORDED_SHORT = (
    "**Recorded** run: {layers} + {layers} layers, {heads} heads each, {steps:,} steps, learning rate "
    "{lr:g}, seed {seed}."
)
COMMAND = "python -m core train --task translate --seed 0 --out models/translator"
HEADS_LABEL = "Heads per layer"

CURVES_TITLE = "What the translator learns, step by step"
LOSS = "loss"
LOSS_AXIS = "loss (nats per word)"
EXACT = "exact match"
SCORE_AXIS = "held-out share"
BEST = "best"
LEVEL = "{mark:.0%} mark"
STEP_AXIS = "training step"
CURVES_CAPTION = (
    "Top: the loss on {n} held-out sentences (their adjective-noun pairs never appear in training). "
    "Bottom, black squares: the share of them translated word for word. Coloured lines: each "
    "cross-attention head's alignment on them (layer 1 solid, layer 2 dotted; the best head thick). "
    "Dotted grey: the {mark:.0%} mark the statements below measure against."
)

MAPS_TITLE = "Each head's cross-attention on the probe at step {step:,}"
ROW_AXIS, COL_AXIS = "writing (French)", "reading (English)"
MAPS_CAPTION = (
    "The probe: “{source}” → “{target}”. Rows: the French word being written (the last row writes "
    "the end); columns: the English word read. Red boxes: the English words the grammar links each "
    "French word to (“ne” and “pas” both to “not”). A head that aligns has its darkest cell of each "
    "row in a red box. Above each map: the head's alignment on the held-out sentences at this step; "
    "★ the best."
)

FIRST_RIGHT = (
    "**The translations came first:** the exact match reached {mark:.0%} at step **{right:,}**; a head "
    "({head}) aligned {mark:.0%} of the words at step **{aligned:,}**, {gap:,} steps later."
)
FIRST_ALIGNED = (
    "**The alignment came first:** a head ({head}) aligned {mark:.0%} of the words at step "
    "**{aligned:,}**, {gap:,} steps before the translations reached {mark:.0%} exact match (step "
    "**{right:,}**)."
)
TOGETHER = (
    "**The alignment and the translations came together**, at step **{right:,}**: a head ({head}) "
    "aligned {mark:.0%} of the words and {mark:.0%} of the sentences came out right."
)
ONLY_ALIGNED = (
    "A head ({head}) aligned {mark:.0%} of the words at step **{aligned:,}**; the translations are not "
    "right yet: {exact} ({mark:.0%} counts)."
)
ONLY_RIGHT = (
    "The translations reached {mark:.0%} exact match at step **{right:,}**, but no head aligns "
    "{mark:.0%} of the words yet (the best: {best:.0%}, at step {best_step:,})."
)
NEITHER = (
    "Not yet: no head aligns {mark:.0%} of the words (the best: {a_best:.0%}, at step {a_step:,}), and "
    "{exact}; {mark:.0%} counts for both."
)
EXACT_NONE = "no held-out sentence comes out exactly right yet"
EXACT_BEST = "the exact match is at most {best:.0%} (at step {step:,})"
EARLY_AHEAD = (
    "At step **{step:,}**, with only {exact:.0%} of the sentences right, the best head already aligned "
    "**{align:.0%}** of the words: the heads found where to look before the words came out right."
)
EARLY_BEHIND = (
    "At step **{step:,}**, with only {exact:.0%} of the sentences right, the best head aligned only "
    "{align:.0%} of the words: the alignment grew with the translations."
)
HALVED = (
    "The loss had halved by step **{step:,}** ({first:.2f} → {then:.2f} nats per word); at step "
    "{now_step:,} it is {now:.2f}."
)
NOT_HALVED = (
    "The loss has not halved yet: {first:.2f} → {now:.2f} nats per word (lowest {best:.2f}, at step "
    "{best_step:,})."
)
BEST_HEAD = (
    "**Layer {layer}, head {head}** aligns best at step {step:,}: its largest weight falls on the right "
    "English word for **{accuracy:.0%}** of the French words."
)
WEAK = "Not aligning (under {most:.0%}): {heads}."
WEAK_LAYER = " None of layer {layer}'s heads aligns."
ALL_WEAK = "No head aligns {most:.0%} of the words yet."
NO_WEAK = "Every head aligns at least {most:.0%} of the words."

OPEN = "Open the translator on explore"
OPEN_HELP = "Type an English sentence and see each head's cross-attention, the grammar's alignment outlined."
OPEN_RECORDED_CAPTION = "The recorded translator, as it ships with the product."
