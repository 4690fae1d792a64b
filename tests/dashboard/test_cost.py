"""AppTests of the cost page on the bundled model: the three parts draw, the numbers the page prints
are recomputed here independently (the head's Q, K, V from the traced layer, the variant's error
with loop sums, the window sweep, the n × n weights' size by hand), links with bad parameters get
messages naming the nearest valid value, presenter mode shows one part at a time, part 4 (one more
token, a decoder's: tests/dashboard/test_cost_decoder.py) is one line here, and hosted mode stops the
measurement at n = 1024 and says so."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.cost.variants import Variant
from core.models.bert import BertNumpy
from dashboard.content.cost import DEFAULT_TEXT, NEXT_ENCODER_ONLY, NEXT_HEADER
from tests.dashboard.harness import assert_no_crash, chart_specs, messages, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("cost")


@pytest.fixture(scope="module")
def bundled():
    return BertNumpy.from_pretrained()


def open_page(**params) -> AppTest:
    """The page alone (app.py's presenter toggle does not run: present=1 is put in session state)."""
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    if params.pop("present", None) == "1":
        at.session_state["present"] = True
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_every_part_draws_with_numbers_recomputed_here(bundled):
    at = open_page(layer="5", head="5", variant="longformer", w="2")
    assert not at.error and not at.warning, messages(at)
    # price (1), the two maps, timing (3), layer changes, window and Performer sweeps (3)
    assert n_charts(at) == 7
    # part 4 is a decoder's (tests/dashboard/test_cost_decoder.py): one line for an encoder
    assert at.header[-1].value == NEXT_HEADER and messages(at) == [NEXT_ENCODER_ONLY]
    text = markdown(at)
    # the head's error, recomputed from the traced layer 6 with loops over rows
    result = bundled.run(DEFAULT_TEXT, trace_layers=[5])
    trace = result.traces[5]
    q, k, v = (trace[name][5].astype(np.float64) for name in ("query", "key", "value"))
    full_out, full_w = Variant("full")(q, k, v)
    out, weights = Variant("longformer", w=2).with_globals(result.special_mask)(q, k, v)
    tv = np.mean(
        [0.5 * sum(abs(a - b) for a, b in zip(weights[i], full_w[i], strict=True)) for i in range(len(q))]
    )
    rel = np.sqrt(((out - full_out) ** 2).sum() / (full_out**2).sum())
    assert f"mean row total variation **{tv:.3f}**" in text
    assert f"moves by **{rel:.1%}**" in text
    # the n × n weights: 6 layers × 12 heads × n² × 4 bytes
    assert f"**{6 * 12 * 512**2 * 4 / 1e6:.1f} MB** at 512 tokens" in text
    assert f"**{6 * 12 * 32768**2 * 4 / 1e9:,.0f} GB** at 32k tokens" in text
    # the window sweep's answer on the trophy sentence (tests/core/test_variant_model.py checks the
    # sweep itself): radius 10 keeps the embedding within 0.05, radius 9 does not
    assert re.search(r"a window of radius \*\*10\*\* or more", text), text
    # the price chart: measured curves at every length up to 4096 (the layer's up to 2048)
    price = chart_specs(at)[0]["data"]
    lengths = {
        trace["name"].split(":")[0]: trace["x"] for trace in price if trace.get("showlegend") is not False
    }
    assert max(lengths["steps 3–6, one head"]) == 4096
    assert max(lengths["steps 3–6, a layer's 12 heads"]) == 2048
    assert "n ≈ **" in text and "n = 2d = **768**" in text


BAD_LINK = {"w": "-3", "s": "0", "m": "99999999", "k": "x", "layer": "99", "head": "-1", "variant": "nope"}


def test_bad_parameters_get_the_nearest_valid_value():
    at = open_page(**BAD_LINK)
    shown = " ".join(messages(at))
    assert "`w` value -3 is below 0; using 0, the nearest valid value" in shown
    assert "`s` value 0 is below 1; using 1" in shown
    assert "`m` value 99999999 is above 1024; using 1024" in shown
    assert "`k` value is not a whole number; using 8" in shown
    assert "`head` value -1 is outside this model's heads: heads 1–12 on screen" in shown
    assert "`layer` value 99 is outside this model's layers: layers 1–6 on screen" in shown
    assert "Showing layer 6, the nearest" in shown and "Showing head 1, the nearest" in shown
    assert "unknown `variant`" in shown
    assert not at.error and n_charts(at) == 7
    ss = at.session_state
    assert (ss["cost_w"], ss["cost_s"], ss["cost_m"], ss["cost_layer"], ss["cost_head"]) == (0, 1, 1024, 5, 0)
    # the link now says what is shown
    assert {name: at.query_params.get(name) for name in ("w", "s", "m", "layer", "head", "variant")} == {
        "w": "0",
        "s": "1",
        "m": "1024",
        "layer": "5",
        "head": "0",
        "variant": None,
    }


def test_linformer_k_past_the_sentence_is_said():
    at = open_page(variant="linformer", k="500")
    assert "Linformer uses k = 17" in " ".join(c.value for c in at.caption)


@pytest.mark.parametrize(("part", "charts"), [("price", 1), ("head", 2), ("model", 2)])
def test_presenter_mode_shows_one_part(part, charts):
    at = open_page(present="1", part=part)
    assert not at.error and n_charts(at) == charts, messages(at)


def test_presenter_part_4_on_an_encoder_says_it_is_for_decoders():
    at = open_page(present="1", part="next")
    assert messages(at) == [NEXT_ENCODER_ONLY] and n_charts(at) == 1  # and the price instead
    assert at.session_state["cost_part"] == "price"


def test_an_empty_sentence_keeps_the_price():
    at = open_page(text="   ")
    assert "Type a sentence above" in " ".join(messages(at))
    assert n_charts(at) == 1 and not at.error


def test_hosted_mode_stops_at_1024(monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    at = open_page(present="1", part="price")
    price = chart_specs(at)[0]["data"]
    assert max(max(trace["x"]) for trace in price) == 1024
    assert "This public demo measures up to n = 1024" in " ".join(c.value for c in at.caption)


def test_presenter_parts_keep_the_chosen_head():
    """The head's pickers are not drawn while the price fills the screen; coming back finds them."""
    at = open_page(present="1", part="head", layer="3", head="4")
    for part in ("price", "model", "head"):
        at.button_group(key="cost_part").set_value(part).run()
    assert (at.session_state["cost_layer"], at.session_state["cost_head"]) == (3, 4)
    assert at.query_params["layer"] == "3" and at.query_params["head"] == "4"


def test_the_price_charts_memory_is_in_the_mb_its_axis_says():
    """Peak bytes over 10**6, the MB every page prints (issue 48: bytes over 2**20 were labelled MB)."""
    from core.cost.price import Curve
    from dashboard.charts.cost import price_chart

    curve = Curve("one head", (16, 32), (1e-4, 2e-4), (3_000_000, 12_500_000))
    fig = price_chart([curve], {}, title="t", memory_title="peak memory").to_dict()
    memory = fig["data"][1]
    assert list(memory["y"]) == [b / 10**6 for b in curve.peak_bytes]
    assert fig["layout"]["yaxis2"]["title"]["text"] == "peak memory, MB"
    assert "MB" in memory["hovertemplate"]
