"""The neuron view (explore's head view: where one weight comes from): what it adds to the head view.

Issue 16 §5 asks that it not slow the head view noticeably; no number is set, so no target here.

How each is measured (medians; the bundled model, NumPy engine):
- core: core.measures.neuron.cell_arithmetic for one cell, with the engine's layer_weights, at 17 tokens (the
  trophy sentence) and 128 tokens: the whole computation the open section does.
- click points: dashboard.charts.neuron.add_cell_targets on a head map of W shown tokens (one
  invisible point per cell, up to 64 tokens), and how many bytes they add to the figure's JSON:
  what every head view run pays, section open or not.
- rerun: Streamlit's AppTest runs the page script in-process (as bench/explore_server.py does); each
  run changes the layer or the head, alternately, on a computed sentence, with the section closed
  and open; the row gives open minus closed (the section's two charts and four formulas included).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import plotly.io
from streamlit.testing.v1 import AppTest

from bench.common import Row, median_time
from bench.texts import sentence

SCRIPT = """
from dashboard.views import explore
explore.render()
"""
TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


def core_rows(quick: bool) -> list[Row]:
    from core.measures.neuron import cell_arithmetic
    from core.models.bert import BertNumpy
    from core.models.bundled import bundled_model_dir

    engine = BertNumpy.from_pretrained(bundled_model_dir())
    repeats = 10 if quick else 40
    rows = []
    for text in (TROPHY, sentence(128, 7)):
        result = engine.run(text)

        def cell(result=result) -> None:
            cell_arithmetic(result.hidden_states[3], engine.layer_weights(3), 1, 1, 2)

        ms = median_time(cell, repeats) * 1000
        rows.append(
            Row(
                f"neuron view: one cell's arithmetic, bundled 6×12, {result.n_tokens} tokens",
                ms,
                "ms",
                note=f"core.measures.neuron.cell_arithmetic with layer_weights, median of {repeats}",
            )
        )
    return rows


def click_rows(quick: bool) -> list[Row]:
    from dashboard.charts.explore import head_heatmap
    from dashboard.charts.neuron import add_cell_targets

    repeats = 5 if quick else 20
    rows = []
    for w in (17, 64):
        matrix = np.random.default_rng(0).dirichlet(np.ones(w), size=w).astype(np.float32)
        labels = [f"token{i}" for i in range(w)]
        bare = len(plotly.io.to_json(head_heatmap(matrix, labels)))
        times = []
        for _ in range(repeats):
            fig = head_heatmap(matrix, labels)
            start = time.perf_counter()
            add_cell_targets(fig, matrix, labels)
            times.append(time.perf_counter() - start)
        extra_kb = (len(plotly.io.to_json(fig)) - bare) / 1000
        rows.append(
            Row(
                f"neuron view: the head map's click points, {w} tokens",
                statistics.median(times) * 1000,
                "ms",
                note=f"add_cell_targets, median of {repeats}; +{extra_kb:.0f} kB of figure JSON "
                f"(map alone {bare / 1000:.0f} kB)",
            )
        )
    return rows


def _rerun_ms(text: str, open_section: bool, repeats: int) -> float:
    at = AppTest.from_string(SCRIPT, default_timeout=300)
    at.query_params.update({"text": text, "view": "head"})
    at.session_state["explore_neuron_open"] = open_section
    at.run()
    times = []
    for i in range(repeats + 2):
        slider = at.select_slider[1 if i % 2 else 0]
        slider.set_value((int(slider.value) + 1) % len(slider.options))
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
    return statistics.median(times[2:]) * 1000


def rerun_rows(quick: bool) -> list[Row]:
    repeats = 6 if quick else 20
    rows = []
    for text in (TROPHY, sentence(64, 7)):
        closed = _rerun_ms(text, False, repeats)
        opened = _rerun_ms(text, True, repeats)
        rows.append(
            Row(
                f"explore head view rerun, neuron section open minus closed, {len(text.split())} words",
                opened - closed,
                "ms",
                note=f"AppTest, median of {repeats} layer/head changes: {opened:.0f} ms open, "
                f"{closed:.0f} ms closed",
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    return core_rows(quick) + click_rows(quick) + rerun_rows(quick)
