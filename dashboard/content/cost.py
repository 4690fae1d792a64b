"""The cost page's own text. Data, not code: dashboard/views/cost/ fills the {fields}; user text is
escaped before it is put in.
"""

from __future__ import annotations

TITLE = "What attention costs"
INTRO = (
    "Every token scores every other token, so the scores of one head on n tokens form an n × n table: "
    "twice the length, four times the work and four times the memory. This page measures that price "
    "on the machine it runs on, then tries the answers the field has found (attend to a few "
    "positions, or rewrite the softmax so the table is never formed) on a real head of the model "
    "and in the whole model, and measures what each answer changes."
)
DEFAULT_TEXT = "The trophy wouldn't fit in the suitcase because it was too large."

PARTS = {
    "price": "1 · The price",
    "head": "2 · One head",
    "model": "3 · The whole model",
    "next": "4 · One more token",
}
ENCODER_PARTS = ("price", "head", "model")  # presenter mode's parts for an encoder (BERT)
DECODER_PARTS = ("price", "next")  # and for a decoder (GPT-2): the variants run in the BERT engine

# ---- 1. the price ---------------------------------------------------------------------------------
PRICE_HEADER = "1 · The price, measured on this machine"
PRICE_TITLE = "Time of steps 3–6 and of the projections, d = {d_model}, {n_heads} heads"
MEMORY_TITLE = "Peak memory"
# asking first (dashboard/long_work.py): "<PRICE_ASK> takes about 20 s on this machine."
PRICE_ASK = "Timing attention at {n} lengths, n = {first:,} … {last:,} tokens (once per server)"
PRICE_BUTTON = "Measure the price ({n} lengths)"
PRICE_PROGRESS = "Timed {done} of {total} lengths"
CURVE_LABELS = {
    "one head": "steps 3–6, one head",
    "heads": "steps 3–6, a layer's {n_heads} heads",
    "projections": "projections Q, K, V, W^O",
}
PRICE_CAPTION = (
    "Random inputs of the model's width (the cost depends on the shapes, not the values), timed "
    "with the lessons' own code: steps 3–6 are `attention_steps` (scores QKᵀ, scaling, softmax, "
    "the weighted sum), the projections are four n × {d_model} by {d_model} × {d_model} products. "
    "The fastest of five runs (other work on the machine only ever adds time); peak memory is what "
    "NumPy allocated during the call. The exponent in "
    "each label is the slope fitted to the longer half of the curve on these log-log axes: 2 means "
    "the time grows as n², 1 as n."
)
LIMIT_HOSTED = (
    "This public demo measures up to n = {max_n} (a layer's heads up to {max_heads}) so that one "
    "visitor's measurement cannot take the shared server's memory. Run it on your own machine for "
    "n up to 4096."
)
LIMIT_LOCAL = (
    "A layer's heads are measured up to n = {max_heads}: at 4096 they would hold about {gb:.1f} GB "
    "(the peak at {max_heads}, times four), more than a demo should take from a laptop."
)
CROSSOVER = (
    "**Where scoring overtakes projecting.** Measured here: the {n_heads} heads' steps 3–6 cost more "
    "than the projections from n ≈ **{measured}**. Counted in FLOPs: about 4·n²·d for the scores "
    "and the weighted sum against 8·n·d² for the projections, equal at n = 2d = **{flops:.0f}**. "
    "{why}"
)
CROSSOVER_NONE = "the {n_heads} heads' steps 3–6 never cost more than the projections up to n = {max_n}"
CROSSOVER_WHY_EARLY = (
    "The measured crossover comes earlier than the FLOP count says: the softmax and the n × n "
    "arrays it reads and writes cost memory traffic that FLOPs do not count, while a matrix "
    "product runs near the processor's peak."
)
CROSSOVER_WHY_LATE = (
    "The measured crossover comes later than the FLOP count says: on this machine the n × n "
    "products run faster per FLOP than the projections."
)
WEIGHTS = (
    "**The n × n weights alone**, for all {n_maps} heads ({n_layers} layers × {n_heads}) of {model}, "
    "in float32: **{mb512:,.1f} MB** at 512 tokens, **{gb32k:,.0f} GB** at 32k tokens, before a "
    "single score is used."
)
SOURCE_NOTE = (
    "The source article puts the growth as O(n²) and names sparse and linear attention as the "
    "answers; the measured exponents above are what that looks like on a real machine, where "
    "below a few hundred tokens fixed overheads and the projections hide it."
)

