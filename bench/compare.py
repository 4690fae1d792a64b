"""The compare page: rerun time on a layer or head change (server), and time to open two 128-token
sentences in a browser beyond a 3-word pair.

Targets (issue 16, speed): a change of layer or head reruns in at most 200 ms server-side; two
128-token sentences open in at most 1.5 s in the browser beyond a 3-word pair.

How each is measured:
- rerun: Streamlit's AppTest runs the page script in-process through the same script runner the
  server uses (widgets, the ranking, three figures built and serialised; not the network or the
  browser drawing), as bench/explore_server.py does. The pair is computed first; then each run
  moves the layer or the head slider (alternately) and is timed. Pairs differ in one word and line
  up token by token, so every rerun draws both heads, their difference and the ranking table.
- open: one `streamlit run` server on loopback, warmed (model loaded, each size opened once); each
  open is a new tab in one headless chromium context (a new Streamlit session), timed from `goto`
  to the script finished and the three charts drawn (bench/explore_browser.py's open_view). "New
  pair": texts the server has not seen (tokenising and two forward passes included); "computed":
  the same link opened again. Sizes are interleaved within each repeat; medians are reported.
"""

from __future__ import annotations

import statistics
import urllib.parse

from streamlit.testing.v1 import AppTest

from bench.common import Row, timed_run
from bench.explore_browser import open_view
from bench.texts import count_tokens, sentence, short_sentence
from tests.e2e.harness import StreamlitServer, browser

SCRIPT = """
from dashboard.views import compare
compare.render()
"""
RERUN_TARGET_MS = 200
EXTRA_OPEN_TARGET_S = 1.5
SWAPS = (("the", "a"), ("a", "the"), ("and", "or"), ("it", "this"), ("was", "is"))


def pair(n_tokens: int, variant: int = 0) -> tuple[str, str]:
    """Two texts of `n_tokens` tokens each that differ in one word (so they line up)."""
    text = sentence(n_tokens, variant)
    words = text.split(" ")
    for old, new in SWAPS:
        if old in words:
            i = words.index(old)
            other = " ".join([*words[:i], new, *words[i + 1 :]])
            if count_tokens(other) == n_tokens:
                return text, other
    raise ValueError(f"no one-token swap found in variant {variant}")


def short_pair(variant: int = 0) -> tuple[str, str]:
    text = short_sentence(variant)
    first, rest = text.split(" ", 1)
    return text, f"{'A' if first != 'A' else 'The'} {rest}"


def rerun_ms(text: str, text2: str, repeats: int) -> float:
    """Median ms of a rerun that moves the layer or the head (alternately) on a computed pair."""
    at = AppTest.from_string(SCRIPT, default_timeout=300)
    at.query_params.update({"text": text, "text2": text2, "layer": "0", "head": "0"})
    timed_run(at)  # loads the model and computes both sentences
    assert len(at.get("plotly_chart")) == 3, "the pair should line up: both heads and the difference"
    n = [len(s.options) for s in at.select_slider[:2]]
    times = []
    for i in range(repeats + 2):  # two warm-up changes
        slider = at.select_slider[i % 2]
        slider.set_value((int(slider.value) + 1) % n[i % 2])
        times.append(timed_run(at))
    return statistics.median(times[2:]) * 1000


def rerun_rows(quick: bool) -> list[Row]:
    repeats = 6 if quick else 20
    rows = []
    for n_tokens in (17, 128):
        ms = rerun_ms(*pair(n_tokens, 3), repeats)
        rows.append(
            Row(
                f"compare rerun on a layer/head change, bundled 6×12, two {n_tokens}-token sentences",
                ms,
                "ms",
                target=RERUN_TARGET_MS,
                note=f"AppTest, median of {repeats} changes; both heads, the difference and the ranking",
            )
        )
    return rows


def compare_url(base: str, texts: tuple[str, str]) -> str:
    return f"{base}/compare?" + urllib.parse.urlencode({"preset": "own", "text": texts[0], "text2": texts[1]})


def open_rows(quick: bool) -> list[Row]:
    repeats = 3 if quick else 7
    sizes = ("3 words", 128)
    out = {size: {"new": [], "computed": []} for size in sizes}
    with StreamlitServer() as server, browser() as b:
        context = b.new_context(viewport={"width": 1400, "height": 1000})
        try:
            open_view(context, compare_url(server.url, short_pair(7)), 3)  # loads the model
            open_view(context, compare_url(server.url, pair(128, 40)), 3)
            for r in range(repeats):
                for size in sizes:
                    texts = short_pair(r) if size == "3 words" else pair(128, 10 + r)
                    url = compare_url(server.url, texts)
                    out[size]["new"].append(open_view(context, url, 3).seconds)
                    out[size]["computed"].append(open_view(context, url, 3).seconds)
        finally:
            context.close()
    med = {size: {k: statistics.median(v) for k, v in d.items()} for size, d in out.items()}
    return [
        Row(
            f"compare open, two 128-token sentences minus a 3-word pair ({what})",
            med[128][kind] - med["3 words"][kind],
            "s",
            target=EXTRA_OPEN_TARGET_S,
            note=f"chromium, medians of {repeats}: {med[128][kind]:.2f} s vs {med['3 words'][kind]:.2f} s "
            "(page open to both heads and the difference drawn)",
        )
        for kind, what in (("new", "new pair"), ("computed", "pair already computed"))
    ]


def run(quick: bool = False) -> list[Row]:
    return rerun_rows(quick) + open_rows(quick)
