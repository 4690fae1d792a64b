"""The explore page's attribution view: its own text. Data, not code: dashboard/views/explore/
attribution.py fills the {fields} and draws it. Captions go through st.caption / st.markdown, so
literal brackets are escaped (\\[CLS\\]); user words are escaped by the view before they are put in.
"""

from __future__ import annotations

TITLE = "Which tokens does the output need, and where does attention go?"
X_TITLE = "token"
X_TITLE_SPECIALS = (
    "token ({specials} are not scored)"  # where the tokenizer adds tokens (plain text: an axis)
)
PANELS = {
    "loo": "Leave-one-out: 1 − cos when the token is removed",
    "attention": "Attention each token receives, last layer, mean over heads",
    "rollout": "Rollout, mean column",
    "norms": "Norms ‖α f(x)‖, last layer, mean column",
}
NAMES = {"attention": "attention", "rollout": "rollout", "norms": "norms"}

CAPTION = (
    "**Top panel, what the model does:** each token is removed from the input in turn (\\[CLS\\] and "
    "\\[SEP\\] stay), the model runs again, and the bar is how far the output moves, 1 − cos(output "
    "without the token, output with it). The output is {embedding}. **Below, what attention would "
    "say:** the weight each token receives in the last layer (mean over heads and over the tokens "
    "that look at it), the same for rollout (attention multiplied through the layers), and for the "
    "norms ‖α f(x)‖ (the weight times the size of what the token sends). One bar per token, word "
    "pieces apart: a token is what leave-one-out removes."
)
CAPTION_DECODER = (
    "**Top panel, what the model does:** each token is removed from the text in turn, the model runs "
    "again, and the bar is how far its guess for the next token moves: the total variation distance "
    "½ Σ |p − q| between the next-token probabilities without the token and with it. **Below, what "
    "attention would say:** the weight each token receives from the last position (the one that "
    "predicts) in the last layer, mean over heads, and the same for rollout (attention multiplied "
    "through the layers). One bar per token: a token is what leave-one-out removes."
)
PANEL_LOO_DECODER = "Leave-one-out: next-token probability moved when the token is removed"
PANELS_DECODER = {
    "attention": "Attention from the last position, last layer, mean over heads",
    "rollout": "Rollout, the last position's row",
}
NO_NORMS_DECODER = "Norms are left out: they are computed for BERT's attention layout only."

RHO = (
    "**Spearman's ρ against leave-one-out** over the {n} scored tokens (1: the same order, 0: "
    "unrelated, −1: reversed): {values}."
)
RHO_ONE = "{name} **{rho}**"
RHO_UNDEFINED = "not defined"
RHO_NONE = (
    "Spearman's ρ is not defined for this input: it needs at least 3 scored tokens whose values "
    "are not all equal."
)
BEST = "Of the {count}, **{name}** orders the tokens most like leave-one-out does here."
TOP_SAME = (
    "Removing “{loo}” moves the output most ({value:.3f}), and it is also the token the last "
    "layer's attention gives most weight to."
)
TOP_DIFFERENT = (
    "Removing “{loo}” moves the output most ({value:.3f}); the last layer's attention gives most "
    "weight to “{attention}”."
)
NO_NORMS = "Norms are left out: this engine cannot read each head's weights for this model."
UNAVAILABLE = "Leave-one-out cannot run on this model with this engine: {reason}"
TOO_LONG = (
    "Leave-one-out runs the model once more for every token, so this view measures texts of up to "
    "{limit} tokens; this one has {n}. Shorten it to see the bars, or run `python -m core attribute` "
    "in a terminal, which measures any length (a 512-token text takes about a minute)."
)
TOO_FEW = "Leave-one-out needs at least one token{besides} to remove: type a longer sentence."
TOO_FEW_BESIDES = " besides {specials}"  # the tokens the tokenizer adds, which are never removed

ABOUT_LABEL = "Is attention an explanation? What the disagreement means"
ABOUT = (
    "Jain and Wallace (2019), *Attention is not Explanation*, compared attention weights in text "
    "classifiers with two other measures of how much each word matters, gradients and leave-one-out, "
    "and found the orders often weakly related. They also built quite different attention "
    "distributions that left the prediction almost unchanged. Their conclusion: a high weight on a "
    "word is not, by itself, evidence that the prediction depends on that word.\n\n"
    "Wiegreffe and Pinter (2019), *Attention is not not Explanation*, answered that those alternative "
    "distributions were searched for one example at a time, not learned by a model, and that "
    "whether attention explains depends on what an explanation is asked to do. Their point for a "
    "reader of this page: attention can be a useful first guess, but whether it is *faithful* to the "
    "model has to be tested, not assumed, which is what the top panel does.\n\n"
    "Leave-one-out is the erasure test of Li, Monroe and Jurafsky (2016), *Understanding Neural "
    "Networks through Representation Erasure*. It is a test of behaviour, with its own limits: a "
    "sentence with a token missing is one the model rarely saw, and two tokens that carry the same "
    "information each look unimportant when removed alone. In a transformer, attention in the last "
    "layer moves vectors that earlier layers have already mixed, which is why rollout (Abnar and "
    "Zuidema 2020) and the norms (Kobayashi et al. 2020) are shown beside it. A low ρ here means the "
    "bars above do not rank words the way the output needs them; it does not mean attention is noise."
)

# ---- asking first, counting (dashboard/long_work.py) ------------------------------------------------
ASK_WHAT = "Running the model again without each of the {n} tokens in turn"
BUTTON = "Leave out each token ({n} runs)"
PROGRESS = "Left out {done} of {total} tokens"
