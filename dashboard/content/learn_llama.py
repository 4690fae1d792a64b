"""The learn page's text for a Llama-family decoder (SmolLM2): where one of its blocks differs from a
GPT-2's, each difference a stop of its own: RMSNorm first, RoPE, grouped-query attention, the causal
mask (shared with GPT-2) and the SwiGLU MLP.

Data, not code: dashboard/views/learn/llama_views.py fills the {fields} (every figure is computed
from the model's own arrays) and draws it. Texts go through st.markdown, never holding user input;
formulas go through st.latex.
"""

from __future__ import annotations

# The stops of a Llama block, in the order the block computes them (labels: content.learn's
# STEP_VIEW_LABELS).
LLAMA_VIEWS = ("1", "rmsnorm", "2", "rope", "gqa", "3", "4", "mask", "5", "6", "7", "swiglu", "heads", "all")

LLAMA_ABOUT = (
    "These are the real numbers of **{model}**, a {n_layers}-layer decoder of the Llama family "
    "(width {d_model}; {n_heads} query heads of {d_k} numbers sharing {kv_heads} key/value heads): "
    "layer {layer} of {n_layers}, computed from its weights by this project's NumPy code. It reads "
    "left to right, like GPT-2, but its block differs in four places, each a stop below. Its vectors "
    "have {d_model} numbers, so the wide matrices print their first {dims}."
)

EMBEDDINGS_FORMULA = r"X = E_{\text{token}}[w] \quad \text{(no position vector)}"
EMBEDDINGS_TEXT = (
    "A Llama looks up one learned vector per token, and that is all: **no position is added**. "
    "Where a word stands enters later, inside every layer, by turning the queries and keys (the RoPE "
    "stop). So the same word has the same X wherever it appears."
)

RMS_TITLE = "RMSNorm first"
RMS_FORMULA = (
    r"H = \operatorname{RMSNorm}_1(X) = \gamma_1 \odot \frac{x}{\sqrt{\tfrac{1}{d}\sum_j x_j^2"
    r" + \varepsilon}}"
)
RMS_TEXT = (
    "Like GPT-2, the block normalises its input before attention, and X itself goes round the block "
    "to be added back. The norm is simpler than LayerNorm: no mean is subtracted and there is no "
    "shift β. Dividing each row by its root mean square keeps the row's direction and sets its length "
    "(RMS 1); {gain}"
)
# {gain}: the learned γ₁ of the layer shown, as it is (one number per dimension)
RMS_GAIN = (
    "then the learned gain γ₁ multiplies each dimension by a number of its own (in this layer from "
    "{g_lo:.3g} to {g_hi:.3g}), which changes the direction too: each row of H points {turn_lo:.1f}° "
    "to {turn_hi:.1f}° away from its row of X."
)
RMS_GAIN_SAME = (
    "then the learned gain γ₁, the same number ({g:.3g}) in every dimension of this layer, scales "
    "every row alike, so the direction is {kept}."
)
RMS_KEPT, RMS_REVERSED = "kept", "reversed"
RMS_CAPTION = (
    "The root mean square of each token's row: in X from {x_lo:.3g} to {x_hi:.3g}; divided by it "
    "(ε = {eps:g}) every row has RMS {unit_lo:.6f} to {unit_hi:.6f}; after the gain γ₁ (from "
    "{g_lo:.3g} to {g_hi:.3g}), H's rows range from {h_lo:.3g} to {h_hi:.3g}."
)
RMS_CHARTS = ("X, the block's input", "H = RMSNorm₁(X): what Q, K and V read")

PROJECTIONS_FORMULA = (
    r"\begin{gathered} Q_i = H\, W^Q_i, \quad K_g = H\, W^K_g, \quad V_g = H\, W^V_g \\"
    r" H = \operatorname{RMSNorm}_1(X), \quad \text{no biases} \end{gathered}"
)
PROJECTIONS_TEXT = (
    "Each of the {n_heads} query heads gets its own queries of {d_k} numbers, as in GPT-2, but "
    "there are only {kv_heads} key heads and {kv_heads} value heads (W^K and W^V are {d_model} × "
    "{kv_width}, not {d_model} × {d_model}). Below: head {head}'s queries, and the keys and values "
    "of the group it belongs to. These are before RoPE; the next stop turns Q and K."
)

