"""The learn page's text for "your sentence in a real GPT-2": what loading a decoder says, and what
the decoder's steps say where they differ from BERT's (learned positions, LayerNorm first, the
causal mask, no LayerNorm after the residual, the MLP's tanh GELU).

Data, not code: dashboard/views/learn/decoder.py fills the {fields} and draws it. Texts go through
st.markdown, so they never hold user input (a model's name is escaped before it is filled in);
formulas go through st.latex.
"""

from __future__ import annotations

from core.models.shipped import SHIPPED_KEY
from core.models.smollm2 import SMOLLM2_KEY

# ---- which decoder -------------------------------------------------------------------------------

# SmolLM2 reads English, as the page's sentences are; where this copy does not hold it (or the hosted
# demo does not load it), the page opens on the letter GPT-2 shipped with the product, silently.
DEFAULT_DECODER = SMOLLM2_KEY
FALLBACK_DECODER = SHIPPED_KEY
HUB_DECODER = "distilbert/distilgpt2"  # the one to suggest when the Hub cannot be reached
# The decoders offered in the picker; what each Hub one is and its download size come from the
# registry (core.models.registry.CURATED_HUB_MODELS), said before the download starts.
DECODERS = (SHIPPED_KEY, SMOLLM2_KEY, HUB_DECODER, "gpt2")
SHIPPED_ABOUT = (
    "A 2-layer GPT-2 trained from scratch by this product (the train page) on letters: it reads a–z "
    "only, one token per letter, and drops everything else. For English, pick SmolLM2 or a Hub model."
)
SMOLLM2_ABOUT = (
    "SmolLM2-135M, a small LLM of the Llama family that reads English: 30 layers, 9 query heads "
    "sharing 3 key/value heads. Its block has four stops GPT-2's lacks: RMSNorm, RoPE, grouped "
    "queries and a gated MLP."
)
# said wherever SmolLM2 is shown on the hosted demo (core/models/bfloat16.py; bench/README.md measures it)
BFLOAT16_NOTE = (
    "On this public demo its weights are held in bfloat16, half the memory: its numbers can differ "
    "from the full model's from the third decimal on (`make run` on a laptop holds float32)."
)
OTHER_DECODER = "__other__"  # the picker's "type a Hub id or a folder" entry; never in a link
OTHER_LABEL = "Other: a Hub id or a local folder…"
DECODER_PICKER = "Decoder (GPT-2 or Llama family)"
DECODER_TYPED = "Hub id or local folder of a GPT-2"
DECODER_TYPED_HINT = "Type a GPT-2's Hub id (owner/name) or the path of a folder with its files, then Load."
# One line, when no decoder can be loaded because the Hub is out of reach: what to load later.
OFFLINE = "No decoder offline: when the network is there, load `{model}` here ({size}, once)."
NOT_A_DECODER = (
    "{model} is not a decoder: “Your sentence in a real BERT” shows an encoder's layers. Give a GPT-2 "
    "checkpoint here."
)
LLAMA_NOT_YET = (
    "{model} is a Llama-family decoder (RMSNorm, rotary positions, grouped-query attention); this "
    "walk-through covers GPT-2 blocks so far. The explore page shows its heads and what it predicts"
)
HOSTED_NONE = "This public demo offers no decoder yet; run the app on your own machine to load one."
HOSTED_ONLY = "This public demo loads only the decoders in its picker; showing {model}."
DECODER_EMPTY = "Type a sentence above, and the decoder will run on it."
DECODER_ABOUT = (
    "These are the real numbers of **{model}**, a {n_layers}-layer GPT-2 (d_model {d_model} = "
    "{n_heads} heads × d_k {d_k}): layer {layer} of {n_layers}, computed from its weights by this "
    "project's NumPy code. A decoder reads left to right: each token sees itself and the tokens "
    "before it. Its vectors have {d_model} numbers, so the wide matrices print their first {dims}."
)
DECODER_TRUNCATED = "Your text has {total} tokens; this mode keeps the first {kept} so every matrix fits."
TOKENS_CAPTION = "Tokens (T = {t}), decoded to text (a token's leading space is not shown):"

# ---- the decoder's steps: the extra views and their labels --------------------------------------

# The decoder's stops: BERT's seven, plus where GPT-2 does something BERT does not (their labels are
# in dashboard/content/learn.py's STEP_VIEW_LABELS, with the others).
DECODER_VIEWS = ("1", "ln", "2", "3", "4", "mask", "5", "6", "7", "mlp", "heads", "all")

EMBEDDINGS_FORMULA = r"X = E_{\text{token}}[w] + E_{\text{position}}[1..T]"
EMBEDDINGS_TEXT = (
    "GPT-2 looks up a learned vector for each token and adds a **learned** vector for its position "
    "(one row of a table of {n_positions}, trained like any weight: no sine waves, no LayerNorm "
    "here, no sentence type). Left the token's row, right its position's: X is their sum."
)
LAYER_INPUT_TEXT = (
    "Layer {layer}'s input is what layer {previous} handed on: the residual stream, never normalised "
    "in between (each block normalises its own copy first: next stop)."
)