# ---- 2. one head --------------------------------------------------------------------------------
HEAD_HEADER = "2 · Efficient variants on a real head"
SENTENCE_LABEL = "Sentence"
VARIANT_LABEL = "Variant"
FULL_TITLE = "Full attention · layer {layer}, head {head}"
VARIANT_TITLE = "{variant} · layer {layer}, head {head}"
SAME_SCALE = "Both maps on one scale, 0 to 1; cells the pattern leaves out get exactly 0 (blank)."
ERRORS = (
    "**Its error against full attention**: mean row total variation **{tv:.3f}** (half the summed "
    "difference of a row's weights, averaged over rows: 0 is the same, 1 is disjoint), and the "
    "head's output moves by **{rel:.1%}** (‖o − o_full‖ / ‖o_full‖)."
)
ERRORS_SHORT = (
    "**Error against full attention:** mean row total variation **{tv:.3f}** (0 same, 1 disjoint); "
    "the head's output moves by **{rel:.1%}**."
)
TIMING_TITLE = "One head's output, time against n (d_k = {d_k})"
TIMING_CAPTION = (
    "The same functions as the map above, timed on random Q, K, V of this head's width, without "
    "forming the n × n matrix where the variant does not need it: a sparse pattern scores each row's "
    "own keys only (its index lists built once per length, as a kernel's layout is), linear "
    "attention and the Performer compute φ(Q)(φ(K)ᵀV). The fastest of seven runs (other work on "
    "the machine only ever adds time); exponents fitted to the longer half."
)
ALL_VARIANTS = "Every variant on this head, with the parameters above"
TABLE_COLUMNS = ("variant", "mean row TV", "output error", "complexity")
PARAM_NOTE = "The link's `{name}` value {value} {why}; using {fixed}, the nearest valid value."

VARIANT_TEXT = {
    "full": ("Full attention", "O(n²·d)", "softmax(QKᵀ/√d_k)V over every pair: the reference."),
    "window": (
        "Sliding window",
        "O(n·w·d)",
        "Token i sees only tokens j with |i − j| ≤ w (Longformer's local attention).",
    ),
    "strided": (
        "Strided",
        "O(n·(s + n/s)·d)",
        "Child et al. 2019's fixed pattern: i sees its own block of s positions and the last position "
        "of every block. With a fixed s the n/s summary keys still grow with n; the paper takes "
        "s ≈ √n, for O(n·√n·d).",
    ),
    "longformer": (
        "Longformer",
        "O(n·(w + g)·d)",
        "A window of w plus global tokens ([CLS] and [SEP]) that see and are seen by every token "
        "(Beltagy et al. 2020).",
    ),
    "bigbird": (
        "BigBird",
        "O(n·(w + g + r)·d)",
        "Window, global tokens and r random keys per row, seeded (Zaheer et al. 2020).",
    ),
    "linear": (
        "Linear attention",
        "O(n·d²)",
        "φ(x) = elu(x) + 1 instead of the exponential, so the output is φ(Q)(φ(K)ᵀV), computed "
        "right to left without the n × n table (Katharopoulos et al. 2020). The map is drawn from "
        "the same φ.",
    ),
    "performer": (
        "Performer",
        "O(n·m·d)",
        "FAVOR+: m positive random features whose dot products estimate the softmax kernel "
        "exp(q·k/√d_k), seeded (Choromanski et al. 2021). More features, less error.",
    ),
    "linformer": (
        "Linformer",
        "O(n·k·d)",
        "Keys and values projected along the sequence to k rows (Wang et al. 2020). A trained "
        "Linformer learns that projection; here it is random and seeded (each row mixes positions "
        "with weights summing to 1), so this shows the shape of the idea, not a trained model's "
        "error.",
    ),
}
PARAMS = {  # link name -> (label, lowest, highest, help)
    "w": ("Window radius w", 0, 512, "Token i sees tokens i − w … i + w."),
    "s": ("Stride s", 1, 512, "The block length, and the distance between summary positions."),
    "r": ("Random keys per row r", 0, 512, "BigBird's random keys, drawn once (seeded)."),
    "m": ("Random features m", 1, 1024, "The Performer's number of random features."),
    "k": ("Projected rows k", 1, 512, "Linformer's length after projection; at most the sentence's tokens."),
}
VARIANT_PARAMS = {
    "full": (),
    "window": ("w",),
    "strided": ("s",),
    "longformer": ("w",),
    "bigbird": ("w", "r"),
    "linear": (),
    "performer": ("m",),
    "linformer": ("k",),
}

