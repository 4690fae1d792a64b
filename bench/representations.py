"""What a word becomes (issue 21): the corpus vectors, the nearest-neighbour search and one head's
query/key space, for the bundled model.

Targets (issue 21): a neighbour query in at most 0.3 s server-side; the query/key space drawn in at
most 1 s.

How each is measured (bundled model, NumPy engine, the built-in corpus):
- corpus vectors: core.measures.neighbours.load_or_compute_vectors into an empty folder (every corpus
  sentence through the model, once per model), then read back from that file; its size on disk and
  the arrays' size in memory.
- neighbour query, core: core.measures.neighbours.nearest for one word after the last layer, median over
  the words of a 32-token sentence.
- neighbour query, page: Streamlit's AppTest on the explore page's similarity view at the last
  layer, a new focus word each run (the sentence already computed): the heatmap, the bars, the
  search and the list; the server's whole run.
- query/key plane, core: head_queries_keys + qk_space + place for every corpus token, median over
  heads; page: AppTest, a new head each run (nothing cached for it).
- query/key view in a browser: one `streamlit run` server on loopback; each open is a new tab on a
  head not opened before, from `goto` to the chart drawn (bench/explore_browser.py's open_view), and
  the bytes the websocket brought.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.common import Row, median_over, timed_run
from bench.texts import count_tokens, sentence

SCRIPT = """
from dashboard.views import explore
explore.render()
"""
N_TOKENS = 32
QUERY_TARGET_S, QK_TARGET_S = 0.3, 1.0
MB = 1_000_000


def core_rows(quick: bool) -> list[Row]:
    from core.measures.neighbours import load_or_compute_vectors, nearest
    from core.measures.qk_space import head_queries_keys, qk_space
    from core.models.bert import BertNumpy
    from dashboard.content.atlas import corpus

    engine = BertNumpy.from_pretrained()
    sentences = corpus()
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        found, source = load_or_compute_vectors(
            "bundled", sentences, engine.run, fingerprint="f", directory=Path(folder)
        )
        computed = time.perf_counter() - start
        assert source == "computed"
        start = time.perf_counter()
        again, source = load_or_compute_vectors(
            "bundled", sentences, engine.run, fingerprint="f", directory=Path(folder)
        )
        read = time.perf_counter() - start
        assert source == "disk"
        on_disk = sum(p.stat().st_size for p in Path(folder).iterdir())
    result = engine.run(sentence(N_TOKENS, 3))
    last = engine.n_layers
    words = result.hidden_states[last, 1:-1]  # the sentence's tokens after the last layer
    query = median_over(lambda q: nearest(found, q, last, 10), words)

    def plane(layer_head) -> None:
        layer, head = layer_head
        q, k = head_queries_keys(found.hidden[layer], engine.layer_weights(layer), head)
        space = qk_space(q, k)
        space.place(q, k)

    heads = [
        (layer, head)
        for layer in range(engine.n_layers)
        for head in range(0, engine.n_heads, 4 if quick else 1)
    ]
    n_tokens, n_words = len(found.tokens), len(found.words)
    return [
        Row(
            f"corpus vectors computed, bundled, {len(sentences)} sentences ({n_tokens} tokens)",
            computed,
            "s",
            note="once per model, NumPy engine; then kept beside the atlas's cache",
        ),
        Row(
            "corpus vectors read from the disk cache",
            read,
            "s",
            note="float16 .npy, mapped; checked on reading",
        ),
        Row(
            "corpus vectors size: on disk / in memory",
            on_disk / MB,
            "MB",
            note=f"in memory {again.hidden.nbytes / MB:.1f} MB: (L + 1) × {n_tokens} tokens × 384, float16",
        ),
        Row(
            f"neighbour query, core: nearest of {n_words} corpus words, last layer",
            query,
            "s",
            target=QUERY_TARGET_S,
            note=f"core.measures.neighbours.nearest, median over the {N_TOKENS - 2} words of a sentence",
        ),
        Row(
            f"query/key plane of one head, core: {n_tokens} queries and keys, centred, scaled, PCA",
            median_over(plane, heads),
            "s",
            note=f"head_queries_keys + qk_space + place, median over {len(heads)} heads",
        ),
    ]


def _page(params: dict) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=300)
    at.query_params.update(params)
    timed_run(at)  # loads the model, reads the corpus vectors
    return at


def page_rows(quick: bool) -> list[Row]:
    from core.prepare import prepare

    prepare("bundled")  # the vectors on disk first: on a slow machine the views ask before computing them
    text = sentence(N_TOKENS, 4)
    assert count_tokens(text) == N_TOKENS
    at = _page({"text": text, "view": "similarity", "layer": "6"})
    words = list(_widget(at.selectbox, "Row of").options)[1:12]  # not [CLS]
    times = []
    for word in words[: 5 if quick else 11]:
        _widget(at.selectbox, "Row of").set_value(word)
        times.append(timed_run(at))
    query = statistics.median(times)
    assert any(m.value.startswith("1. **") for m in at.markdown), "no neighbour list on the page"
    at = _page({"text": text, "view": "qk", "layer": "0", "head": "0"})
    times = []
    for layer, head in [(1, 1), (2, 3), (3, 5), (4, 7), (5, 9), (1, 11), (3, 2)][: 3 if quick else 7]:
        _widget(at.select_slider, "Layer (").set_value(layer)
        _widget(at.select_slider, "Head (").set_value(head)
        times.append(timed_run(at))
    return [
        Row(
            f"neighbour query on the page: similarity view, a new focus word, {N_TOKENS} tokens (server)",
            query,
            "s",
            target=QUERY_TARGET_S,
            note=f"AppTest, median of {len(words[: 5 if quick else 11])}: heatmap, bars, search, list",
        ),
        Row(
            "query/key view on the page, a new head (server)",
            statistics.median(times),
            "s",
            target=QK_TARGET_S,
            note=f"AppTest, median of {len(times)}: plane fitted, figure of 2 × 4354 points serialised",
        ),
    ]


def _widget(widgets, label: str):
    """The widget of that label (AppTest finds widgets by key; these keys carry the model's shape)."""
    return next(w for w in widgets if w.label.startswith(label))


# the chart's title names the head ("Layer 4, head 2" on the head view, "..., head 2: queries and
# keys ..." on this one): wait for the new one, drawn, with the script finished
TITLE_DRAWN_JS = """(head) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const title = document.querySelector(".js-plotly-plot .gtitle");
  return !!title && new RegExp(`head ${head}(:|$)`).test(title.textContent)
    && !!document.querySelector(".js-plotly-plot .main-svg .trace");
}"""


def _next_heads(page, n: int) -> list[float]:
    """Seconds from a key press on the head slider to the next head's chart drawn, n times."""
    thumb = page.locator("[data-testid='stSlider']").filter(has_text="Head (1").get_by_role("slider")
    moved = []
    for head in range(2, n + 2):  # 1-indexed on screen: head 2, 3, ...
        thumb.focus()
        start = time.perf_counter()
        thumb.press("ArrowRight")
        page.wait_for_function(TITLE_DRAWN_JS, arg=head, timeout=60_000, polling="raf")
        moved.append(time.perf_counter() - start)
    return moved


def browser_rows(quick: bool) -> list[Row]:
    from bench.explore_browser import open_view
    from tests.e2e.harness import StreamlitServer, browser, wait_charts

    n = 4 if quick else 9
    with StreamlitServer() as server, browser() as chromium:
        context = chromium.new_context(viewport={"width": 1280, "height": 800})
        open_view(context, f"{server.url}/explore?view=qk&layer=0&head=0", 1)  # warm: model, corpus
        opened = [open_view(context, f"{server.url}/explore?view=qk&layer=1&head={h}", 1) for h in range(n)]
        moved = {}
        for view in ("head", "qk"):  # the head view: what any rerun costs in this browser
            page = context.new_page()
            page.goto(f"{server.url}/explore?view={view}&layer=3&head=0")
            wait_charts(page, 1, 180_000)
            moved[view] = _next_heads(page, n)
            page.close()
        context.close()
    return [
        Row(
            "query/key view: the next head picked on the page, to its chart drawn (browser)",
            statistics.median(moved["qk"]),
            "s",
            target=QK_TARGET_S,
            note=f"slider moved by a key press, heads not opened before, median of {n}; the same on the "
            f"head view (one small heatmap) takes {statistics.median(moved['head']):.2f} s",
        ),
        Row(
            "query/key view opened in a new tab on a new head (browser)",
            statistics.median(o.seconds for o in opened),
            "s",
            note=f"goto to chart drawn, a new Streamlit session each (about 1.9 s of it is any page's "
            f"start, see the explore rows), median of {len(opened)}; "
            f"{statistics.median(o.received for o in opened) / MB:.2f} MB over the websocket",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    return core_rows(quick) + page_rows(quick) + browser_rows(quick)
