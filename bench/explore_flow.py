"""The explore page's norms (Kobayashi et al. 2020) and rollout (Abnar & Zuidema 2020): server time
they add for the bundled model at 128 tokens.

Target (issue 16, speed): norms and rollout add at most 50 ms server time.

How each is measured (medians; the bundled model, NumPy engine, one 128-token sentence):
- core, cold: what a first view of a layer computes once and then caches: one layer's value-output
  vectors f_h(x) for all heads plus one head's norms (core.measures.flow.value_output_vectors +
  shown_norms, as the page calls them, merged and not), and the rollout of all layers
  (core.measures.flow.attention_rollout).
- rerun extra: Streamlit's AppTest runs the page script in-process, as bench/explore_server.py does.
  On a computed sentence each run changes the layer or the head (alternately) and is timed, in the
  head view with weights, with norms, and in the rollout view (layer changes only); the extra is the
  difference of the medians from the weights head view's. Every layer's vectors are cached after the
  warm-up changes, so a rerun pays one head's norms, not the cold compute above.
"""

from __future__ import annotations

import statistics

from streamlit.testing.v1 import AppTest

from bench.common import Row, median_time, timed_run
from bench.texts import count_tokens, sentence

SCRIPT = """
from dashboard.views import explore
explore.render()
"""
TARGET_MS = 50
N_TOKENS = 128


def _engine_and_result(text: str):
    from core.models.bert import BertNumpy
    from core.models.bundled import bundled_model_dir

    engine = BertNumpy.from_pretrained(bundled_model_dir())
    return engine, engine.run(text)


def core_rows(quick: bool) -> list[Row]:
    from core.measures.analysis import token_view
    from core.measures.flow import attention_rollout, shown_norms, value_output_vectors

    text = sentence(N_TOKENS, 7)
    engine, result = _engine_and_result(text)
    assert result.n_tokens == N_TOKENS == count_tokens(text)
    repeats = 10 if quick else 40
    rows = []
    for merge in (False, True):
        view = token_view(result.tokens, result.word_ids, result.special_mask, merge_words=merge)
        layer, head = 3, 1

        def norms(view=view, layer=layer, head=head, merge=merge) -> None:
            w = engine.layer_weights(layer)
            f = value_output_vectors(result.hidden_states[layer], w, w.n_heads)
            shown_norms(
                result.attentions[layer, head], f[head], view.spans, view.keep, merged=merge, rescale=False
            )

        ms = median_time(norms, repeats) * 1000
        what = "words merged" if merge else "tokens"
        rows.append(
            Row(
                f"norms, a layer's f_h(x) + one head's norms, cold, bundled 6×12, {N_TOKENS} tokens, {what}",
                ms,
                "ms",
                target=TARGET_MS,
                note=f"core.measures.flow, median of {repeats}; the page caches each head's f_h(x) per input",
            )
        )
    ms = median_time(lambda: attention_rollout(result.attentions), repeats) * 1000
    rows.append(
        Row(
            f"rollout of all 6 layers, cold, bundled 6×12, {N_TOKENS} tokens",
            ms,
            "ms",
            target=TARGET_MS,
            note=f"core.measures.flow.attention_rollout, median of {repeats}; cached per input afterwards",
        )
    )
    return rows


def rerun_ms(params: dict, repeats: int, heads: bool) -> float:
    """Median ms of a rerun changing the layer (and, with `heads`, the head, alternately)."""
    at = AppTest.from_string(SCRIPT, default_timeout=300)
    at.query_params.update({"text": sentence(N_TOKENS, 7), **params})
    timed_run(at)  # loads the model and computes the sentence
    times = []
    for i in range(repeats + 12):  # 12 warm-up changes: every layer's vectors and rollout cached
        sliders = at.select_slider
        widget = sliders[1] if heads and i % 2 else sliders[0]
        widget.set_value((int(widget.value) + 1) % len(widget.options))
        times.append(timed_run(at))
    return statistics.median(times[12:]) * 1000


def rerun_rows(quick: bool) -> list[Row]:
    repeats = 8 if quick else 30
    weights = rerun_ms({"view": "head"}, repeats, heads=True)
    norms = rerun_ms({"view": "head", "measure": "norms"}, repeats, heads=True)
    weights_layers = rerun_ms({"view": "head"}, repeats, heads=False)
    rollout = rerun_ms({"view": "rollout"}, repeats, heads=False)
    note = f"AppTest, median of {repeats} changes on a computed sentence"
    return [
        Row(
            f"explore head view rerun with norms minus with weights, bundled 6×12, {N_TOKENS} tokens",
            norms - weights,
            "ms",
            target=TARGET_MS,
            note=f"{note}: {norms:.0f} ms with norms, {weights:.0f} ms with weights (layer/head changes)",
        ),
        Row(
            f"explore rollout view rerun minus head view rerun, bundled 6×12, {N_TOKENS} tokens",
            rollout - weights_layers,
            "ms",
            target=TARGET_MS,
            note=f"{note}: {rollout:.0f} ms rollout, {weights_layers:.0f} ms head view (layer changes); "
            "the rollout view draws two charts",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    return core_rows(quick) + rerun_rows(quick)