LN_TITLE = "LayerNorm first (pre-LN)"
LN_FORMULA = (
    r"H = \operatorname{LayerNorm}_1(X) = \gamma_1 \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
    r" + \beta_1"
)
LN_TEXT = (
    "Here GPT-2 and BERT part ways. GPT-2 normalises the block's input **before** attention, and "
    "queries, keys and values are computed from the normalised H. X itself goes round the block "
    "untouched and is added back in step 7 (BERT normalises **after** that sum instead)."
)
LN_CAPTION = (
    "The spread of each token's row (standard deviation over its {d_model} numbers): in X from "
    "{x_lo:.3g} to {x_hi:.3g}; in H, normalised (ε = {eps:g}) then scaled by γ₁ and shifted by β₁, "
    "from {h_lo:.3g} to {h_hi:.3g}."
)
LN_CHARTS = ("X, the block's input", "H = LayerNorm₁(X): what Q, K and V read")

PROJECTIONS_FORMULA = r"Q_i = H\, W^Q_i + b^Q_i,\quad H = \operatorname{LayerNorm}_1(X)"
PROJECTIONS_TEXT = (
    "GPT-2's trained matrices (one product, cut in three) give each of the {n_heads} heads its own "
    "queries, keys and values of {d_k} numbers, from the normalised H of the previous stop."
)
SCALED_NOTE = (
    "These are every score the model computes, above the diagonal too: a token's query meets the "
    "keys of later tokens as well. The next stop throws those away."
)

MASK_TITLE = "Causal mask: a token sees only what came before it"
MASK_FORMULA = (
    r"\tilde S_{ij} = \begin{cases} S'_{ij} & j \le i \\ -\infty & j > i \end{cases}"
    r"\qquad A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{m \le i} e^{\tilde S_{im}}}"
)
MASK_TEXT = (
    "A decoder predicts the next token, so while it reads token i it must not see tokens after i. "
    "Before the softmax every score above the diagonal is set to −∞ (the cells marked −∞); "
    "e^−∞ = 0, so those weights come out **exactly 0** and each row shares its weight among the "
    "tokens up to itself. BERT has no such step: there every token sees every other."
)
MASK_CHARTS = ("S' (step 4)", "S' masked: −∞ above the diagonal", "A = softmax: exact zeros")
MASK_CAPTION = (
    "Each matrix has its own colour scale; hover a cell for its number. Above the diagonal are "
    "{n_above} cells: {n_inf} of them −∞ in the middle matrix; after the softmax the largest of them "
    "is {largest:g} ({how}). The first token can see only itself: its weight on itself is {first:.4f}. "
    "Every row still sums to 1 (from {lo:.6f} to {hi:.6f})."
)

SOFTMAX_NOTE = "The zeros above the diagonal are the causal mask's, from the previous stop."
OUTPUT_TITLE = "Output projection W^O and the residual (no layer norm)"
OUTPUT_FORMULA = (
    r"\begin{gathered} O = \operatorname{Concat}(Z_1, \dots, Z_H)\, W^O + b^O \\"
    r" X' = X + O \quad \text{(no LayerNorm here)} \end{gathered}"
)
OUTPUT_TEXT = (
    "All {n_heads} heads' Z side by side ({d_model} numbers per token) go through W^O and its bias "
    "b^O, and the block's input X (not H) is added back. Unlike BERT, nothing is normalised after "
    "the sum: the residual stream X' goes on as it is, to the MLP (next stop)."
)

MLP_TITLE = "After attention: the MLP, with GELU in its tanh form"
MLP_FORMULA = (  # four short lines: a longer one is wider than its half of a 1280 px screen
    r"\begin{gathered} Y = X' + \operatorname{GELU}(H' W_1 + b_1)\, W_2 + b_2 \\"
    r" H' = \operatorname{LayerNorm}_2(X') \\"
    r" \operatorname{GELU}(u) \approx \tfrac{u}{2}\,(1 + \tanh a) \\"
    r" a = \sqrt{2/\pi}\;(u + 0.044715\, u^3) \end{gathered}"
)
MLP_TEXT = (
    "Each token then goes through the same two-layer network on its own: normalised first again "
    "(pre-LN), widened to {d_ff} numbers, through GELU, and back to {d_model}, added to the residual "
    "stream. GPT-2 uses GELU's tanh approximation (BERT the exact form with erf); the two differ by "
    "at most {gelu_gap:.1e} on the curve below. Y is {after}."
)
MLP_CHARTS = ("LayerNorm₂(X'): what the MLP reads", "the MLP's output", "Y = X' + MLP: the block's result")
MLP_AFTER = "layer {next}'s input"
MLP_AFTER_LAST = "read through the final LayerNorm and the unembedding to predict the next token"
