"""First opens on SmolLM2 (issue 49 §2), the model already loaded and nothing else computed: learn's
decoder mode (target 5 s), explore's token focus view on the trophy sentence (3 s: the page's pass,
the pronoun test and the continuation panel with its partner), the logit lens (2 s) and generating
10 tokens (which counts its tokens as they come).

Measured with Streamlit's AppTest, which runs the page script through the server's script runner
(widgets, figures, serialisation; not the network or the browser). One AppTest per view: its first
run loads the model and warms the page; each timed run then gives the page a sentence it has not
seen (a new ~20-token sentence; for the focus view the trophy pair's two sentences in turn, with the
computed results cleared between runs and the engine kept). The figure is the median of the runs.
A view that asks first when its work would be long here (dashboard/long_work.py) is timed doing the
work: the bench sets ATTENTION_EXPLORER_ASK_AFTER to inf while it runs.

    python -m bench --only first_open [--beside 2]
"""

from __future__ import annotations

import logging
import os
import statistics
import time

from streamlit.testing.v1 import AppTest

from bench.common import Row, timed_run
from dashboard.content.explore import EXAMPLES

EXPLORE = "from dashboard.views import explore\nexplore.render()\n"
LEARN = "from dashboard.views import learn\nlearn.render()\n"
WARM = "A quiet sentence to load the model with before anything is timed."
# new sentences of about 20 SmolLM2 tokens, one per timed run
SENTENCES = (
    "The old fisherman rowed out to the middle of the lake and waited for the fish to bite.",
    "A small boat drifted past the mill while two children counted the ducks on the river.",
    "The teacher explained the idea to a room full of students who argued about it all night.",
    "Nobody expected the winter to be so cold, yet the bread sold faster than it ever had.",
    "The library closed early because the heating had failed, so the students went to the cafe.",
)
ASK_AFTER = "ATTENTION_EXPLORER_ASK_AFTER"  # dashboard.long_work.ask_after reads it
TROPHY = tuple(EXAMPLES[name].text for name in ("trophy-large", "trophy-small"))


def _forget_results() -> None:
    """Every computed result cleared, the loaded engines kept (dashboard.engines.cached_engine)."""
    import streamlit as st

    from dashboard import engines, long_work
    from dashboard.views.learn import compute

    st.cache_data.clear()
    engines.RESULTS.clear()  # the results every session shares
    long_work.shelf.clear()  # finished long work kept for every session (the generations among it)
    for traced in (compute.llama_trace, compute.decoder_trace, compute.heatmap):
        traced.clear()


def _opens(script: str, params: dict, box: str, texts: tuple[str, ...]) -> tuple[float, float]:
    """Median seconds of the page's runs on each of `texts` typed into the text box `box` (a text
    area on explore, a text input on learn), after a warm-up run: wall time, and the process's CPU
    time (every thread's; on a busy machine the steadier of the two)."""
    at = AppTest.from_string(script, default_timeout=600)
    at.query_params.update(params)
    timed_run(at)
    times, cpu = [], []
    for text in texts:
        _forget_results()
        widget = at.text_area(key=box) if box == "explore_text" else at.text_input(key=box)
        widget.set_value(text)
        start = time.process_time()
        times.append(timed_run(at))
        cpu.append(time.process_time() - start)
    return statistics.median(times), statistics.median(cpu)


def run(quick: bool = False) -> list[Row]:
    from bench.bert_speed import load_average

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # AppTest's bare-mode warnings
    n = 2 if quick else 3
    model = {"model": "smollm2", "text": WARM}
    opens = {
        "learn's decoder mode": (LEARN, {"example": "decoder"}, "learn_text", SENTENCES[:n], 5),
        "token focus, trophy sentence": (EXPLORE, {"view": "focus"}, "explore_text", (TROPHY * 2)[:n], 3),
        "logit lens": (EXPLORE, {"view": "lens"}, "explore_text", SENTENCES[1 : n + 1], 2),
        "generate 10 tokens (counted)": (
            EXPLORE,
            {"view": "generate", "tokens": "10"},
            "explore_text",
            SENTENCES[2 : n + 2],
            None,
        ),
    }
    rows, asked_after = [], os.environ.get(ASK_AFTER)
    os.environ[ASK_AFTER] = "inf"  # the work timed, not a button that asks for it
    try:
        found = {
            name: _opens(script, {**params, **model}, box, texts)
            for name, (script, params, box, texts, _t) in opens.items()
        }
    finally:
        if asked_after is None:
            os.environ.pop(ASK_AFTER)
        else:
            os.environ[ASK_AFTER] = asked_after
    for name, (_script, _params, _box, texts, target) in opens.items():
        wall, cpu = found[name]
        note = f"AppTest, median of {len(texts)} new sentences; CPU {cpu:.2f} s; load {load_average()}"
        rows.append(Row(f"first open on SmolLM2: {name}", wall, "s", target=target, note=note))
    return rows
