"""First opens on SmolLM2 (issue 49 §2), the model already loaded and nothing else computed: learn's
decoder mode (target 5 s), explore's token focus view on the trophy sentence (3 s: the page's pass,
the pronoun test and the continuation panel with its partner), the logit lens (2 s) and generating
10 tokens (which counts its tokens as they come).

Measured with Streamlit's AppTest, which runs the page script through the server's script runner
(widgets, figures, serialisation; not the network or the browser). One AppTest per view: its first
run loads the model and warms the page; each timed run then gives the page a sentence it has not
seen (a new ~20-token sentence; for the focus view the trophy pair's two sentences in turn, with the
computed results cleared between runs and the engine kept). The figure is the median of the runs.

    python -m bench --only first_open [--beside 2]
"""

from __future__ import annotations

import logging
import statistics

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
TROPHY = tuple(EXAMPLES[name].text for name in ("trophy-large", "trophy-small"))


def _forget_results() -> None:
    """Every computed result cleared, the loaded engines kept (dashboard.engines.cached_engine)."""
    import streamlit as st

    from dashboard import engines
    from dashboard.views.explore import generate
    from dashboard.views.learn import compute

    st.cache_data.clear()
    engines.RESULTS.clear()  # the results every session shares
    generate.shared_generations.clear()
    for traced in (compute.llama_trace, compute.decoder_trace, compute.heatmap):
        traced.clear()


def _opens(script: str, params: dict, box: str, texts: tuple[str, ...]) -> float:
    """Median seconds of the page's runs on each of `texts` typed into the text box `box` (a text
    area on explore, a text input on learn), after a warm-up run."""
    at = AppTest.from_string(script, default_timeout=600)
    at.query_params.update(params)
    timed_run(at)
    times = []
    for text in texts:
        _forget_results()
        widget = at.text_area(key=box) if box == "explore_text" else at.text_input(key=box)
        widget.set_value(text)
        times.append(timed_run(at))
    return statistics.median(times)


def run(quick: bool = False) -> list[Row]:
    from bench.bert_speed import load_average

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # AppTest's bare-mode warnings
    n = 2 if quick else 3
    model = {"model": "smollm2", "text": WARM}
    learn = _opens(LEARN, {"example": "decoder", **model}, "learn_text", SENTENCES[:n])
    focus = _opens(EXPLORE, {"view": "focus", **model}, "explore_text", (TROPHY * 2)[: max(n, 2)])
    lens = _opens(EXPLORE, {"view": "lens", **model}, "explore_text", SENTENCES[1 : n + 1])
    generate = _opens(
        EXPLORE, {"view": "generate", "tokens": "10", **model}, "explore_text", SENTENCES[2 : n + 2]
    )
    note = f"AppTest, median of {n} new sentences; load {load_average()}"
    return [
        Row("first open on SmolLM2: learn's decoder mode", learn, "s", target=5, note=note),
        Row("first open on SmolLM2: token focus, trophy sentence", focus, "s", target=3, note=note),
        Row("first open on SmolLM2: logit lens", lens, "s", target=2, note=note),
        Row("first open on SmolLM2: generate 10 tokens (counted)", generate, "s", note=note),
    ]
