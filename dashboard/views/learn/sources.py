"""What each source of the seven steps adds to them: a StepSource for the toy model, a worked
example and a real BERT layer. The renderer (steps.py) draws any of them the same way."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.lesson.toy import ToySettings
from core.lesson.trace import LayerTrace
from core.lesson.worked_examples import StepCheck, WorkedExample, layer_norm_article_form
from dashboard.content.learn import (
    BERT_AFTER,
    BERT_AFTER_LAST,
    BERT_EMBEDDINGS_FORMULA,
    BERT_EMBEDDINGS_TEXT,
    BERT_FORMULAS,
    BERT_LAYER_INPUT_FORMULA,
    BERT_LAYER_INPUT_TEXT,
    BERT_NOTES,
    BERT_TEXTS,
    EXAMPLE_MISSING,
    EXAMPLE_STEP_TEXTS,
    EXAMPLE_TEXTS,
    LAYER_NORM_FORMS,
    MASK_TEXT,
    MASKED_CELLS,
    POSITIONS_OFF,
    POSITIONS_ON,
    STEP_VIEWS,
    TOY_CAPTION,
)
from dashboard.views.learn import compute
from dashboard.views.learn.steps import StepSource

SHOWN_DIMS = 8  # a real model's vectors have hundreds of numbers; the first few are printed
BERT_VIEWS = SENTENCE_VIEWS = STEP_VIEWS
EXAMPLE_VIEWS = tuple(v for v in STEP_VIEWS if v != "heads")  # one head: nothing to set side by side


def sentence_source(tokens: tuple[str, ...], settings: ToySettings) -> StepSource:
    """The toy model: seeded, untrained weights; every setting can be changed."""
    notes = {1: POSITIONS_ON if settings.positional else POSITIONS_OFF, 2: TOY_CAPTION}
    if settings.mask in MASK_TEXT:
        notes[4] = f"{MASK_TEXT[settings.mask]} {MASKED_CELLS}"
    compare = None
    if not settings.scale:  # step 5 puts the weights with scaling beside those without
        compare = compute.sentence_trace(tokens, replace(settings, scale=True))["probs"]
    return StepSource(views=SENTENCE_VIEWS, notes=notes, compare_probs=compare, saturation_seed=settings.seed)


def example_source(ex: WorkedExample, trace: LayerTrace, checks: tuple[StepCheck, ...]) -> StepSource:
    """A worked example: the article's own inputs, its printed numbers checked at steps 3 to 6."""
    by_name = {c.step: c for c in checks}
    notes = {c.number: c.note for c in checks if c.note}
    if "normed" in trace:
        notes[7] = _layer_norm_note(trace)
    missing = {n: text for n, text in EXAMPLE_MISSING.items() if n != 1 or "x" not in trace}
    return StepSource(
        views=EXAMPLE_VIEWS,
        texts={**EXAMPLE_TEXTS, **EXAMPLE_STEP_TEXTS.get(ex.slug, {})},
        notes=notes,
        missing=missing,
        checks=by_name,
    )


def _layer_norm_note(trace: LayerTrace) -> str:
    """How far the article's layer norm, (x − μ)/(σ + ε), is from torch's on these numbers."""
    article_form = layer_norm_article_form(trace["residual"], trace.ln_eps)
    gap = float(np.abs(article_form - trace["normed"]).max())
    seen = "too small to see at 4 decimals" if gap < 5e-5 else "large enough to see at 4 decimals"
    return LAYER_NORM_FORMS.format(gap=gap, seen=seen)


def bert_source(trace: LayerTrace, layer: int, n_layers: int, head: int) -> StepSource:
    """One layer (0-indexed) of the bundled BERT: trained weights with biases, wide vectors."""
    shown_layer = layer + 1
    sizes = {"n_heads": trace.n_heads, "d_k": trace.d_k, "d_model": trace.d_model}
    after = BERT_AFTER_LAST if shown_layer == n_layers else BERT_AFTER.format(next=shown_layer + 1)
    if layer == 0:
        formula_1, text_1 = BERT_EMBEDDINGS_FORMULA, BERT_EMBEDDINGS_TEXT
    else:
        formula_1 = BERT_LAYER_INPUT_FORMULA.format(previous=layer)
        text_1 = BERT_LAYER_INPUT_TEXT.format(layer=shown_layer, previous=layer)
    return StepSource(
        views=BERT_VIEWS,
        texts={
            1: text_1,
            2: BERT_TEXTS[2].format(**sizes),
            7: BERT_TEXTS[7].format(**sizes, eps=trace.ln_eps, after=after),
        },
        formulas={**BERT_FORMULAS, 1: formula_1},
        notes={3: BERT_NOTES[3], 5: BERT_NOTES[5].format(layer=shown_layer, head=head + 1)},
        shown_dims=SHOWN_DIMS,
    )
