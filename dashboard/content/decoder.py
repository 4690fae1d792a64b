"""The explore page's decoder views (next word, generate, logit lens, attention sinks, induction heads):
their own text. Data, not code: dashboard/views/explore/decoder.py, generate.py and induction.py fill
the {fields}. Captions go through st.caption / st.markdown; user words and tokens are escaped by the
views before they are put in. Layers and heads are shown counted from 1; links count them from 0.
"""

from __future__ import annotations

# ---- which views a model has -----------------------------------------------------------------------

DECODER_ONLY = (
    "The {view} view reads a decoder (causal attention, trained to predict the next token). This "
    "model is an encoder; pick SmolLM2-135M (a small LLM that reads English) or the letters GPT-2 "
    "(trained here) in the model picker. Showing the head view."
)
ENCODER_ONLY = (
    "The {view} view reads a BERT encoder's query and key weights; this model is a decoder. "
    "Showing the head view."
)
MASK_DECODER = (
    "\\[MASK\\] means nothing to a decoder: GPT-2 guesses the token after the text, not a hidden "
    "word. See the Next word view."
)

# ---- next word ---------------------------------------------------------------------------------------

NEXT_TITLE = "The model's {n} likeliest next tokens after the text"
NEXT_X = "probability"
NEXT_CAPTION = (
    "How the guess is made: the last position's hidden state, after the final layer norm, is "
    "multiplied by the token embeddings (the same matrix that embedded the input, used backwards), "
    "giving one score per token of the vocabulary ({vocab:,} tokens); the softmax turns the scores "
    "into probabilities. Causal attention means this last position is the only one that has seen the "
    "whole text. {pieces}"
)
NEXT_PIECES = {  # by how the model cuts text (core/models/reading.py)
    "byte pieces": "A token is often a piece of a word, with its leading space shown as “␣”.",
    "letters": "This model's tokens are the letters a to z and its start token.",
    "word pieces": "A token is often a piece of a word.",
}
NEXT_SENTENCE = "After “{cut}{tail}”, the model's first choice is **{token}** ({p:.1%})."
NEXT_CUT = "…"  # {cut}: the text's start left out of the quote

# ---- generate --------------------------------------------------------------------------------------

GEN_TOKENS_LABEL = "Tokens to generate (1–{most})"
GEN_SAMPLE_LABEL = "Sample"  # its column is narrow: "seeded" is said in the help
GEN_SAMPLE_HELP = (
    "Off: greedy, always the likeliest token. On: draw each token from softmax(scores / temperature) "
    "with a seeded random generator, so the same seed gives the same text."
)
GEN_TEMPERATURE_LABEL = "Temperature"
GEN_TEMPERATURE_HELP = "Below 1 sharpens the distribution (closer to greedy); above 1 flattens it."
GEN_SEED_LABEL = "Seed"
GEN_STEP_LABEL = "Step (generated token)"
GEN_PROGRESS = "Generated {done} of {total} tokens"
GEN_ASK_WHAT = "Generating {n} tokens"  # long_work's ask line: "… takes about 6 s on this machine"
GEN_BUTTON = "Generate {n} tokens"
GEN_PREV, GEN_NEXT = "Previous token", "Next token"
GEN_LAYER_LABEL = "Layer (1–{n})"
GEN_TEXT = "**Step {step} of {n}:** {before}{space}**{token}**"
GEN_TOP_TITLE = "Step {step}: the likeliest next tokens"
GEN_TOP_TITLE_SAMPLED = "Step {step}: drawn at temperature {temperature:g}"
# short: it shares the row with the distribution chart (x axis and caption say "from the last position")
GEN_ATTENTION_TITLE = "Step {step}, layer {layer}: where each head looks"
GEN_ATTENTION_X = "token so far (the newest on the right)"
GEN_ATTENTION_Y = "head"
GEN_HOW = (
    "{mode}. Each step runs only the newest token through the model: the keys and values of every "
    "earlier token are kept in a **KV cache** and reused, so a step reads {cached} cached positions "
    "instead of recomputing them. The chart is that step's attention: one row per head of the chosen "
    "layer, from the position that predicts (the newest token) to every token so far."
)
GEN_GREEDY = "Greedy: at each step the likeliest token is taken"
GEN_SAMPLED = (
    "Sampled at temperature {temperature:g} with seed {seed}: a link with the same seed gives the same text"
)
GEN_CUT = (
    "The prompt has {prompt} tokens and the model reads at most {context}: {asked} more would pass "
    "it, so {kept} are generated, the most that fit."
)
GEN_NUMPY = (
    "Generation runs on the NumPy engine (with its KV cache); the PyTorch reference runs the text only."
)

# ---- logit lens ------------------------------------------------------------------------------------

