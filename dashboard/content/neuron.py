"""The neuron view's own text (explore's head view: where one weight comes from). Step numbers and
names are the learn page's (dashboard/content/learn.py STEP_VIEW_LABELS). Placeholders filled with
user-derived text ({i_tok}, {j_tok}) receive it escaped (dashboard.widgets.md)."""

from __future__ import annotations

EXPANDER = "Where this weight comes from (layer {layer}, head {head}: “{i_tok}” → “{j_tok}”)"
INTRO = (
    "The weight in row “{i_tok}” (#{i}), column “{j_tok}” (#{j}) of this head's map, computed again "
    "from the model's own numbers: this layer's input x and its query and key weights. {how} "
    "Steps numbered as on the learn page."
)
INTRO_NORMS = (
    "The map above shows norms ‖α f(x)‖; here is the head's weight α behind its row “{i_tok}” (#{i}), "
    "column “{j_tok}” (#{j}), computed again from the model's own numbers: this layer's input x and "
    "its query and key weights. {how} Steps numbered as on the learn page."
)
WHERE_WEIGHTS = " (the map above)"
WHERE_NORMS = " (hover the map for its norm)"
NORM_CELL = (
    "**The map's norm** · the head moves $\\alpha_{{ij}} f_h(x_j)$ from “{j_tok}” into “{i_tok}”, where "
    "$f_h(x)$ is a token's value vector after the output projection; the map shows its length "
    "$\\lVert \\alpha_{{ij}} f_h(x_j) \\rVert = \\alpha_{{ij}} \\cdot \\lVert f_h(x_j) \\rVert = "
    "{alpha} \\times {length} = {norm}${rescaled}{merged}"
)
NORM_RESCALED = (
    ", and with rows rescaled, that divided by the row's total "
    "$\\sum_m \\lVert \\alpha_{{im}} f_h(x_m) \\rVert$: ${norm} \\,/\\, {total} = {share}$"
)
NORM_MERGED = " (for these two tokens: the map's merged cell combines its word's pieces, as noted under it)"
CLICK = "click: where this weight comes from"
CLICK_NORMS = "click: the weight α behind this norm"
HOW_CLICK = "Click a cell of the map above, or pick the two tokens here."
HOW_PICK = "Pick the two tokens here (a map of more than {most} tokens takes no clicks)."
DEFAULT_CELL = (
    "No pair is chosen yet, so this is the first word's row and the key it gives the most weight in "
    "this head."
)
QUERY_PICKER = "Query token i (from: the row)"
KEY_PICKER = "Key token j (to: the column)"
TOKENS_NOTE = (
    "This works on the model's own tokens (every piece apart{specials}), numbered from 1; "
    "the map above {how}. A click on the map picks each word's first piece."
)
TOKENS_MERGED = "merges pieces into words (a word's row is the mean of its pieces' rows, its column the sum)"
TOKENS_HIDDEN = "hides {specials} and rescales each row to sum to 1"
NOT_SHOWN = "(This cell is not on the map above: it hides {specials}.)"
WITH_SPECIALS = ", with {specials}"  # in TOKENS_NOTE, where the tokenizer adds tokens

STEP_2 = "**2 · Q, K** · project the two tokens with this head's {d_k} columns of $W^Q$ and $W^K$"
STEP_2_FORMULA = r"q_i = x_i W^Q_h + b^Q_h, \qquad k_j = x_j W^K_h + b^K_h \qquad (d_k = {d_k})"
STEP_2_CAPTION = (
    "Top: q (from “{i_tok}”) and k (to “{j_tok}”), one cell per dimension (red > 0 > blue). Bottom: "
    "their products q × k, one bar per dimension; dark bars: the {top} largest by size (|q × k|), "
    "their values printed. Together those {top} give {top_sum:+.4f} of the score {score:.4f}."
)
STEP_3 = "**3 · Scores** · the dot product: add up all {d_k} products"
STEP_3_FORMULA = r"s_{{ij}} = q_i \cdot k_j = \sum_{{m=1}}^{{{d_k}}} q_{{im}}\, k_{{jm}} = {score}"
STEP_4 = "**4 · Scaling** · divide by $\\sqrt{d_k}$, here and for every key of row i"
STEP_4_FORMULA = (  # divisions written inline: KaTeX's stacked fractions of numbers got clipped
    r"s'_{{ij}} = s_{{ij}} \,/\, \sqrt{{d_k}} = {score} \,/\, \sqrt{{{d_k}}}"
    r" = {score} \,/\, {root} = {scaled}"
)
ROW_CAPTION = (
    "Row “{i_tok}” over every key: top, the scaled scores s′ (step 4); bottom, the weights after the "
    "softmax (step 5). Red: the key “{j_tok}”."
)
STEP_5 = "**5 · Softmax** · turn the whole row into weights that add up to 1"
STEP_5_FORMULA = (
    r"a_{{ij}} = \frac{{e^{{\,s'_{{ij}} - \max_m s'_{{im}}}}}}"
    r"{{\sum_{{m=1}}^{{{t}}} e^{{\,s'_{{im}} - \max_m s'_{{im}}}}}}"
    r" = \frac{{e^{{\,{scaled} - {row_max}}}}}{{{exp_sum}}} = \frac{{{exp_j}}}{{{exp_sum}}} = {weight}"
)
STEP_5_WHY = (
    "Subtracting the row's largest score (here {row_max}) changes nothing, since it cancels "
    "between top and bottom, but keeps $e^{{s'}}$ from overflowing: that is how every engine "
    "computes it."
)
AGREE = "The engine's weight for this cell{where}: **{engine}** :green[**✓ the same to {digits} decimals**]"
ROUNDING = 1e-4  # a gap below this is float rounding; above it the recomputation misses something
DISAGREE = (
    "The engine's weight for this cell{where}: **{engine}**, {diff:.1e} away from the "
    "recomputed {weight} (float rounding between engines)."
)
NOT_REPRODUCED = (
    "The engine's weight for this cell{where}: **{engine}**, {diff:.1e} away from the recomputed "
    "{weight}: :orange[**recomputing from q and k does not reproduce this model's attention**] "
    "(it adds terms to q · k, {why})."
)
NOT_REPRODUCED_WHY = "such as relative-position scores"
NOT_REPRODUCED_RELATIVE = "relative-position scores: its config says position_embedding_type “{kind}”"
RELATIVE_NOTE = (
    "This model's config says position_embedding_type “{kind}”: attention of that kind adds "
    "relative-position scores to q · k, which the steps below leave out, so they need not match the "
    "engine's weight (the last line compares the two)."
)
TO_LEARN = "Every step of this layer, for all tokens: [layer {layer}, head {head} on the learn page]({url})"
TO_LEARN_BUNDLED = " (the learn page runs the bundled model)"
HEADING = "Where “{i_tok}” → “{j_tok}” comes from: layer {layer}, head {head}"
NO_WEIGHTS = "This model's weights cannot be shown step by step here: {why}"
