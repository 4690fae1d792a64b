"""The learn page's own text: the modes, the sentence gallery, the seven steps' formulas and
explanations, and what each source of numbers (toy model, worked example, real BERT) adds to them.
Data, not code: dashboard/views/learn/ fills the {fields} and draws it.

Texts go through st.markdown, so they never hold user input; formulas go through st.latex.
"""

from __future__ import annotations

from core.lesson.worked_examples import EXAMPLES
from dashboard.content.learn_translator import MODE as TRANSLATOR_MODE
from dashboard.content.learn_translator import MODE_LABEL as TRANSLATOR_LABEL

# ---- the page's modes, and the sentences one click away ------------------------------------------

SENTENCES = {
    "cat": ("The cat", "The cat sat on the mat"),
    "nlp": ("I love NLP", "I love NLP"),
    "trophy": ("Trophy and suitcase", "The trophy would not fit in the suitcase because it was too large."),
    "bank": ("Bank and loan", "The bank approved the loan."),
}
DEFAULT_TEXT = SENTENCES["cat"][1]
# for a decoder that reads letters only (the letter GPT-2): runs of different letters that repeat, as it
# was trained on (core/train/data.py)
LETTER_SENTENCES = {
    "cycle": ("A cycle of 4 letters", "qfwkqfwkqfwk"),
    "planets": ("Planets × 2", "planetsplanets"),
}

# the URL's ?example= is one of these but "sentence"; the translator's link says ?model=translator
MODES = ("sentence", "bert", "decoder", *EXAMPLES, TRANSLATOR_MODE)
MODE_LABELS = {
    "sentence": "Your sentence",
    "bert": "Your sentence in a real BERT",
    "decoder": "Your sentence in a real decoder (GPT-2, SmolLM2)",
    "cat-mat": "Worked example: “The cat sat on the mat”",
    "i-love-nlp": "Worked example: “I love NLP”",
    TRANSLATOR_MODE: TRANSLATOR_LABEL,
}
INTRO = (
    "Every number of one attention layer, computed in NumPy as you watch: type a sentence and follow "
    "it through the seven steps, or load an article's worked example and see its arithmetic checked."
)
TOY_CAPTION = (
    "Here W^Q, W^K and W^V are random and untrained, drawn from the seed: the same sentence and seed "
    "always give the same numbers, but the patterns mean nothing yet. “Your sentence in a real BERT” "
    "runs trained ones."
)
EMPTY_SENTENCE = (
    "Type a sentence in the box above, or pick one of the ready examples, and every step of "
    "attention will be computed on it."
)

D_K_CHOICES = (0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64)  # the d_k menu; 0 = automatic, d_model ÷ heads

# ---- which step is on screen -------------------------------------------------------------------

# One step on screen at a time by default: a step fills a projector screen without scrolling, and
# the browser draws only that step's charts. "All steps" puts the whole layer on one page.
STEP_VIEWS = ("1", "2", "3", "4", "5", "6", "7", "heads", "all")
STEP_VIEW_LABELS = {
    "1": "1 · Embeddings",
    "2": "2 · Q, K, V",
    "3": "3 · Scores",
    "4": "4 · Scaling",
    "5": "5 · Softmax",
    "6": "6 · Weighted sum",
    "7": "7 · Output",
    "heads": "All heads",
    "all": "All steps",
    # a decoder's extra stops (dashboard/content/learn_decoder.py: DECODER_VIEWS)
    "ln": "LayerNorm first",
    "mask": "Causal mask",
    "mlp": "MLP (GELU)",
    # a Llama's (dashboard/content/learn_llama.py: LLAMA_VIEWS)
    "rmsnorm": "RMSNorm first",
    "rope": "RoPE",
    "gqa": "Grouped queries",
    "swiglu": "MLP (SwiGLU)",
    # the translator's stops (dashboard/content/learn_translator.py: VIEWS) keep the link's names 1 to 7
    # for steps of another sub-layer, so they carry labels of their own (its VIEW_LABELS)
}

