"""What attention costs (issue 22): the measured exponents and crossover, the variants' error on the
trophy sentence at one head, the window sweep's answer, and the cost page's first draw.

How each is measured (bundled model's width: d = 384, 12 heads, d_k = 32):
- exponents: core.cost.price.measure_curves at n = 16 .. 4096 (the layer's 12 heads too, up to 4096, as
  the page does not on a laptop), the fastest of five runs per length, as on the page; the exponent
  is the log-log slope over the longer half (n = 256 .. 4096). Crossover: core.cost.price.crossover
  (measured) and flop_crossover (n = 2d).
- variant timing: core.cost.price.variant_curves (fastest of seven per length), the exponent over
  n = 128 .. 1024 and the ratio to full attention at n = 1024.
- errors: layer 6, head 6 (1-indexed) on "The trophy wouldn't fit in the suitcase because it was too
  large.", each variant at the page's default parameters (core.cost.variant_model.compare_head); the
  window sweep: core.cost.variant_model.smallest_window over every radius 1 .. T - 1.
- page first draw: one `streamlit run` server per open (a fresh process: the price is measured on
  the first visit), Chromium from `goto` to the page's 7 charts drawn; then a second tab on the
  same server (the price from memory).
"""

from __future__ import annotations

import time

from bench.common import Row

TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."
LAYER, HEAD = 5, 5  # 0-indexed: layer 6, head 6 on screen


def core_rows(quick: bool) -> list[Row]:
    from core.cost.price import LENGTHS, crossover, flop_crossover, measure_curves, variant_curves
    from core.cost.variants import VARIANTS, Variant

    lengths = LENGTHS[:-2] if quick else LENGTHS
    curves = {c.name: c for c in measure_curves(384, 12, lengths)}
    rows = [
        Row(
            f"attention steps 3-6, {name}: fitted exponent of time against n",
            curve.exponent,
            "",
            note=f"n = {lengths[len(lengths) // 2]}..{lengths[-1]}, log-log slope; "
            f"{curve.seconds[-1] * 1e3:.0f} ms and {curve.peak_bytes[-1] / 2**20:.0f} MB "
            f"at n = {lengths[-1]}",
        )
        for name, curve in curves.items()
    ]
    found = crossover(curves["12 heads"], curves["projections"])
    rows.append(
        Row(
            "crossover: 12 heads' steps 3-6 cost more than the projections from n =",
            found or float("nan"),
            "tokens",
            note="measured, interpolated on the log-log curves; "
            f"FLOP count says n = 2d = {flop_crossover(384):.0f}",
        )
    )
    for name in VARIANTS[1:]:
        full, other = variant_curves(Variant(name, global_tokens=(0,)), 32)
        rows.append(
            Row(
                f"variant timing, {name}: exponent of one head's output time (n = 128..1024)",
                other.exponent,
                "",
                note=f"full attention {full.exponent:.2f}; "
                f"at n = 1024 {other.seconds[-1] / full.seconds[-1]:.2f}× full's time",
            )
        )
    return rows


def error_rows() -> list[Row]:
    from core.cost.variant_model import compare_head, head_qkv, smallest_window
    from core.cost.variants import VARIANTS, Variant
    from core.models.bert import BertNumpy

    engine = BertNumpy.from_pretrained()
    result = engine.run(TROPHY)
    q, k, v = head_qkv(result.hidden_states[LAYER], engine.layer_weights(LAYER), HEAD)
    rows = []
    for name in VARIANTS[1:]:
        found = compare_head(Variant(name).with_globals(result.special_mask), q, k, v)
        rows.append(
            Row(
                f"{name} on the trophy sentence, layer 6 head 6: output error ‖o − o_full‖/‖o_full‖",
                found.relative_error,
                "",
                note=f"mean row total variation {found.tv:.3f}; "
                "default parameters (w 2, s 4, r 2, m 64, k 8)",
            )
        )
    answer, sweep = smallest_window(engine, result)
    changes = dict(sweep)
    rows.append(
        Row(
            "window sweep, trophy sentence: smallest radius keeping the embedding within 0.05",
            float(answer) if answer is not None else float("nan"),
            "tokens",
            note=f"{result.n_tokens} tokens; 1 − cos {changes[answer]:.4f} at it, "
            f"{changes[answer - 1]:.4f} one below"
            if answer and answer > 1
            else f"{result.n_tokens} tokens",
        )
    )
    return rows


def browser_rows(quick: bool) -> list[Row]:
    from tests.e2e.harness import StreamlitServer, browser, wait_charts

    first, again = [], []
    with browser() as chromium:
        for _ in range(1 if quick else 3):
            with StreamlitServer() as server:
                context = chromium.new_context(viewport={"width": 1280, "height": 800})
                for seconds in (first, again):
                    page = context.new_page()
                    start = time.perf_counter()
                    page.goto(f"{server.url}/cost")
                    wait_charts(page, 7, 300_000)
                    seconds.append(time.perf_counter() - start)
                    page.close()
                context.close()
    first.sort()
    again.sort()
    return [
        Row(
            "cost page, first visit to a new server: goto to all 7 charts drawn",
            first[len(first) // 2],
            "s",
            note=f"median of {len(first)} servers; includes loading the model and measuring "
            "the price (n up to 4096)",
        ),
        Row(
            "cost page, a second visit: goto to all 7 charts drawn",
            again[len(again) // 2],
            "s",
            note="every measurement from the server's caches: what drawing the page costs",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    return [*core_rows(quick), *error_rows(), *browser_rows(quick)]
