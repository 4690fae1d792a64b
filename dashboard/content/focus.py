"""The focus view's own text where it depends on the model on screen, and its projector parts:
data, not code (dashboard/views/explore/focus.py and find_head.py fill the {fields}). The rest of
the focus view's text is in dashboard/content/explore.py."""

from __future__ import annotations

FOCUS_PRESENT_LABEL = "Show"  # presenter mode: one part of the focus view at a time (the link's `part`)
FOCUS_PARTS = {
    "heads": "Find the head",
    "pair": "Too large / too small",
    "reading": "The model's reading",
    "rows": "Every head's row",
}
FIND_THE_HEAD_AFTER = (
    "**Find the head:** in this causal model “{a}” reads only itself and the words before it, and "
    "“{b}” comes after it: every head gives “{b}” exactly 0 from “{a}”, by the mask, not by choice. "
    "Pick a target before the focus word."
)
SEEING = " that can see it (in a causal model, the words after it)"  # in RANK_RULE, on a decoder
NOT_SPECIALS = "not {specials}, "  # in RANK_RULE, where the tokenizer adds tokens
