"""The explore page on the server: rerun time on a layer or head change, first render in a cold
process, and peak memory after 50 different sentences.

Targets (issue 3 §3): a layer or head change on a sentence already computed reruns in at most 200 ms
(median); the first render with the bundled model in a cold process takes at most 8 s; a server that
has shown 50 different sentences stays under 800 MB peak RSS.

How each is measured:
- rerun: Streamlit's AppTest runs the page script in-process through the same script runner the
  server uses (widget handling, figure building and serialisation; not the network or the browser
  drawing), as bench/learn_rerun.py does. The sentence is computed first; then each run changes one
  widget (layer, then head, alternately) and is timed.
- cold first render: a fresh `streamlit run` (nothing imported yet, no model loaded) and a new
  headless chromium tab on /explore (default example, head view), timed from starting the process
  to the first chart drawn and to every chart drawn with the script finished.
- memory: the real server (`streamlit run`) driven by headless chromium: 50 different sentences,
  each opened in a new tab on one of the four views in turn; the figure is VmHWM (peak resident set
  size) from /proc/<pid>/status of the server process. Two runs, each on a fresh server: a long mix
  (5 to 512 tokens, 3 in 10 of them 512) and typed sentences (8 to 64 tokens).
"""

from __future__ import annotations

import statistics
import time

from streamlit.testing.v1 import AppTest

from bench.common import Row, timed_run
from bench.explore_browser import CHARTS_PER_VIEW, explore_url, open_view
from bench.texts import count_tokens, random_base_bert, sentence
from tests.e2e.harness import DRAWN_CHART, StreamlitServer, browser, wait_charts

SCRIPT = """
from dashboard.views import explore
explore.render()
"""
RERUN_TARGET_MS = 200
COLD_TARGET_S = 8.0
RSS_TARGET_MB = 800
# Token counts for the memory runs (cycled over the 50 sentences): a long mix, where 3 in 10 inputs
# are 512 tokens (the expensive case), and typed sentences such as the examples gallery's.
RSS_LONG = (512, 24, 256, 512, 128, 8, 384, 512, 64, 200)
RSS_TYPICAL = (12, 24, 8, 40, 16, 64, 20, 32, 10, 48)
VIEWS = ("head", "lines", "model", "focus")


def _widgets(at: AppTest, view: str):
    """The (layer, head) widgets of `view`: sliders in the head view, selectboxes in the model view."""
    if view == "head":
        return at.select_slider[0], at.select_slider[1]
    layer = next(w for w in at.selectbox if w.label == "Layer")
    head = next(w for w in at.selectbox if w.label == "Head")
    return layer, head


def rerun_ms(model: str | None, text: str, view: str, repeats: int) -> float:
    """Median ms of a rerun that changes the layer or the head (alternately) on a computed sentence."""
    at = AppTest.from_string(SCRIPT, default_timeout=300)
    at.query_params.update({"text": text, "view": view, **({"model": model} if model else {})})
    timed_run(at)  # loads the model and computes the sentence
    n_layers, n_heads = (len(w.options) for w in _widgets(at, view))
    times = []
    for i in range(repeats + 2):  # two warm-up changes
        layer_w, head_w = _widgets(at, view)
        widget, n = (layer_w, n_layers) if i % 2 == 0 else (head_w, n_heads)
        widget.set_value((int(widget.value) + 1) % n)  # both hold 0-based layer / head numbers
        times.append(timed_run(at))
    return statistics.median(times[2:]) * 1000


def rerun_rows(quick: bool) -> list[Row]:
    repeats = 6 if quick else 20
    cases = [
        ("bundled 6×12", None, 16, "head"),
        ("bundled 6×12", None, 128, "head"),
        ("bundled 6×12", None, 512, "head"),
        ("bundled 6×12", None, 512, "model"),
        ("random bert-base 12×12", str(random_base_bert()), 128, "head"),
        ("random bert-base 12×12", str(random_base_bert()), 512, "head"),
        ("random bert-base 12×12", str(random_base_bert()), 512, "model"),
    ]
    if quick:
        cases = [c for c in cases if c[2] != 16]
    rows = []
    for name, model, n_tokens, view in cases:
        ms = rerun_ms(model, sentence(n_tokens, 7), view, repeats)
        rows.append(
            Row(
                f"explore rerun on a layer/head change, {name}, {n_tokens} tokens, {view} view",
                ms,
                "ms",
                target=RERUN_TARGET_MS,
                note=f"AppTest, median of {repeats} changes on a computed sentence",
            )
        )
    return rows


def cold_start(b) -> tuple[float, float, float]:
    """Seconds from `streamlit run` to (server healthy, first chart drawn, every chart + idle)."""
    server = StreamlitServer().start()
    try:
        healthy = server.wait_healthy()
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/explore")
        page.locator(DRAWN_CHART).first.wait_for(state="attached", timeout=120_000)
        first_chart = time.perf_counter() - server.started_at
        wait_charts(page, CHARTS_PER_VIEW["head"], 120_000)
        done = time.perf_counter() - server.started_at
        page.close()
        return healthy, first_chart, done
    finally:
        server.stop()


def cold_rows(quick: bool) -> list[Row]:
    repeats = 1 if quick else 3
    with browser() as b:
        samples = [cold_start(b) for _ in range(repeats)]
    healthy, first, done = (statistics.median(s[i] for s in samples) for i in range(3))
    return [
        Row(
            "explore first render, bundled model, cold process (browser)",
            first,
            "s",
            target=COLD_TARGET_S,
            note=f"median of {repeats} fresh `streamlit run` + chromium: process start to first chart "
            f"drawn; server healthy after {healthy:.2f} s, script finished after {done:.2f} s",
        )
    ]


def peak_rss_after_sentences(sizes: tuple[int, ...], n_sentences: int) -> tuple[float, float]:
    """(peak RSS after the first sentence, after all) in MB, of a fresh server shown `n_sentences`
    different sentences of the token counts `sizes` (cycled), each in a new tab, views in turn."""
    with StreamlitServer() as server, browser() as b:
        context = b.new_context(viewport={"width": 1400, "height": 1000})
        try:
            seen = set()
            for i in range(n_sentences):
                n_tokens = sizes[i % len(sizes)]
                text = sentence(n_tokens, 100 + i)
                assert text not in seen and count_tokens(text) == n_tokens
                seen.add(text)
                view = VIEWS[i % len(VIEWS)]
                open_view(context, explore_url(server.url, text, view=view), CHARTS_PER_VIEW[view])
                if i == 0:
                    first = server.peak_rss_mb()
            return first, server.peak_rss_mb()
        finally:
            context.close()


def rss_rows(quick: bool) -> list[Row]:
    n_sentences = 12 if quick else 50
    rows = []
    for what, sizes in (("5–512 tokens, 3 in 10 of 512", RSS_LONG), ("8–64 tokens", RSS_TYPICAL)):
        first, peak = peak_rss_after_sentences(sizes, n_sentences)
        rows.append(
            Row(
                f"explore server peak RSS after {n_sentences} different sentences ({what})",
                peak,
                "MB",
                target=RSS_TARGET_MB,
                note=f"VmHWM of the real `streamlit run` process driven by chromium, bundled model, "
                f"views in turn; {first:.0f} MB after the first sentence",
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    return rerun_rows(quick) + cold_rows(quick) + rss_rows(quick)
