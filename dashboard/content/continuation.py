"""The text of "Which continuation does the model prefer?" (dashboard/continuation.py), and the probes
the source articles' sentences come with. Data, not code: the panel fills the {fields}.

A probe turns a sentence whose meaning hangs on a pronoun into a question a decoder answers by its
next words: after "… because it was too large. The thing that was too large was the", is " trophy"
or " suitcase" the likelier continuation? What a reader would answer is kept beside it, so the page
can say whether the model agrees. Texts go through st.markdown; user text is escaped before it is
filled in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Probe:
    prefix: str  # what the model reads
    options: tuple[str, str]  # the two continuations, each with its leading space
    reader: str | None = None  # the option a reader would choose (stripped), None when it is open
    label: str = ""  # what tells it from its partner ("too large")
    partner: str | None = None  # the sentence with the one word changed (a key of PROBES)


def _pronoun_probe(sentence: str, quality: str, options: tuple[str, str], reader: str, partner: str) -> Probe:
    prefix = f"{sentence} The thing that was {quality} was the"
    return Probe(prefix, options, reader, quality, partner)


TROPHY = (" trophy", " suitcase")
ANIMAL = (" animal", " street")
TROPHY_LARGE = "The trophy wouldn't fit in the suitcase because it was too large."
TROPHY_SMALL = "The trophy wouldn't fit in the suitcase because it was too small."
ANIMAL_TIRED = "The animal didn't cross the street because it was too tired."
ANIMAL_WIDE = "The animal didn't cross the street because it was too wide."
# the letter model's induction pair (compare's "repeat" preset): a run of letters and its copy cut short,
# after the run itself or after a shuffle of its letters; what comes next is what followed "x" before
REPEAT = "pqrstuvwxypqrstuvwx"
SHUFFLED = "wtyqvrxpuspqrstuvwx"
# keyed by the sentence the page shows (explore's examples, compare's presets)
PROBES: dict[str, Probe] = {
    TROPHY_LARGE: _pronoun_probe(TROPHY_LARGE, "too large", TROPHY, "trophy", TROPHY_SMALL),
    TROPHY_SMALL: _pronoun_probe(TROPHY_SMALL, "too small", TROPHY, "suitcase", TROPHY_LARGE),
    ANIMAL_TIRED: _pronoun_probe(ANIMAL_TIRED, "too tired", ANIMAL, "animal", ANIMAL_WIDE),
    ANIMAL_WIDE: _pronoun_probe(ANIMAL_WIDE, "too wide", ANIMAL, "street", ANIMAL_TIRED),
    REPEAT: Probe(REPEAT, ("y", "p"), "y", "after the run", SHUFFLED),
    SHUFFLED: Probe(SHUFFLED, ("y", "p"), "p", "after the shuffle", REPEAT),
    "The bank approved the loan.": Probe("The bank approved the", (" loan", " river"), "loan"),
    "The bank approved the": Probe("The bank approved the", (" loan", " river"), "loan"),
}

TITLE = "Which continuation does the model prefer?"
INTRO = (
    "Attention weights show where a head looks, not what the model concludes. Here the model itself "
    "answers: it reads the text below and gives each continuation a probability. Edit the text or "
    "the two words to ask your own question."
)
PREFIX_LABEL = "The text the model reads"
OPTION_LABELS = ("Continuation A", "Continuation B")
OPTION_HELP = (
    "A word, or several. A space is put before it when the text does not end with one, so that it "
    "is read as the next word, not glued to the last."
)
EMPTY = "Type a text and two continuations."
TOO_LONG = "The text has {n:,} tokens; this panel reads at most {most:,}: shorten it."
REFUSED = "The model could not score this: {reason}."

TABLE_COLUMNS = ("continuation", "its tokens", "log-probability", "probability")
PREFERS = (
    "The model prefers **{best}**: {ratio} as probable as **{other}** (log-probabilities {best_lp:.2f} "
    "and {other_lp:.2f})."
)
TIE = "The model gives **{best}** and **{other}** the same probability (log-probability {best_lp:.2f})."
LENGTHS_DIFFER = (
    " They differ in length ({best_n} and {other_n} tokens), and every token costs probability, so "
    "the sum favours the shorter; their first tokens alone get {best_first:.2g} and {other_first:.2g}."
)
READER_AGREES = " A reader would choose **{reader}** too."
READER_DIFFERS = " A reader would choose **{reader}**: here the model does not."
CAPTION = (
    "log P(continuation | text) is the sum of the log-probabilities of the continuation's tokens, "
    "each read after the text and the tokens before it (natural logarithms; the text runs once and "
    "each continuation on its cache). The ratio is exp of the difference."
)

# the minimal pair: one probe per sentence, then whether the preference follows the change of meaning
PAIR_TITLE = "Which continuation does the model prefer, in each sentence?"
PAIR_INTRO = (
    "Attention weights show where a head looks, not what the model concludes. Here the model itself "
    "answers: after each sentence it gives the two continuations a probability. Type two other words "
    "to ask your own question."
)
PARTNER = "With “{label}” instead: "
PAIR_FOLLOWS = (
    "The model's preference follows the meaning: **{first}** with {one}, **{second}** with {two}, as a "
    "reader would choose."
)
PAIR_SAME = (
    "The model prefers **{first}** with {one} and with {two}, while a reader's answer changes with the "
    "one word: measured this way, this model does not resolve the pronoun."
)
PAIR_AGAINST = (
    "The model prefers **{first}** with {one} and **{second}** with {two}: the opposite of a reader's "
    "answers, so it does not resolve the pronoun either."
)
PAIR_OTHER = "The model prefers **{first}** with {one} and **{second}** with {two}."
