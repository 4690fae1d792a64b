"""The learn page's text for the translator's cross-attention step (dashboard/views/learn/translator.py,
core/translate/lesson.py): the mode's label, its example sentences, and each stop's title, formula
and explanation, from the two inputs to the norm after the residual, then the check.

Data, not code: the view fills the {fields} (every figure computed from the model's own arrays) and
draws it. Texts go through st.markdown and never hold user input: the English words are the user's,
so the view fills in only numbers and the French words the model wrote (a fixed vocabulary), and
writes the English ones into charts and tables. Formulas go through st.latex.
"""

from __future__ import annotations

MODE = "translator"  # the learn page's mode (session key learn_mode); the link says ?model=translator
MODE_LABEL = "Cross-attention in a translator (English → French)"

DEFAULT_TEXT = "the black cat sees the dog"
EXAMPLES = {  # button -> a sentence the grammar writes, so its gold alignment is known
    "Adjective after the noun": DEFAULT_TEXT,
    "“not” → “ne … pas”, “near the” → “près de la”": "the black cat does not see the dog near the car",
    "“des”: a French word with no English": "a tired horse eats apples near the house",
    "Plural agreement": "the white flowers do not follow the boys",
}
EXAMPLES_LABEL = "Ready examples (sentences the translator's grammar can write)"
SENTENCE_LABEL = "English sentence (the grammar's words only)"
LAYER_LABEL = "Decoder layer (numbered from 1)"
HEAD_LABEL = "Head (numbered from 1)"
TARGET_LABEL = "French word being written (the row followed)"

# The stops, in the order the sub-layer computes them; the link's `step`
VIEWS = ("1", "2", "3", "4", "5", "6", "7", "check", "all")
VIEW_LABELS = {
    "1": "1 · Two inputs",
    "2": "2 · Q, K, V",
    "3": "3 · Scores",
    "4": "4 · Scaling",
    "5": "5 · Softmax",
    "6": "6 · Weighted sum",
    "7": "7 · W^O, residual, norm",
    "check": "Checked + alignment",
    "all": "All steps",
}

ABOUT = (
    "The real numbers of the **English → French translator trained in this project**: a small "
    "encoder-decoder laid out like BART ({enc} encoder and {dec} decoder layers, width {d_model}, "
    "{n_heads} heads of d_k = {d_k}). Below, **cross-attention** in decoder layer {layer} of {dec}, "
    "head {head}: the step where the French being written reads the English sentence. {best}"
)
BEST_HEAD = "This head aligned best in training ({acc:.0%} of the held-out French words)."
OTHER_HEAD = "In training, layer {layer}, head {head} aligned best ({acc:.0%} of the held-out French words)."
SOURCE_CAPTION = "English, as the encoder reads it (S = {s}):"
TARGET_CAPTION = "French, as the translator writes it (T = {t}):"
PAST_THE_END = (
    "The link's `{noun}` value {value} is past the translator's {n} (links count from 0); showing the "
    "one that aligned best in training."
)
UNREADABLE = "The translator cannot read this: {reason}. Below: the last sentence it could read."

ROW_TITLE, COL_TITLE = "writing (French)", "reading (English)"
DIM_TITLE = "dimension"