LENS_TITLE = "Logit lens: each layer's guess for the next token"
LENS_X = "position (its token; the guess is for the token after it)"
LENS_Y = "read after"
LENS_EMBEDDINGS = "embeddings"
LENS_LAYER = "layer {n}"
LENS_BAR = "probability"
LENS_CAPTION = (
    "nostalgebraist (2020): read each layer's hidden state as if it were the last, through the final "
    "layer norm and the unembedding. Each cell is that reading's likeliest next token at one "
    "position, shaded by its probability. The bottom row is the embeddings alone; the top row is the "
    "model's real output."
)
# computed from the grid on screen (core.measures.decoder_reads.settled_rows)
LENS_SETTLED = (
    "At {early} of {n} positions the model's final guess is already on top after {median} (the "
    "median) and stays there up to the output; at the other {late} it appears only in the last layer."
)
LENS_SETTLED_NONE = (
    "At none of the {n} positions does a reading before the last layer agree with the model's final "
    "guess: here the guesses form in the last layer."
)
LENS_SETTLED_ALL = (
    "At all {n} positions the model's final guess is already on top after {median} (the median)."
)
LENS_ECHO = (
    "The bottom row reads the embeddings before any layer: at {own} of {n} positions it names the "
    "position's own token, an echo of the input rather than a guess at the next one."
)
LENS_LONG = "The lens shows the last {n} positions of this text ({total} tokens); the hover names each."

# ---- attention sinks -------------------------------------------------------------------------------

SINK_TITLE = "Share of attention that goes to the first token"
SINK_BAR = "share to token 1"
SINK_CAPTION = (
    "Xiao et al. (2023), *Efficient Streaming Language Models with Attention Sinks*: many heads of "
    "a decoder put most of their weight on the first token whatever it is, a place to park attention "
    "when nothing else fits, since the softmax must give its weight somewhere. Each cell is one head's "
    "mean weight on the first token (“{first}”), over every later position of this text (the first "
    "token can only see itself, so it is left out)."
)
SINK_SUMMARY = (
    "{n_sinks} of {n_heads} heads send more than half of their attention to the first token; the "
    "strongest is layer {layer}, head {head} ({share:.0%})."
)
SINK_ONE_TOKEN = "A sink needs a second token to look back: type a longer text."
SINK_HEAD = "This head sends {share:.0%} of its attention, on average, to the first token (“{first}”)."

# ---- induction heads -------------------------------------------------------------------------------

IND_LENGTH_LABEL = "Length of one copy (tokens)"
IND_SEED_LABEL = "Seed of the random tokens"
IND_TOP_LABEL = "Induction heads to switch off, at most (each scoring {minimum:.2f} or more)"
IND_TITLE = "Prefix-matching score of each head"
IND_BAR = "prefix matching"
IND_CAPTION = (
    "Olsson et al. (2022), *In-context Learning and Induction Heads*. The input is {length} random "
    "tokens (seed {seed}), then the same {length} again; this page's own text is not used. From a "
    "token in the second copy, an induction head looks at the token that came right **after** the "
    "same token in the first copy, and copies it forward. The score is a head's mean weight on that "
    "token, over the second copy: 1 for a perfect induction head, about 1/position for a head that "
    "spreads its weight evenly. A head counts as an induction head from {minimum:.2f} on (the train "
    "page's rule too); only those are switched off."
)
IND_LOSS_TITLE = "Loss on each copy (lower is better)"
IND_LOSS_Y = "mean cross-entropy (nats)"
IND_LOSS_NAMES = {
    "first": "first copy (fresh random tokens)",
    "repeat": "second copy",
    "ablated": "second copy, {k} off",
}
IND_SUMMARY = (
    "Random tokens cannot be predicted the first time: loss **{first:.2f}** nats (chance is "
    "ln {vocab:,} = {chance:.2f}{worse}). The second time the model has seen them: loss **{repeat:.2f}**. "
    "With {which} switched off ({heads}), the second copy's loss is **{ablated:.2f}**, {change}."
)
IND_CUT_ALL = "the {k} {heads_word} scoring {minimum:.2f} or more"  # every one: fewer than the view allows
IND_CUT_TOP = "the top {k} of the {n} heads scoring {minimum:.2f} or more"
IND_NONE = (
    "Random tokens cannot be predicted the first time: loss **{first:.2f}** nats (chance is "
    "ln {vocab:,} = {chance:.2f}{worse}). The second time the model has seen them: loss **{repeat:.2f}**. "
    "No head scores {minimum:.2f} or more on these tokens (the highest: layer {layer}, head {head}, "
    "{score:.2f}), so none counts as an induction head and none is switched off."
)
IND_CHANGE = "{rise:+.2f} nats, which takes back {undone:.0%} of what seeing the tokens before had gained"
IND_AGAINST = (
    "{rise:+.2f} nats: switching them off does not undo the copying, against what their scores suggest. {why}"
)
IND_WHY_REPEATS = (
    "Random tokens repeat within a copy here ({repeats} of {length}), so a token's earlier occurrence "
    "does not say what comes next; try a shorter copy"
)
IND_WHY_OTHER = "At this length, parts of the model other than these heads carry the copying"
IND_WORSE_THAN_CHANCE = (
    "; worse than chance: the model gives the tokens that come less probability than a uniform guess"
)
IND_LETTERS_LONG = (
    "This model was trained on runs of {low} to {high} different letters; a copy of {length} random "
    "letters is unlike them: letters repeat within it."
)
IND_NO_COPY = (
    "This model does not predict the second copy better than the first ({first:.2f} vs {repeat:.2f} "
    "nats): whatever its heads' scores, it does not use the repetition here. A head's attention "
    "pattern is not yet the model's behaviour."
)
IND_TOO_LONG = "Two copies of {asked} tokens pass the model's {context}-token context; using {kept}."
