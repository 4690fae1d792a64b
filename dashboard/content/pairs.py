"""What the explore and learn pages say about a sentence pair (sentence B). Data, not code:
dashboard/views/explore/pairs.py fills the {fields}. Shown through st.caption / st.markdown, so
literal brackets are escaped (\\[CLS\\]); hover text (Plotly) is HTML, so it is not.
"""

from __future__ import annotations

MAX_PAIR_CHARS = 1000  # sentence B's box and the link's `pair`: a second sentence, not a document

PAIR_LABEL = "Sentence B (optional: read with the first as a pair)"
PAIR_HELP = (  # shown for every model: no BERT token names, which a letter or byte model does not have
    "A model trained on sentence pairs, as BERT was, reads both as one input, with a segment id saying "
    "which sentence each token is in; a decoder reads them as one text, A then B. The head, lines and "
    "model views then mark the two sentences and measure how much attention crosses between them."
)
PAIR_PLACEHOLDER = "e.g. It was too big."

# one line each: how this model reads a pair
HOW_SEGMENTS = (
    "Read as a pair, the model's own way: \\[CLS\\] A \\[SEP\\] B \\[SEP\\], A's tokens with segment "
    "id 0, B's with segment id 1."
)
HOW_DECODER = (
    "This decoder has no segment ids, so it reads the pair as one text, A then B. Its causal mask lets "
    "B's tokens read A but never A's read B: only B → A can cross."
)
HOW_TRANSLATOR = "The translator reads one sentence: sentence B is not used here."
ONE_SENTENCE_MODE = "This mode reads one sentence: sentence B is used only with the real BERT."

ONLY_SPACES = "Sentence B holds only spaces, so sentence A is shown alone."
PAIR_CUT = "Sentence B was cut to its first {most:,} characters."
OTHER_VIEWS = "Sentence B is read in the head, lines and model views; this view reads sentence A alone."
LEARN_PAIR_TOO_LONG = (
    "sentences A and B together are {total} word pieces; this page shows at most {most}, so that every "
    "matrix fits on the screen. Shorten one of them"
)
NO_B_TOKENS = "None of sentence B's tokens fit in what this page reads, so nothing can cross."

# the statements: a head's crossing share, and its rank
HEAD_STATEMENT = (
    "**Across the pair:** in layer {layer}, head {head}, {cross:.0%} of the words' attention lands on "
    "the other sentence (A → B {a_to_b:.0%}, B → A {b_to_a:.0%}); rank {rank} of {n} heads."
)
HEAD_STATEMENT_CAUSAL = (
    "**Across the pair:** in layer {layer}, head {head}, B's words put {cross:.0%} of their attention "
    "on A's words (A cannot read B: the mask); rank {rank} of {n} heads."
)
LAYER_STATEMENT = (
    "**Across the pair:** in layer {layer}, head {head} reads across the most: {cross:.0%} {crosses}{shown}."
)
LAYER_SHOWN = " (head {head}, drawn here: {cross:.0%})"
MODEL_STATEMENT = (
    "**Across the pair:** layer {layer}, head {head} reads across the most ({cross:.0%} {crosses}); "
    "hover a head for its share."
)
CROSSES = "of the words' attention lands on the other sentence"
CROSSES_CAUSAL = "of B's words' attention lands on A's words; A cannot read B"
SPECIALS_NOTE = (
    "Special tokens ({specials}) belong to neither sentence: their own rows are left out, and the "
    "attention a word puts on them stays in its total but never counts as crossing."
)

RANKING_LABEL = "Heads that read across the pair"
RANKING_CAPTION = (
    "{how} Every head ranked by its share of the words' attention that lands on the other sentence "
    "(each word of A and B counts once). {specials}"
)
RANKING_CAPTION_CAUSAL = (
    "Every head ranked by the share of B's words' attention that lands on A's words (each word of B "
    "counts once; A's words cannot see B). {specials}"
)
RANKING_COLUMNS = {
    "rank": "rank",
    "layer": "layer",
    "head": "head",
    "cross": "crosses",
    "a_to_b": "A → B",
    "b_to_a": "B → A",
}
RANKING_TOP = 12  # rows shown

# the model view's hover (Plotly HTML)
HOVER_LINE = "across the pair: {cross:.0%} (A→B {a_to_b:.0%}, B→A {b_to_a:.0%})"
HOVER_LINE_CAUSAL = "B reads A: {cross:.0%} (A cannot read B)"
