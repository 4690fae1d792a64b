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
KIND_BUTTONS = {"cross": "Cross: FR reads EN", "encoder": "Encoder: EN", "decoder": "Decoder: FR so far"}
SENTENCE_LABEL = "English sentence (the grammar's words: try an example)"
TRANSLATION = "**Translation:** {target}"
GOLD_SAME = "The grammar's own French is the same, word for word, so its alignment is known."
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
    "{best_head} ({best:.0%})."
)
ALIGN_TRAINED = (
    "Measured in training on {n} held-out sentences, the best head was layer {rec_layer}, head "
    "{rec_head} ({rec:.0%})."
)
ALIGN_CAPTION = (
    "A head aligns a French word when its largest cross-attention weight, at the step that writes "
    "the word, falls on an English word the grammar's alignment links it to; words that render no "
    "English word (“des” before a bare plural) are left out."
)

# ---- the views besides the head view (dashboard/views/explore/translator_views.py) ----------------
VIEWS = {"head": "Head", "lines": "Lines", "model": "Model (all heads)", "generate": "Step by step"}
VIEW_NOT_HERE = "The translator has no “{view}” view; it opens on its head view."
SIDES = {  # the lines view's two columns
    "cross": ("writing (French)", "reading (English)"),
    "encoder": ("from (English)", "to (English)"),
    "decoder": ("from (French)", "to (French so far)"),
}
LINES_TITLE = "Layer {layer}, {heads}: {kind}"
LINES_ALL_HEADS = "Every head of the layer"
LINES_ALL_HELP = "Off: only the head chosen above. Click a head in the legend to hide or show it."
LINES_CAPTION = (
    "Each line joins a word on the left to a word it reads on the right; the darker the line, the larger "
    "the weight. Lines below 0.02 are left out."
)
MODEL_CAPTION = (
    "Every head of the translator, one thumbnail each, rows the layers ({kind}). Hover for the word a "
    "head reads most; click a head to open it in the head view."
)
MODEL_HOVER = "layer {layer}, head {head}<br>reads “{word}” most: {share:.0%} of its weight"
STEP_TEXT = "**Step {step} of {n}.** Written so far: {before} → it writes **{word}**"
STEP_TOP_TITLE = "Step {step}: the words it weighed"
STEP_TOP_X = "probability"
STEP_READ_TITLE = "Writing “{word}”: what each head of layer {layer} reads"
STEP_READ_X = "English word read"
STEP_HOW = (
    "Greedy decoding: at each step the translator writes the word it finds most likely, then reads "
    "that word back as input for the next step. The heat map is the cross-attention of that step, one "
    "row per head of the chosen layer; each row sums to 1."
)
STEP_KEYS = " ← / → (or a clicker) steps through."
# while a deck is on (dashboard/presenter.owns_clicker) the clicker moves between its slides
STEP_KEYS_DECK = " The Previous token and Next token buttons step through; the clicker moves the deck."
