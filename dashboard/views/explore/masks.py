"""What the model guesses for each [MASK] in the sentence (core/models/masked_lm.py): five words and their
probabilities per [MASK], in one line each, above the view. A model saved without BERT's masked-LM
head (the bundled sentence-embedding model) cannot guess; one line says so and names one that can.
"""

from __future__ import annotations

import streamlit as st

from core.models.masked_lm import MASK_MODELS, NoMaskedLMHead, fill_masks
from core.models.result import AttentionResult
from dashboard.content import decoder as decoder_text
from dashboard.content import explore as text
from dashboard.engines import load_engine
from dashboard.widgets import md

TOP = 5


def masks_ui(result: AttentionResult, model_key: str, engine: str, text_typed: str = "") -> None:
    """The guesses for every [MASK] of `result`, or the one line saying why there are none (a
    decoder, whose tokenizer cuts "[MASK]" into pieces: found in the typed text)."""
    if result.decoder:
        if "[MASK]" in text_typed:
            st.caption(decoder_text.MASK_DECODER)
        return
    if "[MASK]" not in result.tokens:
        return
    if engine != "numpy":  # the head is computed by the NumPy engine only
        st.caption(text.MASK_NUMPY_ONLY)
        return
    try:
        fills = fill_masks(load_engine(model_key, engine), result, TOP)
    except NoMaskedLMHead:
        st.caption(text.MASK_NO_HEAD.format(models=" or ".join(f"`{m}`" for m in MASK_MODELS)))
        return
    lines = [text.MASK_INTRO]
    for n, fill in enumerate(fills, start=1):
        guesses = " · ".join(f"**{md(token)}** {p:.2f}" for token, p in fill.predictions)
        lines.append(text.MASK_LINE.format(n=n, guesses=guesses))
    st.markdown("\n".join(lines))