# ---- the seven steps: (title, formula, the standard explanation) --------------------------------

STEP_TEXT = {
    1: (
        "Embeddings",
        # two lines: on one, the formula is wider than its half of a 1280 px screen and gets cut
        r"\begin{gathered} X = \begin{bmatrix} x_1 \\ \vdots \\ x_T \end{bmatrix}"
        r" \in \mathbb{R}^{T \times d_{model}} \\ x_i = e(w_i)\;\bigl[+\, PE_i\bigr] \end{gathered}",
        "Each token becomes a row of numbers. A trained model learns these rows; here each one is "
        "drawn from a random generator seeded by the token's text, so a repeated word gets the same "
        "row wherever it stands. Nothing in X says where a token sits until positional encoding "
        "adds a position-dependent wave to each row.",
    ),
    2: (
        "Queries, keys and values",
        r"\begin{gathered} Q = X W^Q,\quad K = X W^K,\quad V = X W^V \\"
        r"W^Q_i,\ W^K_i,\ W^V_i \in \mathbb{R}^{d_{model} \times d_k} \end{gathered}",
        "Three weight matrices give the same row three roles. The query is what a token is looking "
        "for, the key is what it offers to the others, and the value is what it hands over when "
        "chosen. Every head has its own three matrices, so each head can look for something else.",
    ),
    3: (
        "Scores QKᵀ",
        r"S = Q K^{\top},\qquad S_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{im}\, k_{jm}",
        "Every query meets every key in a dot product. Cell (i, j) is large when what token i looks "
        "for lines up with what token j offers. The matrix is T × T: one more token adds a row and "
        "a column, which is why the cost of attention grows with the square of the length.",
    ),
    4: (
        "Scaling by √d_k",
        r"S' = \frac{Q K^{\top}}{\sqrt{d_k}}",
        "A dot product adds up d_k products, so its spread grows with d_k: with entries of variance "
        "1 its variance is about d_k. Dividing by √d_k brings the spread back to about 1, which keeps "
        "the softmax of the next step from locking onto a single key.",
    ),
    5: (
        "Softmax",
        r"A_{ij} = \operatorname{softmax}(S'_i)_j = \frac{e^{S'_{ij}}}{\sum_{m=1}^{T} e^{S'_{im}}}",
        "The softmax turns each row of scores into weights that are positive and add up to 1. Row i "
        "is token i's attention: how much of every token it will take in. The wider the gaps between "
        "scores, the more lopsided the row.",
    ),
    6: (
        "Weighted sum of the values",
        r"Z = A V,\qquad z_i = \sum_{j=1}^{T} A_{ij}\, v_j",
        "Each token's new vector is a blend of all the value vectors, mixed in the proportions of its "
        "attention row. A token that puts most of its weight on one other token mostly copies that "
        "token's value.",
    ),
    7: (
        "Output projection W^O, residual and layer norm",
        # three lines: on fewer, the formula is wider than its half of a 1280 px screen
        r"\begin{gathered} O = \operatorname{Concat}(Z_1, \dots, Z_H)\, W^O \\"
        r" Y = \operatorname{LayerNorm}(X + O) \\"
        r" \operatorname{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} \end{gathered}",
        "The heads' outputs are set side by side and multiplied by W^O, which mixes them and brings "
        "the width back to d_model. The residual connection adds the layer's input X back, so the "
        "layer only has to learn a correction. Layer norm then gives each token's row mean 0 and "
        "variance 1 (with learned scale γ = 1 and shift β = 0 here), keeping numbers in a steady range.",
    ),
}

HEADS_TITLE = "All heads together"
HEADS_FORMULA = (
    r"\operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)\, W^O,"
    r"\qquad \text{head}_i = \operatorname{softmax}\!\Bigl("
    r"\tfrac{X W^Q_i\,(X W^K_i)^{\top}}{\sqrt{d_k}}\Bigr) X W^V_i"
)
HEADS_TEXT = (
    "Each head runs steps 2 to 6 with its own weights, so each can attend in its own way: one may "
    "follow the previous token, another a related word. Their results are placed side by side, "
    "and W^O blends them into one vector per token."
)