# ---- 3. the whole model --------------------------------------------------------------------------
MODEL_HEADER = "3 · In the whole model"
EMBEDDING = (
    "**{variant} in every head of every layer** moves the sentence embedding by **{change:.4f}** "
    "(1 − cos between the mean-pooled last layers, as sentence-transformers pools this model; 0 is "
    "unmoved). The chart shows how far each layer's attention moved (mean row total variation over "
    "its heads; the changes add up, since each layer reads the last one's changed output)."
)
LAYERS_TITLE = "How each layer's attention changed: {variant}"
LAYER_AXIS = "layer"
TV_AXIS = "mean row total variation"
SWEEP_TITLE = "Window radius against the embedding's move"
PERFORMER_TITLE = "Performer's features m against the embedding's move"
CHANGE_AXIS = "embedding change, 1 − cos"
THRESHOLD_LABEL = "{threshold}"
SWEEP_ANSWER = (
    "**How small can the window be?** On this sentence ({n} tokens), a window of radius **{radius}** "
    "or more keeps the embedding within {threshold} of the full model's (radius {radius}: "
    "{change:.4f}{below})."
)
SWEEP_BELOW = "; radius {radius}: {change:.4f}"
SWEEP_NONE = (
    "**How small can the window be?** On this sentence ({n} tokens) no window short of the whole "
    "sentence keeps the embedding within {threshold} of the full model's."
)
SWEEP_GRID = " Radii 1–16 are each tried, then a grid up to the whole sentence ({tried} radii in all)."
PERFORMER_ANSWER = (
    "**The Performer** with m = {best_m} features moves the embedding by {best:.4f}; with m = "
    "{worst_m}, by {worst:.4f}. {verdict}"
)
PERFORMER_OK = "From m = {m} on it stays within {threshold}."
PERFORMER_NEVER = (
    "None of the m tried stays within {threshold}: random features estimate the softmax, noisily."
)
RUNNING = "Running the model with {what} in every head…"
SWEEPING = "Sweeping the window radius and the Performer's features (once per sentence)…"
NUMPY_ONLY = (
    "The variants run in the NumPy engine (one explicit argument of its forward pass), which cannot "
    "read this model: {reason}"
)

