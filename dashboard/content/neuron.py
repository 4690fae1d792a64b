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
HOW_CLICK = "Click a cell of the map above, or pick the two tokens here."
HOW_PICK = "Pick the two tokens here (a map of more than {most} tokens takes no clicks)."
DEFAULT_CELL = (
    "No pair is chosen yet, so this is the first word's row and the key it gives the most weight in "
    "this head."
)
QUERY_PICKER = "Query token i (from: the row)"
KEY_PICKER = "Key token j (to: the column)"
TOKENS_NOTE = (
    "This works on the model's own tokens (word pieces, with \\[CLS\\] and \\[SEP\\]), numbered from 1; "
    "the map above {how}. A click on the map picks each word's first piece."
)
TOKENS_MERGED = "merges word pieces (a word's row is the mean of its pieces' rows, its column the sum)"
TOKENS_HIDDEN = "hides \\[CLS\\]/\\[SEP\\] and rescales each row to sum to 1"
NOT_SHOWN = "(This cell is not on the map above: it hides \\[CLS\\]/\\[SEP\\].)"

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
AGREE = (
    "The engine's weight for this cell (the map above): **{engine}** :green[**✓ the same to {digits} "
    "decimals**]"
)
DISAGREE = (
    "The engine's weight for this cell (the map above): **{engine}**, {diff:.1e} away from the "
    "recomputed {weight} (float rounding between engines)."
)
TO_LEARN = "Every step of this layer, for all tokens: [layer {layer}, head {head} on the learn page]({url})"
TO_LEARN_BUNDLED = " (the learn page runs the bundled model)"
HEADING = "Where “{i_tok}” → “{j_tok}” comes from: layer {layer}, head {head}"
NO_WEIGHTS = "This model's weights cannot be shown step by step here: {why}"
