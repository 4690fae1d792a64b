"""The nearest-neighbour search's own text (explore's similarity view). Data, not code:
dashboard/views/explore/neighbours.py fills the {fields}; words and sentences are escaped first.
"""

from __future__ import annotations

TITLE = "Where “{word}” sits among the corpus's words, {where}"
CAPTION = (
    "The {k} words of the built-in corpus ({n} sentences, the head atlas's) whose vectors {where} "
    "point most nearly the way “{word}” does here, by cosine. Every corpus sentence was read by the "
    "same model; a word in pieces is the mean of its pieces. At the embeddings a word can only find "
    "copies of itself (its vector is its identity plus its position); after the layers, context has "
    "moved it, and the neighbours show what it now resembles. Try “bank” in a money sentence and in a "
    "river sentence at the last layer."
)
LEFT_OUT = " Your sentence is one of the corpus's, so its own words are left out."
SAME_WORD = "{same} of the {k} are “{word}” itself (the corpus holds {total} in all)."
NONE_SAME = "None of the {k} is “{word}” itself: the nearest vectors belong to other words."
LINE = "{rank}. **{cosine:.3f}** · {sentence}"
SPECIAL = "\\[CLS\\] and \\[SEP\\] are not words of the corpus: pick a word to search for it."
UNAVAILABLE = "The corpus search needs the NumPy engine, which cannot read this model: {reason}"

# ---- the corpus vectors, asked for first (dashboard/views/explore/corpus_work.py) ----------------------
# also the query/key space's, which reads the same vectors
ASK_WHAT = "Reading the {n} corpus sentences with this model (once on this machine)"
BUTTON = "Read the corpus ({n} runs)"
PREPARE = "`{command}` prepares them before class."
PROGRESS = "Read {done} of {total} corpus sentences"
