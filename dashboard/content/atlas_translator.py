"""The atlas page's text for the translator trained here (issue 38 §3): its heads in three kinds, the
cross-attention's "aligner" role, what each number means and how each role is named. Data, not code:
dashboard/views/atlas/translator.py draws it; the numbers and thresholds are core/translate/atlas.py's.

Text goes through st.markdown / st.caption, so the tokens' angle brackets are escaped where needed
(markdown would read "<s>" as a tag): "\\<s\\>" and "\\</s\\>".
"""

from __future__ import annotations

from dataclasses import dataclass

from core.translate.atlas import (
    ALIGNER,
    ALIGNER_SCORE,
    BROAD,
    BROAD_ENTROPY,
    END_SINK,
    FIRST_TOKEN,
    MIXED,
    ROLE_SHARE,
)
from dashboard.content.atlas import ROLE_TEXT as ATLAS_ROLES

KIND_TITLES = {  # the grid's panel titles and the table's "kind" column
    "encoder": "Encoder: English reads English",
    "decoder": "Decoder: French reads the French so far",
    "cross": "Cross-attention: French reads English",
}
KIND_SHORT = {"encoder": "encoder", "decoder": "decoder", "cross": "cross"}


@dataclass(frozen=True)
class StatText:
    label: str  # the table's column, the hover's name
    cell: str  # before the number in a grid cell (plain text: Plotly escapes are the chart's job)
    explain: str  # one line on the page (markdown)


STAT_TEXT = {
    "alignment": StatText(
        "alignment",
        "align",
        "the share of French words whose largest weight, at the step that writes them, is on an "
        "English word the grammar links them to (words that render no English word, like “des” "
        "before a bare plural, are left out).",
    ),
    "reordered": StatText(
        "reordered",
        "reord.",
        "the same share over the French words that come in another order than their English ones "
        "(“chat noir” for “black cat”, “ne voit pas” for “does not see”).",
    ),
    "to_end": StatText(
        "→ </s>",
        "→ </s>",
        "the share of each row's attention on the English sentence's last token, \\</s\\>.",
    ),
    "to_start": StatText(
        "→ <s>",
        "→ <s>",
        "the share on \\<s\\>, the start token the decoder reads first (its first-token sink).",
    ),
    "to_self": StatText("→ self", "→ self", "the share a token keeps on itself."),
    "to_prev": StatText("→ prev.", "→ prev.", "the share on the token just before."),
    "to_next": StatText("→ next", "→ next", "the share on the token just after (the encoder sees it)."),
    "spread": StatText(
        "spread",
        "spread",
        "the entropy of a row divided by its largest possible value (0 = all on one token, 1 = an "
        "even split over what the token can see).",
    ),
}
# the number printed under a head's role in its cell: the statistic the role is read from
ROLE_CELL_STAT = {
    ALIGNER: "alignment",
    END_SINK: "to_end",
    FIRST_TOKEN: "to_start",
    "self": "to_self",
    "previous token": "to_prev",
    "next token": "to_next",
    BROAD: "spread",
    MIXED: "spread",
}


@dataclass(frozen=True)
class RoleText:
    cell: str  # the role's name in the grid's cells
    color: str  # the cell's fill (light: dark text reads on it)


ROLE_TEXT = {  # the atlas's own colours for the roles the other models share
    ALIGNER: RoleText("aligner", "#bc80bd"),
    END_SINK: RoleText("</s> sink", ATLAS_ROLES["[SEP] sink"].color),  # the job BERT's [SEP] does
    FIRST_TOKEN: RoleText("<s> sink", ATLAS_ROLES[FIRST_TOKEN].color),
    **{
        role: RoleText(ATLAS_ROLES[role].cell, ATLAS_ROLES[role].color)
        for role in ("self", "previous token", "next token", BROAD, MIXED)
    },
}

TITLE = "Head atlas: the translator's heads"
INTRO = (
    "The English→French translator trained here reads with three kinds of attention: the **encoder**'s "
    "heads read the English sentence, the **decoder**'s heads read the French written so far, and the "
    "**cross-attention** heads read the English while each French word is written. Every head below "
    "is measured on the same sentence pairs, and named after what it mostly does."
)
CORPUS = (
    "Measured on the {n} held-out sentence pairs training is evaluated on (the grammar's pairs from "
    "seed {seed}, each with an adjective and noun never trained together), **teacher-forced**: the "
    "decoder reads the gold French so far, so every head is seen writing the right sentence. "
    "{aligned:,} French words have a gold English word; {reordered:,} of them come in another order."
)
YARDSTICK = (
    "A yardstick: a head that read English word *t* while writing French word *t* would score "
    "{plain:.0%} alignment and {reordered:.0%} on the reordered words."
)
PRESENTER_LINE = (
    "{n} held-out sentence pairs, teacher-forced. **align**: the share of French words whose strongest "
    "look is on their English word (**reord.**: on the words French puts in another order); an "
    "**aligner** from {score:.2f}. Reading English word *t* for French word *t* would score {plain:.0%} "
    "({reordered:.0%} reordered)."
)
GRID_TITLE = "Role of each head · {n} sentence pairs"
GRID_CAPTION = (
    "Layers and heads are numbered from 1. Hover a cell for every number; click a cell for a link "
    "that opens that head on the explore page (or use the table's links)."
)
PICKED = "**{kind}, layer {layer}, head {head}**: {role}"
OPEN = "Open {kind} layer {layer}, head {head} on explore"
ON_SENTENCE = (
    "The translator's atlas is measured on its own sentence pairs only; the sentence typed for the "
    "other models is not used here."
)
MEANS = "**What the numbers mean** (per head, averaged over every row of every pair)"
RULES = "**How a head's role is named**"
ROLE_RULE_LINES = (
    f"**aligner** (cross-attention): an alignment of at least {ALIGNER_SCORE:.2f}: for most French words "
    "the head looks hardest at the very English word being translated. It wins over the rules below.",
    f"**Sink or position role** (\\</s\\> sink, \\<s\\> sink, self, previous token, next token): at "
    f"least {ROLE_SHARE:.0%} of the attention goes there on average. The decoder cannot see the next "
    "token; the cross-attention has no “self” (its rows and columns are different sentences).",
    f"**broad**: no such target, and a spread of at least {BROAD_ENTROPY:.2f}: the head reads nearly "
    "evenly (a bag-of-words average).",
    "**mixed**: neither: where the head looks depends on the words. Open it on the explore page.",
)
EXPLAIN_LABEL = "What the numbers mean, and how roles are named"
