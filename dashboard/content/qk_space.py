"""The query/key space's own text (explore's `view=qk`). Data, not code:
dashboard/views/explore/qk_space.py fills the {fields}; tokens are escaped first.
"""

from __future__ import annotations

TITLE = "Layer {layer}, head {head}: queries and keys of {n} corpus tokens"
AXIS = "principal direction {k} ({share:.0%} of the spread)"
NAMES = ("corpus queries", "corpus keys", "this sentence's queries", "this sentence's keys")
CAPTION = (
    "Every token of the built-in corpus ({sentences} sentences) twice: as the **query** it sends "
    "(blue) and as the **key** it offers (vermillion), for this one head, in one plane. The head's "
    "score for a pair is the dot product of the query and the key, so a query lands near the keys "
    "it scores high. Two things that leave every attention weight unchanged are taken out first, "
    "as AttentionViz does (Yeh et al. 2023): each set is **centred**, and the keys are **scaled to "
    "the queries' mean norm** (a head may multiply its queries and divide its keys by the same "
    "number). Then PCA squeezes the {d_k} dimensions into the two that spread the points most: "
    "together they keep {kept:.0%} of the spread, so nearness in the picture is only a guide. "
    "Hover a point for its token and sentence; your sentence's tokens are the large labelled marks."
)
TOKENS_NOTE = (
    "Tokens as the model reads them: word pieces apart and \\[CLS\\]/\\[SEP\\] included, whatever the "
    "toggles above say (every token has its own query and key)."
)
UNAVAILABLE = "The query/key space needs the NumPy engine, which cannot read this model: {reason}"
