"""The compare page's own text: the minimal-pair presets, the rules it states, and its captions.
Data, not code: dashboard/views/compare/ fills the {fields} and draws it.

Captions go through st.caption / st.markdown, so literal brackets are escaped (\\[CLS\\]).
"""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.content.continuation import REPEAT, SHUFFLED


@dataclass(frozen=True)
class Preset:
    title: str  # the preset button
    text: str  # sentence 1
    text2: str  # sentence 2
    focus: str  # the word looked from (a word reference: "it", "the#2")
    caption: str  # one line under the buttons
    referents: tuple[str, str] | None = None  # what a reader takes the focus word to mean in each
    # sentence (the pronoun test says whether the model's vectors agree); None: not a pronoun pair
    letters: bool = False  # for a model that reads one letter a token (the letter GPT-2), not English


OWN = "own"  # the preset name for two sentences the user typed
PRESETS: dict[str, Preset] = {
    "trophy": Preset(
        "Trophy: too large / too small",
        "The trophy wouldn't fit in the suitcase because it was too large.",
        "The trophy wouldn't fit in the suitcase because it was too small.",
        "it",
        "One word changes what “it” means to a reader: the trophy (too large) or the suitcase (too "
        "small). Which heads move where “it” looks, and does the model follow the meaning? Below, an "
        "encoder's vector for “it” is tested against both nouns; a decoder, which reads “it” before "
        "the changed word, is asked which continuation it prefers.",
        referents=("trophy", "suitcase"),
    ),
    "bank": Preset(
        "Bank: money / river",
        "The bank approved the loan.",
        "We sat on the river bank.",
        "bank",
        "The same word, two meanings. The sentences differ in length, so the page compares where "
        "“bank” looks by role (the tokens the model adds, if any, itself, its neighbours, the rest).",
    ),
    "repeat": Preset(
        "Repeat / shuffled (letter model)",
        REPEAT,
        SHUFFLED,
        "x#2",
        "For the letter model (letters GPT-2): the same ten letters, then a copy cut short after “x”. "
        "In sentence 1 the copy repeats the run, in sentence 2 a shuffle of it; an induction head "
        "looks back for the earlier “x” and copies what followed it (“y”, or “p”).",
        letters=True,
    ),
}
PRESET_TITLES = {**{name: p.title for name, p in PRESETS.items()}, OWN: "Your own"}
DEFAULT_PRESET = "trophy"
DEFAULT_LETTER_PRESET = "repeat"  # what a page opened on a letter model shows
SWITCHED_MODEL = (
    "The pair “{pair}” is written for {reads}, so the model is now {model}: the model shown before "
    "could not read it."
)
READS_LETTERS = "a model that reads letters"
READS_ENGLISH = "a model that reads English"
OWN_CAPTION = (
    "Type two sentences below. They line up token by token when they differ only in words swapped "
    "in place (same number of tokens, every shared token at the same place): then the page also "
    "draws their difference."
)

TITLE = "Compare two sentences"
INTRO = (
    "Change one word: which heads notice? The same model reads both sentences. Pick a layer and "
    "head to see both attention maps side by "
    "side (rows: the token that attends, *from*; columns: the token attended to, *to*), and use the "
    "ranking below to find the heads whose attention moved most."
)
SENTENCE1_LABEL = "Sentence 1"
SENTENCE2_LABEL = "Sentence 2"
SENTENCE_HELP = "At most {max_tokens} tokens are read (counting any the tokenizer adds); longer text is cut."

PRONOUN_TITLE = "What the model made of “{word}” in each sentence"

MOVES_TITLE = "How far “{word}” moves between the sentences"
MOVES_CHART = "“{word}”: sentence 1 against sentence 2, layer by layer"
MOVES_LINE = "“{word}”, 1 vs 2"
MOVES_Y = "cosine, sentence 1 vs 2"
MOVES_SAID = (
    "At the embeddings the two “{word}”s have cosine **{first:.2f}**{why}. After the last layer it "
    "is **{last:.2f}** (lowest {low:.2f}, after layer {low_layer}). {verdict}"
)
MOVES_SAME_PLACE = " (the same word at the same place: nothing tells them apart yet)"
MOVES_OTHER_PLACE = " (the same word; only its position differs)"
MOVES_APART = "Context pulls the two readings apart as the layers go up."
MOVES_TOGETHER = "The layers bring the two readings closer together."
MOVES_STILL = "The two readings end about as alike as they started."
MOVES_CAPTION = (
    "Each point is the cosine between the focus word's vector in sentence 1 and in sentence 2 after "
    "a layer (0 = the embeddings, before any attention); a word cut into pieces is the mean of its "
    "pieces. 1 means the same direction. The attention maps above show where the word looks; this "
    "shows what it carries away."
)