STEPS = {  # view -> (title, formula, text)
    "1": (
        "Two inputs: the English sentence and the French so far",
        r"\begin{gathered} K,\ V \leftarrow M \in \mathbb{R}^{S \times d_{model}} \text{ (English)}"
        r" \\ Q \leftarrow Y \in \mathbb{R}^{T \times d_{model}} \text{ (French)} \end{gathered}",
        "Self-attention reads one sequence; cross-attention reads two. **Keys and values come from "
        "the encoder's output M**: one row per English word, computed once from the whole sentence. "
        "**Queries come from the decoder's state Y**: one row per French position, after this "
        "layer's own self-attention (which reads only the French written so far). Row “{word}” is "
        "the decoder step that writes “{word}”; it was fed “{fed}”.",
    ),
    "2": (
        "Queries from the French, keys and values from the English",
        r"\begin{gathered} Q_h = Y\,W^Q_h + b^Q_h \\ K_h = M\,W^K_h + b^K_h, \quad "
        r"V_h = M\,W^V_h + b^V_h \\ W_h \in \mathbb{R}^{d_{model} \times d_k}: \text{ head } h"
        r"\text{'s columns of } W \end{gathered}",
        "Head {head} owns columns {c0}–{c1} of each {d_model} × {d_model} projection and of its "
        "bias (BART's projections have biases). Q has a row per French position ({t}), K and V a "
        "row per English word ({s}): the two sides need not have the same length.",
    ),
    "3": (
        "Scores QKᵀ: every French query meets every English key",
        r"\begin{gathered} S = Q_h K_h^{\top} \in \mathbb{R}^{T \times S} \\ S_{ts} = q_t \cdot k_s = "
        r"\sum_{m=1}^{d_k} q_{tm}\, k_{sm} \end{gathered}",
        "The matrix is not square: {t} French rows by {s} English columns. Row “{word}” holds its "
        "query's dot product with each English key; its largest score is on “{top}” (outlined).",
    ),
    "4": (
        "Scaling by √d_k (BART folds it into Q)",
        r"\begin{gathered} S' = \frac{Q_h K_h^{\top}}{\sqrt{d_k}} = \Bigl(\frac{Q_h}{\sqrt{d_k}}\Bigr)"
        r" K_h^{\top} \\ \sqrt{d_k} = \sqrt{DK} = ROOT \end{gathered}",
        "Here d_k = {d_k}, so the scores are divided by √{d_k} = {root:g}. BART's code (as first "
        "written, in fairseq) multiplies the queries by 1/{root:g} before the product instead; a "
        "factor can be taken out of a dot product, so the numbers are the same either way: on this "
        "head {same} Right: row “{word}” both ways.",
    ),
    "5": (
        "Softmax over the English words: no mask",
        r"\begin{gathered} A_{ts} = \frac{e^{S'_{ts}}}{\sum_{m=1}^{S} e^{S'_{tm}}} \\ \text{every "
        r"English word } s \text{ allowed: no mask} \end{gathered}",
        "Each French row becomes weights over all {s} English words that add up to 1. There is "
        "**no causal mask**: the whole English sentence is already there, so the step writing "
        "“{word}” may read any English word, even the last. The decoder's own self-attention in the "
        "same layer and head (right) is causal: row “{word}” there reads only the French fed in so "
        "far, and every cell after it is exactly 0.",
    ),
    "6": (
        "Weighted sum of the English values",
        r"Z_h = A\,V_h, \qquad z_t = \sum_{s=1}^{S} A_{ts}\, v_s",
        "Row “{word}” becomes a blend of the English words' value vectors, in the proportions of its "
        "row of A. Right: each English word's term, largest weight first, and their sum, which is "
        "row “{word}” of Z. A head this sharp mostly copies one English word's value.",
    ),
    "7": (
        "W^O into the residual, then LayerNorm (BART: post-LN)",
        r"\begin{gathered} O = \operatorname{Concat}(Z_1, \dots, Z_H)\, W^O + b^O \\"
        r" Y' = \operatorname{LayerNorm}(Y + O) \end{gathered}",
        "The {n_heads} heads' Z side by side ({d_model} numbers) go through W^O and its bias; head "
        "{head}'s share is Z_{head} times its {d_k} rows of W^O (left). The decoder state Y, the "
        "queries' input, is added back, and BART normalises **after** the sum (post-LN, as the "
        "original Transformer and BERT; GPT-2 and Llama normalise before). Y' is what the layer's "
        "MLP reads next.",
    ),
    "check": (
        "Checked: the same numbers as the model's forward pass",
        r"\max\,\bigl|\,\text{step by step} - \text{forward pass}\,\bigr| \le 10^{-5}",
        "Every matrix above was recomputed here from the parameters, one named step at a time. The "
        "table compares each with the model's own forward pass (core/translate/model.py) on the same "
        "sentence: in float64 they are the same arithmetic, and in float32, as the product runs it, "
        "they agree to about seven significant digits.",
    ),
}