# ---- 4. one more token (decoders) ----------------------------------------------------------------
NEXT_HEADER = "4 · Generating one more token: with and without the KV cache"
NEXT_ENCODER_ONLY = (
    "This part applies to decoders, causal models that generate text one token at a time. Pick the "
    "letters GPT-2 in the model picker (offline; its context is 64 tokens), or, when the network "
    "reaches the Hugging Face Hub, `gpt2` (1,024 tokens) or `distilbert/distilgpt2`."
)
NEXT_ENCODER_HOSTED = (
    "This part applies to decoders, causal models that generate text one token at a time. Pick the "
    "letters GPT-2 in the model picker (its context is 64 tokens); the Hub's GPT-2s do not fit this "
    "public demo's memory: run the app on your own machine for `gpt2` (1,024 tokens)."
)
VARIANTS_ENCODER_ONLY = (
    "Parts 2 and 3, the efficient variants, run inside the NumPy BERT engine's forward pass; the "
    "GPT-2 engine has no variant argument, so they are shown for encoders (pick a BERT)."
)
NEXT_INTRO = (
    "A decoder writes one token at a time, and every new token attends to all the tokens before it. "
    "Without a cache each step runs the whole context through the model again; with the **KV "
    "cache**, each layer keeps the keys and values it already computed, and the new token needs "
    "only its own projections, its MLP and one row of attention."
)
NEXT_TITLE = "One more token at context n ({n_layers} layers, {n_heads} heads, d = {d_model})"
NEXT_CACHE_TITLE = "KV cache"
NEXT_LABELS = {"with the KV cache": "with the KV cache", "recomputing the context": "recomputing the context"}
NEXT_MEASURING = "Timing one more token at context n = {n} ({done} of {total} lengths; once per server)…"
NEXT_BUTTON = "Measure n = {first} … {last} (about {seconds})"
NEXT_COST = (
    "Measured so far: n = {measured} (n = {done} took {wall:.1f} s). The whole sweep up to n = "
    "{last:,}, these again included (the browser was drawing the page while they were timed), "
    "takes **about {seconds}** of this server's time (that last time scaled with n; a rough "
    "guide): {passes} passes through the model of up to {longest:,} tokens, keeping up to "
    "{mb:,.0f} MB of attention weights. It is measured once per server, then every visitor sees it."
)
NEXT_ONE_CONTEXT = (
    "This model holds {max_tokens} positions: too few context lengths for a curve. At n = {n}, one "
    "more token takes {cached:.3f} ms with the cache and {recomputed:.3f} ms recomputing the context."
)
NEXT_NO_CONTEXT = "This model holds a single position: there is no context to generate after."
NEXT_SAVED = (
    "At n = **{n:,}**, one more token takes **{cached:.1f} ms** with the cache and **{recomputed:.1f} "
    "ms** recomputing the context: {saved}. Fitted exponents: **n^{e_cached:.2f}** with the cache, "
    "**n^{e_recomputed:.2f}** without."
)
NEXT_FASTER = "the cache makes it **{ratio:.1f}×** faster"
NEXT_SLOWER = (
    "recomputing is **{ratio:.1f}×** faster here (at so short a context the cached path's fixed "
    "costs weigh more than the work it saves)"
)
NEXT_PICK = "Context n for the cache"
NEXT_METRIC = "KV cache at n = {n:,}"
NEXT_CACHE_LINE = (
    "The cache holds a key and a value per layer, head and position: 2 · {n_layers} layers · "
    "{n_heads} heads · {d_head} (d_head) · {n:,} positions = **{numbers:,} numbers**, "
    "**{mb} MB** in float32."
)
NEXT_CACHE_LINE_GQA = (
    "The cache holds a key and a value per layer, **key/value** head and position: 2 · {n_layers} "
    "layers · {kv_heads} key/value heads · {d_head} (d_head) · {n:,} positions = **{numbers:,} "
    "numbers**, **{mb} MB** in float32. Grouped-query attention: each key/value head serves "
    "{group} of the {n_heads} query heads. With a key and value for every query head (full "
    "multi-head attention) it would be **{mb_full} MB**, {group}× as much."
)
NEXT_CAPTION = (
    "Measured on the NumPy GPT-2 engine itself (core/cost/generation.py), random token ids: at "
    "each n, the context's cache is built once, then one more token is timed through the cached "
    "path and through a full pass over n + 1 positions, each with the last position's logits, "
    "the fastest of three. Exponents: the slope fitted to the longer half of each curve on these "
    "log-log axes. The cache line is the formula, 2·L·H·d_head·n numbers of 4 bytes; the chosen n "
    "is marked. {limit}"
)
NEXT_LIMIT_MODEL = (
    "The contexts stop at n = {last:,}: the model holds {max_tokens:,} positions, n + 1 of them used."
)
NEXT_LIMIT_SERVER = (
    "This server stops at n = {last:,}: a full pass keeps every layer's attention weights, n² "
    "numbers per head."
)
N_NOTE = (
    "The link's `n` value {shown} is outside this model's context: 1–{max_tokens:,}. Using "
    "{nearest:,}, the nearest valid value."
)
