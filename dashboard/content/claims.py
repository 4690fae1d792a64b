"""The lines a page says where core/measures/claims.py forbids a claim: data, not code. Markdown;
the views escape user words before they are put in."""

from __future__ import annotations

BLIND = (
    "**No evidence either way here.** This model is a causal decoder: “{word}” (token {position}) "
    "reads only itself and the tokens before it, and the two sentences first differ at token "
    "{changed} (“{was}” → “{now}”). Every number computed at “{word}” is the same in both sentences "
    "by construction, so it cannot show whether the model follows the change. What can answer: {answers}."
)
ANSWER_CONTINUATION = "which continuation the model prefers at the last token ({where})"
ANSWER_PATCHING = "which heads carry the difference (patching, {where})"
BELOW = "below"
ON_COMPARE = "[on the compare page]({url})"
