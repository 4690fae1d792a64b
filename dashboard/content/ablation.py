"""The explore page's ablation view: its own text. Data, not code: dashboard/views/explore/ablation.py
fills the {fields} and draws it. Captions go through st.caption / st.markdown, so literal brackets
are escaped (\\[CLS\\]); user words are escaped by the view before they are put in.

Layers and heads are shown counted from 1 and the text says so; links count them from 0.
"""

from __future__ import annotations

# ---- what is measured ------------------------------------------------------------------------------

# The page names the embedding in these words (core/measures/ablation.py computes it).
EMBEDDING_BUNDLED = (
    "the sentence embedding as sentence-transformers pools this model: the mean of the last layer's "
    "hidden states over every token (\\[CLS\\] and \\[SEP\\] included), L2-normalised"
)
EMBEDDING_OTHER = (
    "the mean-pooled last layer: the mean of the last layer's hidden states over every token "
    "(\\[CLS\\] and \\[SEP\\] included), L2-normalised. This model was not trained to make sentence "
    "embeddings; the pooled vector stands in for its output"
)

GRID_CAPTION = (
    "**Switch off one head, run the sentence again, and see how far the output moves.** Each cell is one "
    "head (layer and head counted from 1). The output is {embedding}. The number is 1 − cos(embedding "
    "with that head switched off, embedding as it is): 0 means nothing moved. The red boxes are the "
    "heads chosen to be switched off together."
)
# A decoder's output is its next-token distribution (core/measures/ablation.py: total variation).
GRID_CAPTION_DECODER = (
    "**Switch off one head, run the text again, and see how far the model's guess for the next token "
    "moves.** Each cell is one head (layer and head counted from 1). The number is the total variation "
    "distance ½ Σ |p − q| between the next-token probabilities with the head switched off (q) and as "
    "they are (p): the share of probability that moves to other tokens, 0 when nothing moves. The red "
    "boxes are the heads chosen to be switched off together."
)
GRID_TITLE = "Effect of switching off one head at a time"
GRID_BAR_DECODER = "share moved"
GRID_BAR = "effect, 1 − cos"
LAYER_AXIS = "layer (1–{n})"
HEAD_AXIS = "head (1–{n})"

TOP_CAPTION = (
    "The {n} heads that matter most here (layer and head counted from 1). "
    "Click one to open it in the head view."
)
TOP_BUTTON = "{rank}. layer {layer}, head {head}: {effect:.3f}"
TOP_HELP = "Open layer {layer}, head {head} in the head view."

# ---- asking first, counting (dashboard/long_work.py) ------------------------------------------------

ASK_WHAT = "Switching off each of the {runs} heads in turn"
BUTTON = "Switch off each head ({runs} runs)"
PROGRESS = "Switched off {done} of {total} heads"

# ---- several heads at once -------------------------------------------------------------------------

SET_HEADING = "Switch off several heads at once"
PRESET_LABEL = "Heads to switch off"
PRESETS = {
    "find": "Top 5 of find the head",
    "layer": "Every head of a layer",
    "grid": "Top 5 of this grid",
    "hand": "Hand-picked",
}
PRESET_HELP = (
    "Top 5 of find the head: the five heads that link the focus word most specifically to the target "
    "word, as the Token focus view ranks them. Every head of a layer: the whole layer. Top 5 of this "
    "grid: the five largest cells above. Hand-picked: any heads you choose."
)
FOCUS_LABEL = "Focus word (its bars below)"
TARGET_LABEL = "Target word (find the head links the focus word to it)"
LAYER_LABEL = "Layer (1–{n})"
HAND_LABEL = "Heads to switch off (layer and head counted from 1)"
HEAD_NAME = "layer {layer}, head {head}"

PRESENT_LABEL = "Show"
PRESENT_PARTS = {"grid": "Each head alone", "set": "Heads switched off together"}

SET_NONE = "No head is switched off yet: pick some above."
SAME_WORD = "Find the head needs a target word other than the focus word: pick another target above."
SET_SUMMARY = "Switched off ({n}): {heads}."
SET_EFFECT = (
    "**The embedding moves by 1 − cos = {effect:.4f}** with these heads off together "
    "(the largest single head in the grid: {single:.4f})."
)
SET_EFFECT_DECODER = (
    "**{effect:.1%} of the next-token probability moves** with these heads off together "
    "(the largest single head in the grid: {single:.1%}). The likeliest next token {change}."
)
NEXT_SAME = "stays “{before}” ({p_before:.0%} → {p_after:.0%})"
NEXT_CHANGED = "changes from “{before}” ({p_before:.0%}) to “{after}” ({p_after:.0%})"

BARS_TITLE = "“{word}” after the last layer: its cosine to every other word"
BARS_BEFORE = "as it is"
BARS_AFTER = "{n} heads off"
BARS_AFTER_ONE = "1 head off"
BARS_Y = "cosine to “{word}”"
BARS_X = "word"
BARS_CAPTION = (
    "Each pair of bars: how close the focus word's final vector is to another word's, as it is (grey) "
    "and with the heads switched off (blue). A word cut into pieces is the mean of its pieces."
)

NEAREST_SAME = (
    "The content word nearest to “{focus}” is “{before}” (cos {cos_before:.2f}), and with these heads "
    "off it is still “{after}” (cos {cos_after:.2f})."
)
NEAREST_MOVED = (
    "The content word nearest to “{focus}” is “{before}” (cos {cos_before:.2f}); with these heads "
    "off it becomes “{after}” (cos {cos_after:.2f})."
)
NEAREST_NONE = "This sentence has no content word besides “{focus}” to compare it with."

# ---- what it shows and what it does not ------------------------------------------------------------

ABOUT_LABEL = "What switching heads off shows, and what it does not"
ABOUT = (
    "Switching a head off here means **zero-ablation**: the head's output is set to zero before the "
    "layer's output projection W^O, and the rest of the model runs as usual. This is the head mask of "
    "Michel, Levy and Neubig (2019), *Are Sixteen Heads Really Better than One?* A large effect says "
    "the output leans on that head **for this sentence**. A small effect does not say the head is "
    "useless: other heads can carry the same information, so a head may matter only once others are "
    "gone (Michel et al. removed many heads, even most of a layer, at test time with little loss). "
    "Zero is not a neutral value either: in training the model never saw a head give exactly zero, so "
    "part of an effect can come from that surprise.\n\n"
    "An attention weight is a pattern, not the model's reading. A head that puts weight from “it” on "
    "“trophy” shows where it looks; switching it off asks whether the output needs that look, and the "
    "bars show whether “it” itself moves."
)

# ---- notes -----------------------------------------------------------------------------------------

MODEL_RANGE = (
    "This model has layers 1–{layers} and heads 1–{heads}; a link counts them from 0, so its "
    "`ablate` list runs from 0.0 to {last}."
)
DROPPED = "The link asks to switch off {heads}, which this model does not have; left out. "
UNAVAILABLE = "Heads cannot be switched off in this model with this engine: {reason}"
