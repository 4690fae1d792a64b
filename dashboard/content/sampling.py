"""What the generate view says about sampling: temperature, then top-k, then top-p (the controls,
the chart, and the computed sentence under it). The arithmetic is core/models/sampling.py's."""

TOP_K_LABEL = "Top-k (0: off)"
TOP_K_HELP = (
    "Keep only the k likeliest tokens (tokens tied with the k-th are kept too), then renormalise. "
    "0 keeps them all."
)
TOP_P_LABEL = "Top-p (1: off)"
TOP_P_HELP = (
    "Then keep the fewest likeliest tokens whose probabilities add up to at least p (always at least "
    "one), and renormalise. 1 keeps them all. Applied after temperature and top-k, as in Hugging Face "
    "transformers."
)

# the chart (dashboard/charts/sampling.py)
TITLE_SAMPLED = "Step {step}: what it was drawn from"
TITLE_GREEDY = "Step {step}: the likeliest next tokens"
X_TITLE = "probability"
KEPT_NAME = "kept, renormalised"
BEFORE_NAME = "kept, before the cut"
CUT_NAME = "cut"
CUT = "cut · {p:.1%}"
DRAWN = "drawn #{rank} · {p:.1%}"
TAKEN = "taken #{rank} · {p:.1%}"
HOVER_KEPT = "{token}: kept, {after:.2%} after renormalising ({before:.2%} before)"
HOVER_CUT = "{token}: cut ({before:.2%} before the cut)"

# the sentence under the chart, computed from the step shown
CUTS = {"k": "top-k {k}", "p": "top-p {p:g}", "kp": "top-k {k} then top-p {p:g}"}
KEPT = (
    "At temperature {temperature:g}, {cuts} kept {n} of {vocab:,} tokens, holding {mass:.0%} of the "
    "probability"
)
KEPT_ALL = (
    "At temperature {temperature:g} with top-k and top-p off, nothing is cut: all {vocab:,} tokens can "
    "be drawn"
)
TIED = " (tokens tied with the {k}th are kept too)"
DRAWN_SENTENCE = (
    "; the drawn token “{token}” (rank {rank}) had probability {after:.0%} after renormalising "
    "({before:.0%} before)."
)
DRAWN_UNCUT = "; the drawn token “{token}” (rank {rank}) had probability {after:.0%}."
GREEDY = (
    "Greedy (temperature 0): sampling is off, so top-k and top-p change nothing. The likeliest token "
    "“{token}” ({before:.0%}) is taken."
)

# a link's bad values
LINK_TOP_P = "The link's `top_p` is {shown}; top-p must be above 0 and at most 1, so it is off (1)."
LINK_TOP_P_SMALL = "The link's `top_p` is {value:g}; using {nearest:g}, the smallest the slider offers."
