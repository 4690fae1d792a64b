"""The explore page's own text: the examples gallery, the views' names, and the captions that say
how to read each chart. Data, not code: dashboard/views/explore/ fills the {fields} and draws it.

Captions go through st.caption / st.markdown, so literal brackets are escaped (\\[CLS\\]).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    title: str  # the gallery button
    text: str
    focus: str  # the word to look from (matched case-insensitively against whole words)
    target: str  # the word to look at, for "find the head"
    caption: str  # one line, shown under the gallery
    referent: str | None = None  # what a reader takes the focus word to mean (the pronoun test says
    # whether the model's vector agrees); None where the focus word is not a pronoun
    letters: bool = False  # for a model that reads one letter a token (the letter GPT-2), not English


EXAMPLES: dict[str, Example] = {
    "trophy-large": Example(
        "Trophy · too large",
        "The trophy wouldn't fit in the suitcase because it was too large.",
        "it",
        "trophy",
        "A reader knows “it” is the trophy here, from knowing about trophies and suitcases. Which heads "
        "put weight from “it” on “trophy”, and does the model follow? An encoder's vector for “it” is "
        "tested below; a decoder reads “it” before “large”, so it is asked which continuation it prefers.",
        referent="trophy",
    ),
    "trophy-small": Example(
        "Trophy · too small",
        "The trophy wouldn't fit in the suitcase because it was too small.",
        "it",
        "suitcase",
        "One word changed and, for a reader, “it” now means the suitcase. Do the heads' weights "
        "switch nouns, and does the model? Weights show where a head looks; an encoder's pronoun test "
        "and a decoder's preferred continuation, below, show what the model made of it.",
        referent="suitcase",
    ),
    "bank-loan": Example(
        "Bank · loan",
        "The bank approved the loan.",
        "bank",
        "loan",
        "“Bank” as a lender: see where its heads look, and which word its final vector is nearest to; "
        "then compare with the river sentence.",
    ),
    "bank-next": Example(
        "Next word · The bank approved the…",
        "The bank approved the",
        "the",
        "bank",
        "A text that stops before its last word. On a decoder, the next-word view lists the model's "
        "guesses, and under the token focus you can ask it to choose between two words you type.",
    ),
    "bank-river": Example(
        "Bank · river",
        "We had a picnic on the bank of the river.",
        "bank",
        "river",
        "The same word at the water's edge: its context changes, and so do the heads that carry it.",
    ),
    "cat-mat": Example(
        "The cat sat on the mat",
        "The cat sat on the mat.",
        "sat",
        "cat",
        "A short plain sentence: a good place to spot heads that look at the previous or next word, "
        "or park their attention on a special token or the first one.",
    ),
    "love-nlp": Example(
        "I love NLP",
        "I love NLP",
        "nlp",
        "love",
        "Three words; a tokenizer may cut the rare one into pieces (BERT's: nl + ##p): switch “merge "
        "pieces into words” on and off.",
    ),
    # the letter GPT-2 was trained on cycles of 3 to 12 different letters (core/train/data.py): these
    # are its kind of text, and "focus" → "target" is what an induction head links
    "letters-cycle": Example(
        "Letters · a cycle of 4",
        "qfwkqfwkqfwkqfwk",
        "q#2",
        "f",
        "Four different letters, again and again, as in the letter model's training data. From the "
        "second “q”, an induction head looks at the letter that followed the first “q”: “f”.",
        letters=True,
    ),
    "letters-planets": Example(
        "Letters · planets × 3",
        "planetsplanetsplanets",
        "p#2",
        "l",
        "Seven different letters, three times. Once the word has been read, each next letter can be "
        "copied from what followed the same letter before.",
        letters=True,
    ),
}
DEFAULT_EXAMPLE = "trophy-large"
DEFAULT_LETTER_EXAMPLE = "letters-cycle"

VIEWS = {
    "head": "Head",
    "lines": "Lines",
    "model": "Model (all heads)",
    "focus": "Token focus",
    "rollout": "Rollout",
    "similarity": "Similarity",
    "ablation": "Ablation",
    "attribution": "Attribution",
    "qk": "Q/K space",
    # decoders only (dashboard/views/explore/decoder.py: views_for)
    "nextword": "Next word",
    "generate": "Generate",
    "lens": "Logit lens",
    "sinks": "Attention sinks",
    "induction": "Induction heads",
}

# ---- the sentence and the options ------------------------------------------------------------------

SENTENCE_LABEL = "Sentence (up to {max_tokens} tokens are analysed; longer text is cut)"
MERGE_LABEL = "Merge pieces into words"
MERGE_HELP = "Attention to a word is the sum over its pieces; from a word, the average of its pieces' rows."
HIDE_LABEL = "Hide {specials} (renormalised)"
HIDE_HELP = "Drops the special tokens' rows and columns; each remaining row is rescaled to sum to 1."
MERGED_NOTE = "pieces merged into words"
HIDDEN_NOTE = "special tokens hidden, rows renormalised"

# ---- the model picker and the engines --------------------------------------------------------------

MODEL_HELP = "The bundled model works offline. Hub models are downloaded once (safetensors only)."
OTHER_MODEL_HINT = "Type an encoder model's Hub id (e.g. `bert-base-cased`) or a folder, then Load."
PARITY_HELP = "Run the same sentence through the other engine and show the largest difference."
PARITY_CAPTION = (
    "Largest difference between the two engines' attention weights over all {layers} × {heads} "
    "heads of this sentence (float32; the bridge promises ≤ 1e-5)."
)

# ---- how to read each view -------------------------------------------------------------------------

# The head view's caption: how to read the map (weights or norms), then the head's weights in numbers.
HEAD_CAPTION = (
    "Rows: the token that attends (query). Columns: the token it attends to (key). Each row sums "
    "to 1; hover a cell for the exact weight. On average this head puts "
)
# the head's shares in numbers, each part where it applies: special tokens only where the tokenizer
# adds some, the next token only in an encoder (a decoder's token never sees it)
HEAD_CAPTION_STATS = (
    "{special}{previous:.0%} on the previous token, {self:.0%} on the token itself{next}{overlap}."
)
HEAD_CAPTION_SPECIAL = "{share:.0%} of a token's attention on {specials}, "
HEAD_CAPTION_NEXT = " and {share:.0%} on the next one"
HEAD_CAPTION_OVERLAP = " (shares can overlap: the first word's previous token is {first}{hidden})"
HEAD_CAPTION_HIDDEN = "; counted before hiding {specials}"
PAIR_ANSWER = (
    "**Layer {layer}, head {head}:** “{focus}” gives “{target}” **{weight:.2f}** of its attention; {where}."
)
PAIR_BEST = "of all {n} heads, this one links them most specifically"
PAIR_RANK = (
    "it ranks {rank} of {n} heads for this pair (layer {layer}, head {head} links them most specifically)"
)
HEAD_CAPTION_PAIR = " The red box marks the focus → target pair."

LINES_MIN_HELP = "Weights below this are not drawn. Opacity follows the weight."
LINES_CAPTION = (
    "Left: each token as a query; right: the same tokens as keys. A line's opacity follows its "
    "weight; colours are heads: click a head in the legend to show or hide it, double-click to "
    "show only that head."
)
LINES_CAPTION_TOP_K = " With {n} tokens, only each token's {top_k} strongest lines per head are drawn."

MODEL_CAPTION = (
    "All {layers} layers × {heads} heads. Each thumbnail is one head's map (rows: from, columns: "
    "to), coloured by the square root of the weight so faint patterns show{pooled}. Click a "
    "thumbnail, or pick it below, to open it in the head view."
)
MODEL_CAPTION_POOLED = "; each pixel is the largest weight in its block of tokens"
THUMBNAIL_HOVER = (
    "<b>layer {layer}, head {head}</b><br>"
    "{special}"
    "on the previous token: {previous:.0%}<br>"
    "on itself: {self:.0%}<br>"
    "{next}"
    "spread (entropy): {entropy:.1f} bits<br><i>click to open</i>"
)
THUMBNAIL_SPECIAL = "on {specials}: {share:.0%}<br>"  # {specials} HTML-escaped: the hover is HTML
THUMBNAIL_NEXT = "on the next token: {share:.0%}<br>"

FIND_THE_HEAD = (
    "**Find the head:** the most specific link from “{a}” to “{b}” is in layer {layer}, head {head}: "
    "“{a}” gives “{b}” {weight:.0%} of its attention, the other words give it {others:.0%} on "
    "average, so its specific score is {specific:+.2f}."
)
FIND_THE_HEAD_NONE = (
    "**Find the head:** no head links “{a}” to “{b}” more than it links the other words to “{b}”: "
    "the best is layer {layer}, head {head}, where “{a}” gives “{b}” {weight:.0%} of its attention "
    "and the other words {others:.0%} on average."
)
FOCUS_GRID_CAPTION = "Weight from “{a}” to “{b}” in every head (layers and heads from 1)"
TOP_HEADS_CAPTION = "Most specific heads, one click away (opens the head view):"
RANK_TABLE_HEADER = (
    "| # | head | “{a}” → “{b}” | other words → “{b}” | specific | |\n|---|---|--:|--:|--:|---|"
)
RANK_TABLE_ROW = (
    "| {rank} | layer {layer}, head {head} | {weight:.2f} | {others:.2f} | **{specific:+.2f}** | {note} |"
)
EVERYWHERE_NOTE = "⚠ looks at “{b}” from everywhere"
STRONGEST_RAW = "strongest raw weight"
RANK_RULE = (
    "Specific = the weight from “{a}” to “{b}” minus the mean weight the other words{seeing} give “{b}” "
    "({not_specials}not “{a}” or “{b}” itself); heads are ranked by it. ⚠ marks a "
    "head where at least half of the other words give “{b}” at least half as much as “{a}” does "
    "(and at least 0.10): it looks at “{b}” from everywhere, so its weight says little about “{a}”."
)
RAW_TOP_EVERYWHERE = (
    "The strongest raw weight, layer {layer}, head {head} ({weight:.2f}), looks at “{b}” from "
    "everywhere ({looking:.0%} of the other words give it at least half as much as “{a}” does); by "
    "specific score it ranks {rank} of {total}."
)
RAW_TOP_SPECIFIC = (
    "The strongest raw weight, layer {layer}, head {head} ({weight:.2f}), ranks {rank} of {total} by "
    "specific score."
)

# ---- similarity -------------------------------------------------------------------------------------

SIM_LAYER_LABEL = "Vectors after layer (0 = the embeddings, {n} = the last)"
SIM_EMBEDDINGS = "emb."
SIM_EMBEDDINGS_LONG = "at the embeddings"
SIM_AFTER = "after layer {layer}"
SIM_TITLE = "How alike the tokens' vectors are, {where}"
SIM_BAR = "cosine"
SIM_AXIS = "token"
SIM_HIDDEN_NOTE = "special tokens hidden"  # a chart title: plain text, no markdown
SIM_ROW_LABEL = "Row of"
SIM_ROW_TITLE = "“{token}”: cosine to every other token, {where}"
SIM_ROW_Y = "cosine to “{token}”"
SIM_CAPTION = (
    "Each cell is the cosine between two tokens' vectors, the vectors the model carries out of the "
    "chosen layer (0: the embeddings, before any attention has mixed them). 1 means the same "
    "direction; 0, unrelated; the colour scale runs from 0 to 1 and negative values are drawn white. "
    "A word cut into pieces is the mean of its pieces. Slide the layer up to watch context make the "
    "vectors alike: attention decides what each token gathers, and this is what it has gathered."
)
SIM_PRESENT_LABEL = "Show"
SIM_PRESENT_PARTS = {"map": "This sentence", "corpus": "Nearest in the corpus"}
SIM_ROW_CAPTION = (
    "The outlined row of the map as bars, without “{token}” itself (always 1). At the top layers of "
    "small models every vector points in much the same direction, so compare the bars with each "
    "other rather than with 0."
)

# ---- [MASK] ----------------------------------------------------------------------------------------

MASK_INTRO = "**The model's guesses for each \\[MASK\\]**, left to right (five likeliest words, probability):"
MASK_LINE = "- **\\[MASK\\] {n}**: {guesses}"
MASK_NO_HEAD = (
    "This model was saved without BERT's masked-word head, so it cannot guess a \\[MASK\\]. To see "
    "guesses, load a masked-LM BERT such as {models} (Model, in the sidebar)."
)
MASK_NUMPY_ONLY = "Guesses for \\[MASK\\] come from the NumPy engine: switch the engine to see them."

# ---- the trophy pair: does attention follow the meaning? -----------------------------------------------

TROPHY_TITLE = "#### “Too large” or “too small”: does attention follow the meaning?"
TROPHY_INTRO = (
    "In “{large}” *it* is the trophy; in “{small}” it is the suitcase. Below: the heads that link "
    "“it” most specifically to either noun in either sentence, and where each puts more of "
    "“it”'s attention in each sentence (weights from “it”, **bold** = the larger)."
)
TROPHY_HEADER = (
    "| head | too large: trophy / suitcase | too small: trophy / suitcase | follows the meaning? |\n"
    "|---|--:|--:|---|"
)
TROPHY_ROW = "| layer {layer}, head {head} | {large} | {small} | {verdict} |"
TROPHY_YES = "yes: trophy, then suitcase"
TROPHY_NO = "no: {first}, then {second}"
TROPHY_NONE = (
    "None of these {n} heads switches from “trophy” to “suitcase” when “large” becomes “small”: "
    "in this model, the attention from “it” does not follow the meaning here. The pronoun test below "
    "measures what the model made of “it” instead."
)
TROPHY_ALL = (
    "All {n} heads switch from “trophy” to “suitcase” when “large” becomes “small”: their attention "
    "from “it” follows the meaning. Whether the model's reading of “it” does too is what the "
    "pronoun test below measures."
)
TROPHY_SOME = (
    "{k} of these {n} heads switch from “trophy” to “suitcase” when “large” becomes “small”; the "
    "other {rest} keep the same noun in both sentences. A weight that follows the meaning is a "
    "pattern, not proof of how the model reads “it”: the pronoun test below measures that."
)

# ---- how to read this page ----------------------------------------------------------------------------

HOW_TO_READ_LABEL = "How to read this page"
# the primer's paragraphs; the page shows the ones that fit the model on screen (core/models/reading.py)
HOW_TO_READ = {
    "layers": "- **Layers and heads.** The model reads the sentence in a stack of layers, one after the "
    "other (the sidebar says how many); each layer has several attention heads that look at the "
    "sentence independently. Layers and heads are counted from 1 on the page.",
    "map": "- **A head's map.** Each row is a token that reads (the *query*), each column a token it "
    "reads from (the *key*); a row's weights add up to 1.",
    "specials": "- **{specials}.** Tokens the tokenizer adds to every text. Many heads park attention "
    "on them when they have nothing better to do: “Hide {specials}” takes them out.",
    "word pieces": "- **Word pieces.** Rare words are cut into pieces (*nlp* → *nl* + *##p*); “Merge "
    "pieces into words” shows whole words.",
    "byte pieces": "- **Pieces of words.** A token is a word or a piece of one, its leading space "
    "included (shown as “␣”); “Merge pieces into words” shows whole words.",
    "letters": "- **Letters.** This model reads one letter a token, a to z: it drops spaces, digits and "
    "punctuation, and knows no words, only the runs of letters it was trained on.",
    "not": "- **What attention is not.** A weight says where a token's new value is read *from*, not "
    "*why* the model decides anything: other parts of the model (feed-forward layers, the residual "
    "stream) do much of the work.",
}
EXAMPLES_FOLD = "Examples{example}{toggles}"  # toggles: " · merge pieces into words, hide <specials>"
FOLD_MERGE, FOLD_HIDE = "merge pieces into words", "hide {specials}"
LETTERS_BECAME = (
    "This model reads only the letters a to z: the text became {n} letters ({shown}). It was trained on "
    "runs of different letters that repeat, such as “qfwkqfwkqfwk”."
)
TO_LEARN = "Step by step: [this sentence through one layer of {model}, on the learn page]({url})"
FOCUS_ROWS_CAPTION = "Where “{a}” looks, in every layer and head (rows), over all tokens (columns)"

# ---- attention as vector norms (Kobayashi et al. 2020) and rollout (Abnar & Zuidema 2020) ------------

MEASURE_LABEL = "Show"
MEASURES = {"weights": "weights α", "norms": "norms ‖α f(x)‖"}
MEASURE_HELP = (
    "Weights: how much of each token's vector the head takes. Norms: the length of what it "
    "actually takes, ‖α f(x)‖, where f(x) is the token's value vector after the output projection."
)
RESCALE_LABEL = "Norm rows rescaled to sum to 1"
RESCALE_HELP = "Each row of norms divided by its sum, so it reads as shares, like a row of weights."
NORMS_TITLE = "norms ‖α f(x)‖"
NORMS_TITLE_RESCALED = "norms ‖α f(x)‖, rows rescaled to sum to 1"
NORMS_BAR = "‖α f(x)‖"
NORMS_BAR_RESCALED = "share of<br>row's norm"
NORMS_HIDDEN_NOTE = "special tokens hidden"
NORMS_UNAVAILABLE = "Norms need each head's own weights, and {reason}. Showing the weights instead."
NORMS_NOTE = (
    "**Why norms differ from weights** (Kobayashi et al. 2020). A head hands token i the sum of "
    "α·f(x) over the tokens it attends to, where f(x) is a token's value vector after the output "
    "projection. A large weight on a token whose f(x) is short moves little: many heads park most of "
    "their weight on \\[SEP\\] or \\[CLS\\], whose vectors are short, so those cells fade when "
    "norms are shown. Each cell is ‖α_ij f(x_j)‖ for this head; rows do not sum to 1 unless rescaled."
)
NORMS_SPECIAL_SHARE = (
    "In this head a token gives \\[CLS\\]/\\[SEP\\] {weight:.0%} of its weight on average, but "
    "they make up {norm:.0%} of its norm (each row's norms as shares of their sum)."
)
NORMS_MERGE_NOTE = (
    "With word pieces merged, the norm to a word is the norm of the summed vector "
    "‖Σ α f(x)‖ over its pieces (vectors add, lengths do not); from a word, the mean of its pieces' rows."
)
NORMS_CAPTION = (
    "Rows: the token that attends (query). Columns: the token attended to (key). Each cell is the "
    "length of the vector the head moves from the column's token into the row's; hover for the exact "
    "norm. The head's weights α, for comparison: on average it puts "
)

ROLLOUT_LAYER_LABEL = "Up to layer (1–{n})"
ROLLOUT_TITLE = "Rollout up to layer {layer}"
ROLLOUT_BAR = "rollout"
ROLLOUT_X = "to (input token)"
ROLLOUT_Y = "from (token after layer {layer})"
ROLLOUT_ROW_LABEL = "Row of (from)"
ROLLOUT_ROW_TITLE = "Where “{token}” traces back to, after layer {layer}"
ROLLOUT_ASSUMES = (
    "**Attention rollout** (Abnar & Zuidema 2020) follows attention through the layers: each layer's "
    "map is Ã = ½·(mean over heads of A) + ½·I with rows renormalised, and the maps are multiplied, "
    "R = Ã(layer)·…·Ã(1). It assumes that **all heads mix equally** (the mean) and that **the residual "
    "connection carries half** of each token's vector (the ½·I). It traces attention only: the value "
    "vectors (see the head view's norms) and the feed-forward layers are ignored, so read it as "
    "a rough map of mixing, not as what the model uses."
)
ROLLOUT_CAPTION = (
    "Rows: a token after layer {layer} (from). Columns: the input tokens (to). Each row sums to 1: "
    "how much of that token's representation traces back to each input token. The colour scale "
    "ends at the largest value shown{hidden}."
)
ROLLOUT_CAPTION_HIDDEN = "; with {specials} hidden, rows are renormalised over the rest"