CHARTS = {
    "memory": "M: the encoder's output (keys and values come from here)",
    "state": "Y: the decoder's state (queries come from here)",
    "query": "Q (French), head {head}",
    "key": "K (English), head {head}",
    "value": "V (English), head {head}",
    "scores": "S = QKᵀ, head {head}",
    "scaled": "S' = QKᵀ / {root:g}",
    "probs": "A: cross-attention (no mask)",
    "self_probs": "the decoder's self-attention (causal)",
    "context": "Z = AV, head {head}",
    "head_output": "head {head}'s share Z·W^O",
    "output": "O = Concat·W^O + b^O",
    "normed": "Y' = LayerNorm(Y + O)",
    "aligned": "A, head {head}, with the grammar's alignment",
    "scale_row": "One row, both orders: the same numbers",
    "sum": "z for this row = Σ A·v: each term, then the sum",
}
SELF_COL = "reading (French fed in so far)"

SCORE_SUM = "q(“{word}”) · k(“{top}”) = {terms} + … (DK products) = VALUE"
SCALE_ROWS = ("QKᵀ", "QKᵀ ÷ {root}", "(Q ÷ {root})Kᵀ")
SAME_EXACTLY = "the two agree to the last digit: dividing by {root:g}, a power of two, is exact in binary."
SAME_ROUNDED = "the two orders differ by at most {gap:.1e}, rounding."
SUM_ROW, SUM_ROWS = "z = the sum", "weight × English word"
SOFTMAX_ROW = (
    "Row “{word}”: the largest weight is {top:.4f}, the smallest {low:.1e}: small, never exactly 0 "
    "without a mask. In the decoder's self-attention, {hidden} of the row's {t} cells are exactly 0."
)
OUTPUT_ROW = (
    "In row “{word}”, head {head}'s share is {share:.0%} of O's length (the other heads and b^O give the "
    "rest). Each row of Y' has mean {mean:.1e} and standard deviation {std:.4f} before the norm's γ and β."
)
CHECK_COLUMNS = ("step", "numbers", "shape", "largest |value|", "gap (float64)", "gap (float32)", "")
CHECK_NAMES = {  # CHECKED's names as the table says them
    "memory": ("1", "M, encoder output"),
    "state": ("1", "Y, decoder state"),
    "query": ("2", "Q, head"),
    "key": ("2", "K, head"),
    "value": ("2", "V, head"),
    "scores": ("3", "QKᵀ"),
    "scaled": ("4", "QKᵀ / √d_k"),
    "probs": ("5", "A"),
    "context": ("6", "Z = AV"),
    "output": ("7", "O"),
    "residual": ("7", "Y + O"),
    "normed": ("7", "LayerNorm(Y + O)"),
}
CHECK_OK, CHECK_BAD = "✓", "✗"
CHECK_LINE = (
    "**{ok} of {n}** steps agree with the forward pass within 1e-5 (in float32, relative to the "
    "numbers' size where they pass 1): largest gap {gap64:.1e} in float64, {gap32:.1e} in float32."
)
GOLD_SAME = "Dashed red boxes: the English words the grammar's alignment links each French word to."
GOLD_OTHER = "The grammar's own French differs from the model's here, so no alignment is outlined."
NOT_GRAMMAR = "The grammar cannot write this sentence, so there is no gold alignment to outline."
ALIGN_LINE = (
    "On this sentence head {head} puts its largest weight on an aligned English word for {right} of "
    "{total} French words."
)
