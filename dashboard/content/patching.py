"""Compare's "which heads carry the difference" (activation patching): its titles, the rules it states,
and the sentences it fills from the measured grids. Data, not code: dashboard/views/compare/patching.py
fills the {fields}. Layers and heads are written from 1.
"""

from __future__ import annotations

TITLE = "Which heads carry the difference"
SETTINGS = "Patching: the two inputs and the answer read"  # presenter mode's closed panel
INTRO = (
    "Attention weights show where a head looks, not what it passes on. Here the model reads sentence 1 "
    "again while one component is copied in from its run on sentence 2; the grid gives the share of "
    "the change in the model's answer that this one component brings across: 0 = none of it, 1 = all "
    "of it (below 0: it pushes the other way). This is activation patching."
)

# ---- what is measured --------------------------------------------------------------------------------
METRIC_PRONOUN = (
    "The answer read: the pronoun test after layer {layer}, cos(“{focus}”, “{target}”) − "
    "cos(“{focus}”, “{rival}”) in the model's vectors."
)
METRIC_OPTIONS = (
    "The answer read: log p(“{a}”) − log p(“{b}”) for the next token after “… {tail}” (each "
    "continuation by its first token)."
)
METRIC_SHIFT = (
    "The answer read: how far the next-token distribution after the text moves from sentence 1's "
    "(total variation: 0 for sentence 1 itself). Type two continuations above to read a choice instead."
)
VALUES = (
    "Sentence 1 gives **{clean:+.3f}**, sentence 2 **{corrupt:+.3f}**: a change of {change:+.3f} to carry."
)
FLIPS = "The answer flips: in sentence 1 {one}, in sentence 2 {two}."
NO_FLIP = (
    "The answer does not flip: in both sentences {one}. The grids show which components carry the "
    "shift that remains."
)
MEANS_PRONOUN = ("“{focus}” is nearer “{target}”", "“{focus}” is nearer “{rival}”")
MEANS_OPTIONS = ("the model prefers “{a}”", "the model prefers “{b}”")
DIFFER = "The two inputs are {n} tokens each and differ at token {where} (counted from 1)."
MORE = " and {n} more"
TARGET_LABEL = "Target word"
RIVAL_LABEL = "Rival word"
LAYER_LABEL = "Read after layer"
PRONOUN_HELP = (
    "The word the focus word should come closer to in sentence 1 (target), and the other candidate (rival)."
)

# ---- reasons it cannot run ---------------------------------------------------------------------------
NO_FOCUS = "Patching reads the focus word's vector: choose a focus word above."
FEW_WORDS = "Sentence 1 needs two other words that occur once, a target and a rival, for the pronoun test."
SAME_WORDS = "Choose two different words as the target and the rival."
UNPATCHABLE = "Patching cannot run on this pair: {reason}."
TOO_LONG = "Patching reads at most {limit} tokens here, and these inputs are {n}: shorten the sentences."
NO_ENGINE = "Patching runs on the NumPy engine, which cannot load this model: {reason}"

# ---- running ----------------------------------------------------------------------------------------
HEADS_BUTTON = "Patch every head ({runs} runs)"
HEADS_ASK = (
    "This model has {runs} heads: patching each one alone takes a while on a laptop, so it runs when you ask."
)
POSITIONS_BUTTON = "Trace every layer and position ({runs} runs)"
POSITIONS_ASK = (
    "Causal tracing: the hidden state entering each layer, at each token, copied in alone. It "
    "shows where along the layers the difference travels."
)
PROGRESS = "Patched {done} of {total} runs…"

# ---- the heads grid ---------------------------------------------------------------------------------
HEADS_CHART = "Share of the difference each head restores"
POSITIONS_CHART = "Share each hidden state restores (causal tracing)"
BAR = "restored"
LAYER_AXIS = "layer (1–{n})"
HEAD_AXIS = "head (1–{n})"
POSITION_AXIS = "token"
EMBEDDINGS = "embeddings"
AFTER_LAYER = "after layer {n}"
HEADS_CAPTION = (
    "Each cell: one head's output (its weighted sum, before W^O) at every token copied from sentence "
    "2's run into sentence 1's, alone. Computed by the NumPy engine, which equals the library within 1e-5."
)
POSITIONS_CAPTION = (
    "Row “after layer k”: the hidden state entering layer k + 1, at one token, copied from sentence "
    "2's run into sentence 1's, alone."
)
TOP_TITLE = "The heads that restore most"
TOP_COLUMNS = ("layer", "head", "restored")  # most first: the order is the rank
RESTORED_HELP = "The share of the difference this head restores, copied in alone (as in the grid)."
LINK_COLUMN = "→ “{word}”"
LINK_HELP = "This head's attention from “{focus}” to “{word}” (of its row, in sentence 1)."
READS_COLUMN = "reads most"
READS_HELP = "The token “{focus}” gives the most attention to in this head (in sentence 1)."
OPEN_BUTTON = "Layer {layer}, head {head}: show its attention"

# ---- what the grids say -----------------------------------------------------------------------------
CARRIED = (
    "**{n} head{s}** restore{verb} at least {least:.0%} of the difference each (cells of {least:.2f} or "
    "more), in layer{ls} {layers}; the most, **layer {layer}, head {head}**, restores **{top:.0%}**."
)
SPREAD = (
    "**No single head restores {least:.0%} of the difference** (the most: layer {layer}, head {head}, "
    "{top:.0%}): the model spreads it over many heads, or carries it outside attention (the MLPs and "
    "the residual stream)."
)
PUSH_BACK = (
    "**{n} head{s}** move{verb} the answer the other way by at least {least:.0%} of the difference each "
    "(cells of −{least:.2f} or less; the most, layer {layer}, head {head}, {low:.0%})."
)
LINK = (
    "The head with the clearest “{focus}” → “{target}” attention, **layer {layer}, head {head}** "
    "({weight:.2f} of its row), restores **{restored:.0%}** of the difference: {verdict}"
)
LINK_CARRIES = "its attention and its effect agree."
LINK_WEAK = "looking at “{target}” is not the same as carrying the difference."
TRACE_PART = "{layers}: at “{token}” ({low:.0%}–{high:.0%})"
TRACE = "Where the difference travels: {parts}."
OVERSHOOT = (
    "Over 100%: copied in alone, that one component moves the answer past sentence 2's own value, "
    "an overshoot."
)
BELOW_ZERO = (
    "Below 0%: copied in alone, that component moves the answer away from sentence 2's value, to "
    "further from it than sentence 1's own answer."
)
