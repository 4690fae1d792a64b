"""The explore page's text for the translator trained here (core/translate/, issue 38). Data, not code:
dashboard/views/explore/translator.py fills the {fields}; markdown, so user text is escaped before
it is filled in."""

from __future__ import annotations

from core.translate.trainer import PROBE

DEFAULT_TEXT = " ".join(PROBE.source)
EXAMPLES = {  # button -> sentence; each one the grammar can write, so its gold alignment is known
    "Order swaps, “not”, “du”": DEFAULT_TEXT,
    "A bare plural: “des”": "a tired horse eats apples near the house",
    "Never seen together": "the green horse finds the doors",
    "Plural agreement": "the white flowers do not follow the boys",
}
KINDS = {
    "cross": "Cross-attention: French reads English",
    "encoder": "Encoder: English reads English",
    "decoder": "Decoder: French reads French so far",
}
SENTENCE_LABEL = "English sentence (the grammar's words: try an example)"
TRANSLATION = "**Translation:** {target}"
GOLD_SAME = "The grammar's own French is the same, word for word; the red boxes are its alignment."
GOLD_OTHER = "The grammar's own French differs: {gold}. Its alignment is not outlined (the rows differ)."
NOT_GRAMMAR = (
    "The grammar cannot write this sentence, so there is no gold alignment to outline; the heads' "
    "weights are still the model's."
)
UNREADABLE = "The translator cannot read this: {reason}. Below: the last sentence it could read."
CROSS_TITLE = "Layer {layer}, head {head}: from each French word being written to the English"
SELF_TITLE = "Layer {layer}, head {head}: {kind}"
ROW_TARGET, COL_SOURCE = "writing (French)", "reading (English)"
CROSS_CAPTION = (
    "Row t is the decoder step that writes French word t: its query comes from the French written so "
    "far, the keys and values from the encoder's output for the English words. Each row sums to 1. "
    "Red boxes: the English words the grammar says this French word renders."
)
ALIGN_TITLE = "Alignment on this sentence, every head"
ALIGN_BAR = "share aligned"
ALIGN_LINE = (
    "On this sentence, layer {layer}, head {head} puts its largest weight on a word the French word "
    "renders for **{right} of {total}** French words; the best head here is layer {best_layer}, head "
    "{best_head} ({best:.0%}). Measured in training on {n} held-out sentences, the best head was layer "
    "{rec_layer}, head {rec_head} ({rec:.0%})."
)
ALIGN_CAPTION = (
    "A head aligns a French word when its largest cross-attention weight, at the step that writes "
    "the word, falls on an English word the grammar's alignment links it to; words that render no "
    "English word (“des” before a bare plural) are left out."
)
