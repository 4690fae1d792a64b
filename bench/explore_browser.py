"""The explore page's model view in a real browser: bytes over the websocket, and time from page open
to every chart drawn, at 3 words, 128 tokens and 512 tokens.

Targets (issue 3 §3): at most 1.5 MB at 128 tokens and 5 MB at 512 tokens; opening on 128 tokens at
most 1 s longer than on 3 words, on 512 tokens at most 2.5 s longer. For the bundled model (6 × 12
heads) and a random model of bert-base's shape (12 × 12, bench/texts.py).

How it is measured:
- one `streamlit run` server on loopback, warmed first (model loaded, every size opened once);
- each open is a new tab in one headless chromium context (new Streamlit session; the browser's
  HTTP cache holds the app's static files, as for anyone who has visited before): from `goto` to
  "the script has finished and as many Plotly charts as the view has are drawn";
- bytes: the payload lengths of every websocket frame the browser receives during that open;
- "new sentence": a text the server has not seen (includes tokenising and the forward pass);
  "computed": the same text reopened (the server's st.cache_data answers);
- sizes are interleaved within each repeat so drifting machine load hits all of them alike; the
  table gives medians.
"""

from __future__ import annotations

import statistics
import time
import urllib.parse
from dataclasses import dataclass, field

from bench.common import Row
from bench.texts import count_tokens, random_base_bert, sentence, short_sentence
from tests.e2e.harness import StreamlitServer, browser, wait_charts

MB = 1_000_000  # payload targets are decimal megabytes
PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"
CHARTS_PER_VIEW = {"head": 1, "lines": 1, "model": 1, "focus": 2}
SIZES = ("3 words", 128, 512)
PAYLOAD_TARGET_MB = {128: 1.5, 512: 5.0}
EXTRA_TIME_TARGET_S = {128: 1.0, 512: 2.5}


def explore_url(base: str, text: str, *, view: str = "model", model: str | None = None, **extra) -> str:
    params = {"text": text, "view": view, **extra}
    if model is not None:
        params["model"] = model
    return f"{base}/explore?{urllib.parse.urlencode(params)}"


@dataclass
class Opened:
    seconds: float  # goto -> every chart drawn
    received: int  # websocket payload bytes received
    text: str = field(repr=False, default="")  # the page's visible text at the end


def open_view(context, url: str, n_charts: int, timeout_ms: float = 180_000) -> Opened:
    """Open `url` in a new tab; wait for the script to finish and `n_charts` charts to be drawn."""
    page = context.new_page()
    received = [0]

    def count(payload) -> None:
        received[0] += len(payload.encode("utf-8") if isinstance(payload, str) else payload)

    page.on("websocket", lambda ws: ws.on("framereceived", count))
    try:
        start = time.perf_counter()
        page.goto(url)
        wait_charts(page, n_charts, timeout_ms)
        seconds = time.perf_counter() - start
        problems = page.locator(PROBLEMS)
        if problems.count():
            raise RuntimeError(
                f"the page shows an error at {url[:120]}…: {problems.first.inner_text()[:300]}"
            )
        return Opened(seconds, received[0], page.locator("body").inner_text())
    finally:
        page.close()


def _text(size: object, variant: int) -> str:
    return short_sentence(variant) if size == "3 words" else sentence(int(size), variant)


def _label(size: object) -> str:
    return "3 words" if size == "3 words" else f"{size} tokens"


def measure_model(context, base: str, model: str | None, repeats: int) -> dict:
    """{size: {"new": [s], "computed": [s], "bytes": [int]}} for the model view of one model."""
    # Warm: the first open loads the model; one open per size warms every code path.
    open_view(context, explore_url(base, "warm up", model=model), 1)
    for size in SIZES:
        open_view(context, explore_url(base, _text(size, 90), model=model), 1)
    out = {size: {"new": [], "computed": [], "bytes": []} for size in SIZES}
    for r in range(repeats):
        for size in SIZES:
            text = _text(size, r)
            url = explore_url(base, text, model=model)
            fresh = open_view(context, url, 1)
            expected = count_tokens(text)
            if f"· {expected} tokens" not in fresh.text:
                raise RuntimeError(f"the page does not say it shows {expected} tokens for {_label(size)}")
            again = open_view(context, url, 1)
            out[size]["new"].append(fresh.seconds)
            out[size]["computed"].append(again.seconds)
            out[size]["bytes"].extend([fresh.received, again.received])
    return out


def rows_for(name: str, data: dict, repeats: int) -> list[Row]:
    med = {size: {k: statistics.median(v) for k, v in d.items()} for size, d in data.items()}
    rows = []
    for size in SIZES:
        payload = max(data[size]["bytes"]) / MB
        rows.append(
            Row(
                f"explore model view payload, {name}, {_label(size)}",
                payload,
                "MB",
                target=PAYLOAD_TARGET_MB.get(size),
                note=f"websocket bytes received, largest of {2 * repeats} opens",
            )
        )
    base = med["3 words"]
    for size in (128, 512):
        for kind, what in (("new", "new sentence"), ("computed", "sentence already computed")):
            rows.append(
                Row(
                    f"explore model view open, {name}, {size} tokens minus 3 words ({what})",
                    med[size][kind] - base[kind],
                    "s",
                    target=EXTRA_TIME_TARGET_S[size],
                    note=f"medians of {repeats}: {med[size][kind]:.2f} s vs {base[kind]:.2f} s "
                    "(page open to every chart drawn)",
                )
            )
    return rows


def run(quick: bool = False) -> list[Row]:
    repeats = 2 if quick else 5
    models = [("bundled 6×12", None), ("random bert-base 12×12", str(random_base_bert()))]
    rows = []
    with StreamlitServer() as server, browser() as b:
        context = b.new_context(viewport={"width": 1400, "height": 1000})
        try:
            for name, model in models:
                rows += rows_for(name, measure_model(context, server.url, model, repeats), repeats)
        finally:
            context.close()
    return rows