ROPE_TITLE = "RoPE: positions enter by turning Q and K"
ROPE_FORMULA = (
    r"\begin{gathered} \tilde q_m = R(m\,\theta)\, q_m, \quad \tilde k_n = R(n\,\theta)\, k_n \\"
    r" \tilde q_m \cdot \tilde k_n = q_m\, R\big((n - m)\,\theta\big)\, k_n \\"
    r" \theta_i = b^{-2i/d_k},\; b = BASE \end{gathered}"
)
ROPE_TEXT = (
    "Each query and key is cut into {planes} pairs of numbers, and each pair is turned like a clock "
    "hand by an angle proportional to the token's position, every pair at its own speed. Values are "
    "not turned. Two turned vectors meet at the difference of their angles, so a score depends on "
    "the two vectors and on **how far apart** the tokens are, never on where the pair sits in the "
    "text. The first token (position 0) is not turned at all."
)
ROPE_CHARTS = ("Q, head {head}, before RoPE", "Q̃ = Q turned by position")
ROPE_DISTANCE_TITLE = "One query and one key of this head, moved along the text together"
ROPE_DISTANCE_TEXT = (
    "The query of “{query}” and the key of “{key}”, {rank}, are {gap} position(s) apart in your "
    "text. Placed anywhere else with the same gap, they score the same: the table turns the model's "
    "own two vectors to each pair of positions (counted from 0) and takes their dot product / √d_k. "
    "Changing the gap changes the score (the curve)."
)
# {rank}: where the key stands in the query's own row of weights (step 6), each weight computed
ROPE_RANK_MOST = "the token it weighs most ({weight:.3f})"
ROPE_RANK_AFTER = "the token it weighs most ({weight:.3f}) after {above}"
ROPE_ABOVE_FIRST = "the first token ({weight:.3f}; a first token often draws much weight, a sink)"
ROPE_ABOVE_SELF = "itself ({weight:.3f})"
ROPE_TABLE_COLUMNS = ("query at", "key at", "gap", "score")
ROPE_SAME = (
    "With the gap held at {gap}, the scores differ by at most {spread:.1e}, float32's rounding: the "
    "same number. In your text the model computed {computed:.6f} for this pair (step 4)."
)
ROPE_CURVE_TITLE = "Score of the same two vectors against the gap (key before query)"
ROPE_CURVE_AXES = ("positions between key and query", "score (scaled)")

GQA_TITLE = "Grouped-query attention: {n_heads} query heads share {kv_heads} key/value heads"
GQA_FORMULA = (
    r"\begin{gathered} g(i) = \left\lfloor i \,/\, \tfrac{H}{H_{kv}} \right\rfloor \\"
    r" Z_i = \operatorname{softmax}\!\Big(\tfrac{\tilde Q_i \tilde K_{g(i)}^\top}{\sqrt{d_k}}"
    r" + M\Big)\, V_{g(i)} \end{gathered}"
)
GQA_TEXT = (
    "Every group of {group} query heads reads the same keys and values: they differ only in what "
    "they ask (their queries), so their patterns still differ. What is saved is memory: while "
    "generating, a model keeps every earlier token's keys and values (the KV cache), and here it "
    "keeps {kv_heads} heads of them instead of {n_heads}."
)
GQA_GROUPS = "Who shares what: {groups}."
GQA_CACHE = (
    "The cache for {tokens:,} tokens, {n_layers} layers, float32: {gqa} MB (of 10⁶ bytes) with "
    "{kv_heads} key/value heads, against {full} MB if each of the {n_heads} query heads had its own "
    "({ratio:g}× less). The cost page works this out for any length."
)
GQA_PATTERNS = "The {group} heads of group {kv} (head {head} is one): the same keys, different queries"
GQA_DIFFER = (
    "The {group} heads read the same keys and values, yet their queries differ, and so do their "
    "patterns: the same cell differs by up to {differ:.3f} in weight between two of them."
)

SCORES_NOTE = (
    "Q̃ and K̃ are the turned queries and keys of the RoPE stop, so this product already depends on "
    "how far apart the tokens are."
)
SCORES_FORMULA = r"S = \tilde Q_i\, \tilde K_{g(i)}^\top"

OUTPUT_TITLE = "Output projection W^O and the residual"
OUTPUT_FORMULA = (
    r"\begin{gathered} O = \operatorname{Concat}(Z_1, \dots, Z_H)\, W^O \\"
    r" X' = X + O \quad \text{(no bias, no norm here)} \end{gathered}"
)
OUTPUT_TEXT = (
    "All {n_heads} heads' Z side by side ({d_model} numbers per token) go through W^O, which has no "
    "bias in a Llama, and the block's input X is added back. As in GPT-2, nothing is normalised "
    "after the sum: X' goes on to the MLP (next stop)."
)

SWIGLU_TITLE = "After attention: the gated MLP (SwiGLU)"
SWIGLU_FORMULA = (
    r"\begin{gathered} Y = X' + \big(\operatorname{SiLU}(H' W_{\text{gate}}) \odot H' W_{\text{up}}\big)"
    r"\, W_{\text{down}} \\ H' = \operatorname{RMSNorm}_2(X') \\"
    r" \operatorname{SiLU}(u) = \frac{u}{1 + e^{-u}} \end{gathered}"
)
SWIGLU_TEXT = (
    "Each token goes through the same network on its own, normalised first again. Instead of one "
    "widening matrix there are two, each to {d_ff} numbers: one passes through SiLU and acts as a "
    "gate, multiplying the other number by number; W_down brings the product back to {d_model}. "
    "In this layer, on your text, {closed:.0%} of the gate's values are below 0.1 in size: those "
    "numbers of the other branch are nearly shut off. Y is {after}."
)
SWIGLU_CHARTS = ("RMSNorm₂(X'): what the MLP reads", "the MLP's output", "Y = X' + MLP: the block's result")
SWIGLU_AFTER = "layer {next}'s input"
SWIGLU_AFTER_LAST = "read through the final RMSNorm and the unembedding to predict the next token"
SILU_EXPANDER = "SiLU beside ReLU and GELU"
ROPE_VECTORS_ON_PAGE = (
    "Q and K before and after the turn, dimension by dimension, are drawn below this on the page "
    "(without presenter mode)."
)