# What a chart of each trace name is called (core/lesson/trace.py's names).
CHART_TITLES = {
    "embeddings": "token embeddings e(w)",
    "positions": "position vectors PE (sine waves, or learned in GPT-2)",
    "x": "X, the layer's input",
    "query": "Q",
    "key": "K",
    "value": "V",
    "scores": "scores S = QKᵀ",
    "scaled": "scaled scores S' = QKᵀ/√d_k",
    "unscaled": "unscaled scores (scaling off)",
    "probs": "attention weights A",
    "probs_unscaled": "without scaling (in use)",
    "probs_scaled": "with scaling, for comparison",
    "context": "Z = AV",
    "output": "O = Concat · W^O",
    "output_bias": "O = Concat · W^O + b^O",
    "residual": "residual X + O",
    "normed": "Y = LayerNorm(X + O): the layer's result",
}
ROW_TITLE, COL_TITLE, DIM_TITLE = "query (from)", "key (to)", "dimension"

# ---- the toy model ("Your sentence") -------------------------------------------------------------

POSITIONS_ON = "Here positional encoding is on, so the same word at two places gets two different rows."
POSITIONS_OFF = (
    "Positional encoding is off: a repeated word (“The” and “the” count as one) has identical rows."
)
MASK_TEXT = {
    "causal": "Causal mask: a token sees itself and the tokens before it, as in GPT-style decoders.",
    "local": "Local mask: a token sees the tokens within the window on either side of it.",
    "strided": "Strided mask: a token sees the most recent tokens and every stride-th earlier one.",
}
MASKED_CELLS = "The hidden cells become −∞, so the softmax gives them weight exactly 0."
SCALING_OFF = (
    "Scaling is switched off: the scores go into the softmax as they are. Step 5 shows what that "
    "does to the attention weights."
)
SATURATION = (
    "**Softmax saturation.** Random queries and keys with entries of variance 1 (seed {seed}), "
    "{n_keys} keys per row, averaged over {n_trials} draws for each d_k. Without the division the "
    "largest weight climbs towards 1 and the spread collapses as d_k grows: the softmax turns into a "
    "hard pick of one key, its gradient all but vanishes, and training stalls. With the division both "
    "curves stay flat whatever d_k is."
)
WHY_SCALE = "Why divide by √d_k? Softmax saturation"

# ---- the worked examples --------------------------------------------------------------------------

INPUT_TITLES = {
    "x": "X: x₁ and x₂",
    "query": "Q",
    "key": "K",
    "value": "V",
    "w_o": "W^O (ours, not the article's)",
}
EXAMPLE_TEXTS = {
    # step -> explanation, for every worked example
    2: "The article gives Q, K and V themselves (editable above) and prints no W^Q, W^K, W^V.",
}
EXAMPLE_STEP_TEXTS = {
    "cat-mat": {
        1: "Each token becomes a row of numbers. The article splits its sentence into two chunks, "
        "“The cat” and “sat on the mat”, and gives each a 4-number row, x₁ and x₂. A real model uses "
        "hundreds of numbers per token and learns them in training.",
    },
    "i-love-nlp": {
        1: "A model would first turn each word into a row of numbers. This example skips that step: "
        "it starts from the query of “love” and the keys and values of all three words, each a "
        "single number.",
    },
}
EXAMPLE_MISSING = {
    1: "This example starts from Q, K and V: the article gives no embeddings.",
    7: "The article stops at the weighted sum: it has no W^O, residual or layer norm.",
}
LAYER_NORM_FORMS = (
    "The article's form (x − μ)/(σ + ε) would differ from torch's by at most {gap:.1e} here, {seen}: "
    "the two part ways only when a row's spread σ comes close to ε."
)
VERDICT = {"slip": "✗ slip at this step", "propagated": "✗ carried from an earlier slip"}
SHORT_VERDICT = {"slip": "✗ slip", "propagated": "✗ carried over"}
AGREES = "✓ agrees"
FROM_ITS_NUMBERS = (
    "“From its numbers” redoes the step from what the article printed just before: a slip is wrong "
    "even then; a carried-over value is right given the earlier slip."
)
FLAG_CAPTION = "Red outline: the article prints a different number."
EDITED = (
    "You have changed the article's inputs: the heatmaps show your numbers, while the comparison "
    "with the article still refers to its own inputs."
)

