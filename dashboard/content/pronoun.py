"""The pronoun test's own text (explore's focus view, the compare page): what the model made of a
word, as the cosine of its vector to the sentence's content words after each layer. Data, not code:
dashboard/pronoun.py fills the {fields}; user words are escaped before they are put in.
"""

from __future__ import annotations

TITLE = "What the model made of “{word}”"
CHART_TITLE = "“{word}”: cosine to each content word, layer by layer"
X_TITLE = "after layer (0 = the embeddings)"
Y_TITLE = "cosine to “{word}”"
EMBEDDINGS = "emb."

NEAREST = (
    "After the last layer, the model's vector for “{focus}” is closest to **“{first}”** (cos {first_cos:.2f})"
)
NEXT = "; next comes “{second}” ({second_cos:.2f})"
AGREES = (
    " A reader takes “{focus}” to mean “{referent}”, and so, by this test, does the model's representation."
)
DISAGREES = (
    " A reader takes “{focus}” to mean “{referent}” (cos {referent_cos:.2f}): **by this test, this "
    "model does not resolve the pronoun here**, whatever its heads put weight on."
)
PAIR_SAME = (
    "**Across the pair:** a reader's answer changes from “{ref1}” to “{ref2}”, but in both sentences "
    "“{focus}” ends nearest “{word}”. The model's vector does not follow the meaning, so by this test "
    "it does not resolve the pronoun: matching a reader in one sentence is no evidence when it lands "
    "on the same word in both."
)
PAIR_FOLLOWS = (
    "**Across the pair:** “{focus}” ends nearest “{ref1}” in the first sentence and “{ref2}” in the "
    "second, as a reader's answer changes: by this test the model's vector follows the meaning."
)
PAIR_OTHER = (
    "**Across the pair:** “{focus}” ends nearest “{word1}” in the first sentence and “{word2}” in the "
    "second; a reader says “{ref1}”, then “{ref2}”."
)
NONE = "This sentence has no content word besides “{focus}” to compare it with."

CAPTION = (
    "A head's weight from one word to another is where that head looks, not what the model concluded. "
    "What the model concluded is in the vector it keeps for the word: each line is the cosine between "
    "the focus word's vector and another word's, after each layer (a word cut into pieces is the mean "
    "of its pieces). One test, not a proof: {model} can hold information that cosine does not show."
)
SENTENCE_MODEL = "a small sentence model"  # an encoder trained for sentence embeddings
LANGUAGE_MODEL = "a model trained to predict the next token"  # a causal decoder
CAUSAL_NOTE = (
    " In this causal model a word's vector holds only what came before it, so it cannot reflect a word "
    "that comes later."
)
CONTENT_RULE = (
    "Content words are every word except the focus word itself{specials}, punctuation, "
    "and function words such as *the*, *it*, *was*, *because*: at the top layers those sit close to "
    "everything, which says nothing about what a word stands for."
)
SPECIALS = ", {specials}"  # in CONTENT_RULE, the tokens the tokenizer adds ("\\[CLS\\] and \\[SEP\\]")
