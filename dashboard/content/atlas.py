"""The head atlas page's own text and its corpus. Data, not code: dashboard/views/atlas/ draws it.

The corpus (atlas_corpus.txt, one sentence a line, "#" lines are comments) was written for this
project: original sentences, released under the project's licence, free to reuse. They vary in
length (5 to 30 words), topic and form: questions, relative and subordinate clauses, quotations,
numbers and dates, lists, pronouns, semicolons. The statistics follow Clark et al. (2019), "What
Does BERT Look At? An Analysis of BERT's Attention" (core/measures/atlas.py).

Text goes through st.markdown / st.caption, so literal brackets are escaped (\\[CLS\\]).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.measures.atlas import (
    BROAD,
    BROAD_ENTROPY,
    FIRST_TOKEN,
    INDUCTION,
    INDUCTION_SCORE,
    MIXED,
    ROLE_SHARE,
    SHARE_ROLES,
)

CORPUS_FILE = Path(__file__).with_name("atlas_corpus.txt")


@functools.cache
def corpus() -> tuple[str, ...]:
    """The built-in sentences, in file order."""
    lines = CORPUS_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


@dataclass(frozen=True)
class StatText:
    label: str  # the picker's and the table's name
    title: str  # the grid's title
    fmt: str  # printf-style "%.<n>f", for the table, the cells and the hover (see printed())
    explain: str  # one line, on the page
    share: bool = True  # a share of attention in [0, 1] (fixed colour range)


STAT_TEXT: dict[str, StatText] = {
    "to_cls": StatText(
        "→ [CLS]",
        "Share of attention to [CLS]",
        "%.3f",
        "the share of each token's attention that goes to \\[CLS\\], the special token that opens the input.",
    ),
    "to_sep": StatText(
        "→ [SEP]",
        "Share of attention to [SEP]",
        "%.3f",
        "the share that goes to \\[SEP\\], the "
        "special token that closes it. Clark et al. found many of BERT's heads put most of their "
        "attention there, perhaps as a no-op when the head's pattern does not apply.",
    ),
    "to_punct": StatText(
        "→ punct.",
        "Share of attention to punctuation",
        "%.3f",
        "the share that goes to tokens made only of punctuation marks (. , ; ? ! quotes, dashes).",
    ),
    "to_self": StatText(
        "→ self",
        "Share of attention to the token itself",
        "%.3f",
        "the share a token keeps on itself (the diagonal of the head's map).",
    ),
    "to_prev": StatText(
        "→ prev.",
        "Share of attention to the previous token",
        "%.3f",
        "the share that goes to the token just before (averaged over the tokens that have one).",
    ),
    "to_next": StatText(
        "→ next",
        "Share of attention to the next token",
        "%.3f",
        "the share that goes to the token just after (averaged over the tokens that have one).",
    ),
    "entropy": StatText(
        "entropy",
        "Entropy of a row, in bits",
        "%.2f",
        "how spread out a token's attention "
        "is, in bits: 0 means all of it on one token, 4 bits is as spread as an even split over 16.",
        share=False,
    ),
    "entropy_norm": StatText(
        "spread",
        "Spread: entropy ÷ its largest possible value",
        "%.3f",  # three decimals, as the shares: the "broad" threshold (0.8) is read from it
        "the entropy divided "
        "by its largest possible value for the sentence's length (log₂ of the token count), so "
        "short and long sentences compare: 0 = one token, 1 = an even split over all of them.",
    ),
    "distance": StatText(
        "distance",
        "Mean distance attended to, in tokens",
        "%.1f",
        "how far away, in tokens, the "
        "attention lands on average (Σⱼ aᵢⱼ·|i − j|): about 1 for a previous-token head, more for "
        "heads that read across the sentence.",
        share=False,
    ),
    "to_first": StatText(
        "→ first",
        "Share of attention to the first token",
        "%.3f",
        "the share that goes to the text's first token. Many of a decoder's heads park attention they "
        "do not need there, an *attention sink* (Xiao et al. 2023).",
    ),
    "induction": StatText(
        "induction",
        "Induction score on random tokens repeated twice",
        "%.3f",
        "a test of its own, not an average over the corpus: on random tokens repeated twice, the "
        "share of attention a token of the second copy puts on the token that followed it in the "
        "first copy (prefix matching, Olsson et al. 2022): the head that completes a pattern.",
    ),
}
# A decoder's tokens see only what came before them: two statistics read differently there.
DECODER_EXPLAIN = {
    "entropy_norm": "the entropy divided by its largest possible value for what the token can see "
    "(log₂ of the tokens up to it), so short and long contexts compare: 0 = one token, 1 = an even "
    "split over everything before it.",
    "distance": "how far back, in tokens, the attention lands on average (Σⱼ aᵢⱼ·(i − j)): about 1 "
    "for a previous-token head, large for a head that reads the first token.",
}
ROLE_STAT = "role"  # the picker's entry for the map of roles

# The statistics a role is read from, and the threshold it is compared with (core.measures.atlas.head_roles).
THRESHOLDS = {
    **{stat: ROLE_SHARE for _, stat in SHARE_ROLES},
    "to_first": ROLE_SHARE,
    "induction": INDUCTION_SCORE,
    "entropy_norm": BROAD_ENTROPY,
}


def printed(name: str, values: np.ndarray | float) -> np.ndarray:
    """The values to print with STAT_TEXT[name].fmt: the values themselves, except just under a role
    threshold where rounding would print the threshold itself (0.4997 as "0.500" on a head that is
    "mixed"): there the largest number the format prints below it (0.499), so a printed number never
    contradicts the head's role. Shares and the spread print 3 decimals, so this moves a value by less
    than 0.001, and only within 0.0005 under 0.5 or 0.8."""
    values = np.asarray(values, dtype=np.float64)
    threshold = THRESHOLDS.get(name)
    if threshold is None or not values.size:
        return values
    fmt = STAT_TEXT[name].fmt
    step = 10.0 ** -int(fmt[2:-1])  # "%.3f" -> 0.001
    as_printed = np.vectorize(lambda v: float(fmt % v), otypes=[np.float64])(values)
    rounds_up = (values < threshold) & (as_printed >= threshold)
    return np.where(rounds_up, threshold - step, values)


def printed_text(name: str, values: np.ndarray) -> np.ndarray:
    """printed() values as strings, formatted with STAT_TEXT[name].fmt (same shape)."""
    fmt = STAT_TEXT[name].fmt
    return np.vectorize(lambda v: fmt % v, otypes=[object])(printed(name, values))


ROLE_STAT_LABEL = "role of each head"


@dataclass(frozen=True)
class RoleText:
    slug: str  # in the URL
    cell: str  # printed in the role map's cells
    color: str  # the role map's fill (light, so dark text reads on it)


ROLE_TEXT: dict[str, RoleText] = {
    "[CLS] sink": RoleText("cls", "[CLS]", "#8dd3c7"),
    "[SEP] sink": RoleText("sep", "[SEP]", "#ffed6f"),
    "punctuation": RoleText("punct", "punct.", "#bebada"),
    "self": RoleText("self", "self", "#fb8072"),
    "previous token": RoleText("prev", "prev.", "#80b1d3"),
    "next token": RoleText("next", "next", "#fdb462"),
    INDUCTION: RoleText("induction", "induct.", "#fccde5"),
    FIRST_TOKEN: RoleText("first", "first", "#8dd3c7"),  # the decoder's [CLS]: the same colour
    BROAD: RoleText("broad", "broad", "#b3de69"),
    MIXED: RoleText("mixed", "mixed", "#e0e0e0"),
}
ROLE_BY_SLUG = {text.slug: role for role, text in ROLE_TEXT.items()}

TITLE = "Head atlas: what each head does"
INTRO = (
    "Every head of the model, measured over a few hundred sentences: where its attention usually "
    "goes and how spread out it is, averaged over every token (longer sentences weigh more). After "
    "Clark, Khandelwal, Levy & Manning (2019), *What Does BERT Look At?*"
)
CORPUS_CAPTION = (
    "The built-in corpus: {n} English sentences written for this project (questions, quotations, "
    "numbers, lists, clauses; 5 to 30 words each)."
)
ROLE_RULES = (
    f"A head is named after where **at least {ROLE_SHARE:.0%}** of its attention goes "
    "(\\[CLS\\], \\[SEP\\], punctuation, itself, the previous or the next token; the largest share "
    f"wins). Otherwise it is **broad** when its spread is at least **{BROAD_ENTROPY:.2f}** (its "
    "attention is nearly as even as it can be), and **mixed** when neither holds."
)
ROLE_RULE_LINES = (
    f"**Sink or position role** (\\[CLS\\] sink, \\[SEP\\] sink, punctuation, self, previous token, "
    f"next token): at least {ROLE_SHARE:.0%} of the attention goes there on average: half or "
    "more means the head is mostly doing that one thing.",
    f"**broad**: no such target, and a spread of at least {BROAD_ENTROPY:.2f}: the head reads "
    "nearly evenly across the sentence (a bag-of-words average).",
    "**mixed**: neither: the head's attention depends on the words, which is where the interesting "
    "heads are. Open one on the explore page to see what it links.",
)
DECODER_ROLE_RULE_LINES = (
    f"**induction**: an induction score of at least {INDUCTION_SCORE:.2f}: from the second copy of "
    "a random sequence, half or more of the head's attention goes to the token that came next last "
    "time (an even spread would give about ln 2 / n, 0.014 for 50 tokens). It wins over the "
    "shares below: with nothing to copy, an induction head parks its attention elsewhere.",
    f"**Sink or position role** (first-token sink, punctuation, self, previous token): at least "
    f"{ROLE_SHARE:.0%} of the attention goes there on average. A decoder cannot see the next "
    "token, and its tokenizer adds no end token, so those roles are not measured.",
    ROLE_RULE_LINES[1],
    ROLE_RULE_LINES[2],
)
DECODER_CAPTION = (
    "A decoder: each token sees only the tokens before it, so each sentence's first token (which "
    "sees only itself) is left out of the averages. The induction score is measured on {n} random "
    "tokens repeated twice (seed {seed}), the same test as the explore page's induction view."
)
SENTENCE_CAPTION = (
    "Measured on **your sentence only** ({n} tokens): one sentence is a small sample, so the "
    "numbers and roles are noisier than the corpus's."
)
ENGINE_NAMES = {"numpy": "NumPy", "torch": "PyTorch"}  # the engine that computed an atlas
ENGINE_NOTE = "the two engines agree within 0.00001, so the atlas is kept per model, whichever computed it"
CORPUS_SOURCE = {
    "memory": "opened from memory",
    "disk": "opened from the cache on disk",
    "computed": "computed now and saved",
    "computed, not saved": "computed now (the cache folder cannot be written: kept in memory only)",
}
GRID_CAPTION = (
    "Rows are layers, columns heads (both from 1). Hover a cell for every number; click a cell for a "
    "link that opens that head on the explore page."
)
FILTER_HELP = "Show only heads with these roles; the others are greyed out in the grid. None: all heads."
INTRO_SOURCE = (
    "Source of the idea: K. Clark, U. Khandelwal, O. Levy, C. D. Manning (2019), “What Does BERT "
    "Look At? An Analysis of BERT's Attention”, BlackboxNLP workshop at ACL (arXiv:1906.04341). "
    "Their BERT's heads parked attention on \\[SEP\\]; a smaller, fine-tuned model may park it "
    "elsewhere."
)
INTRO_SOURCE_DECODER = (
    "Source of the idea: K. Clark, U. Khandelwal, O. Levy, C. D. Manning (2019), “What Does BERT "
    "Look At?” (arXiv:1906.04341), for an encoder's heads; for a decoder's, the first-token sink of "
    "G. Xiao et al. (2023), “Efficient Streaming Language Models with Attention Sinks” "
    "(arXiv:2309.17453), and the induction heads of C. Olsson et al. (2022), “In-context Learning "
    "and Induction Heads” (arXiv:2209.11895)."
)
PRESENTER_CONTROLS = "Controls: what is measured, the grid, the role filter"
EXPLAIN_LABEL = "What the numbers mean, and how roles are named"

# ---- the corpus atlas, asked for first when it would take long (dashboard/long_work.py) -------------
ASK_WHAT = "Measuring every head on the {n} corpus sentences (once on this machine)"
BUTTON = "Measure every head ({n} runs)"
PREPARE = "`{command}` prepares it before class."
PROGRESS = "Measured every head on {done} of {total} sentences"