# ---- the real BERT ("Your sentence in a real BERT") -------------------------------------------------

BERT_EMPTY = "Type a sentence above, and the bundled BERT will run on it."
BERT_ABOUT = (
    "These are the real numbers of **all-MiniLM-L6-v2**, a {n_layers}-layer BERT fine-tuned for "
    "sentence embeddings (d_model {d_model} = {n_heads} heads × d_k {d_k}): layer {layer} of "
    "{n_layers}, computed from its weights by this project's NumPy code, the numbers the explore "
    "page shows for that layer. Its vectors have {d_model} numbers, so the wide matrices print their "
    "first {dims} dimensions."
)
BERT_TRUNCATED = (
    "Your text has {total} word pieces; this mode keeps the first {kept} (with [CLS] and [SEP]) so "
    "every matrix fits on the screen."
)
BERT_FORMULAS = {
    2: r"Q_i = X W^Q_i + b^Q_i \quad (\text{likewise } K_i,\ V_i)",
    7: r"\begin{gathered} O = \operatorname{Concat}(Z_1, \dots, Z_H)\, W^O + b^O \\"
    r" Y = \operatorname{LayerNorm}(X + O) \\"
    r" \operatorname{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta"
    r" \end{gathered}",
}
BERT_EMBEDDINGS_FORMULA = (
    r"X = \operatorname{LayerNorm}(E_{\text{word}} + E_{\text{position}} + E_{\text{type}})"
)
BERT_LAYER_INPUT_FORMULA = r"X = \text{{the output of layer {previous}}}"  # str.format fills it
BERT_TEXTS = {
    2: "The trained matrices (with biases, which the toy model leaves out) give each of the {n_heads} "
    "heads its own queries, keys and values of {d_k} numbers.",
    7: "All {n_heads} heads' Z side by side ({d_model} numbers per token) go through W^O and its bias "
    "b^O; the layer's input X is added back and the sum normalised with the learned γ and β "
    "(ε = {eps:g}). In the real layer a feed-forward network follows, with its own residual and "
    "layer norm: {after}.",
}
BERT_EMBEDDINGS_TEXT = (
    "BERT looks up a learned vector for each word piece, adds one for its position and one for its "
    "sentence (first or second), and normalises the sum. That is the first layer's input."
)
BERT_LAYER_INPUT_TEXT = (
    "Layer {layer}'s input is what layer {previous} handed on: each row still belongs to one word "
    "piece, but it has already passed through {previous} layer(s) of attention and feed-forward, so "
    "it carries something of the whole sentence."
)
BERT_NOTES = {
    3: "With trained weights the large scores are no longer chance: they are what this head has "
    "learned to look for.",
    5: "This is the pattern the explore page draws for layer {layer}, head {head}.",
}
BERT_AFTER_LAST = "its result is the model's output"
TO_EXPLORE = "Next: this sentence in every layer and head of a pretrained BERT, on the explore page"
BERT_AFTER = "its result is layer {next}'s input"
# presenter mode: the concatenation and W^O, folded under the heads' maps
W_O_FOLDED = "Concat and W^O: the heads' results side by side, mixed into one vector per token"
TOO_WIDE = (
    "Concat is ({t} × {d_model}) and W^O ({d_model} × {d_model}): too wide to print here; step 7 "
    "shows their product's first dimensions."
)