ALIGNED = "The two sentences line up token by token ({n} tokens each). Swapped: {swaps}."
IDENTICAL = "The two sentences are the same: every difference below is 0."
MOVED = (
    "The sentences have the same number of tokens ({n}) but do not line up: some words moved rather "
    "than being swapped in place, so position by position they compare different tokens. There is no "
    "difference map: the two heads are shown side by side only."
)
NOT_ALIGNED = (
    "The sentences do not line up token by token ({n1} vs {n2} tokens), so there is no difference "
    "map: the two heads are shown side by side only."
)
DIFF_TITLE = "Difference: sentence 2 − sentence 1"
DIFF_CAPTION = (
    "Red: sentence 2 gives this pair more weight; blue: less. The colour scale is symmetric "
    "around 0 and ends at the largest change in this head."
)
SCALE_NOTE = "Colour: the weight, from 0 (white) to 1 (dark blue), on the same scale in both maps."
ROW_OUTLINE = "The red box marks the focus word's row (all its rows when it is split into pieces)."

FOCUS_LABEL = "Focus word (in both sentences)"
FOCUS_HELP = (
    "The word whose attention row the ranking compares. Only words both sentences share are offered; "
    "a repeated word is named with #2, #3…"
)
FOCUS_RULE_PRESET = "Focus: the preset's word."
FOCUS_RULE_CHOSEN = "Focus: your choice."
FOCUS_PIECES = "“{focus}” is split into pieces and read as one word: its row is the mean of its pieces' rows."
FOCUS_RULE_DEFAULT = (
    "Focus by default: the shared word just before the first word that differs (or else the first "
    "shared word at the same place in both sentences)."
)
FOCUS_RULE_DEFAULT_DECODER = (
    "Focus by default: the first word at or after the first word that differs and at the same place "
    "in both sentences: in a decoder a word reads only what came before it, so an earlier one cannot "
    "tell the sentences apart."
)
NO_SHARED = (
    "The two sentences share no word, so there is no focus word to compare: the heads are shown "
    "side by side, without a ranking."
)

RANK_TITLE = "Which heads changed most"
RANK_RULE_ALIGNED = (
    "Change = ½ Σ |Δ| over the focus row “{focus}”: the total variation between its attention in "
    "sentence 1 and in sentence 2, from 0 (the same) to 1 (nothing in common). The tokens line up, "
    "so each column is the same position in both."
)
BINS_WHY_TOKENS = "The tokens do not line up,"
BINS_WHY_FOCUS = "“{focus}” is not at the same place in both sentences,"
RANK_RULE_BINS = (
    "so each sentence's row for “{focus}” is first summed into {n} roles ({roles}); change = ½ Σ |Δ| "
    "over those roles, from 0 (the same split) to 1 (nothing in common)."
)
ROLE_ITSELF = "the word itself with all its pieces"
ROLE_PREVIOUS = "the token before it"
ROLE_NEXT = "the token after it"  # not a role in a causal decoder: a row there cannot reach it
ROLE_REST = "everything else"
ROLE_FIRST = "the start token {token}"
ROLE_OTHER_SPECIALS = "the other added tokens ({tokens})"
RANK_HELP = "Click a row (or a button) to open that head above. Layers and heads count from 1."
OPEN_TOP = "Open a top head:"

PRESENT_VIEWS = {"side": "Side by side", "diff": "Difference", "patch": "Which heads carry it"}
# presenter mode: what the page measures on the pair, folded under the maps (the screen holds the maps)
PRESENT_MORE = (
    "Measured on this pair: the heads that changed most, the focus word's reading, the model's answer"
)
