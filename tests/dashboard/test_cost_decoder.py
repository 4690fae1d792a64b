"""AppTests of the cost page on a decoder (a tiny random GPT-2 the module builds, loaded from its
folder with `model=`): part 4, one more token with the KV cache and without, draws its measured
curves with the exponents core.cost.price.Curve fits to the plotted points, and the cache's size at
the chosen n as core.cost.generation computes it; the price still works, the variants say in one
line why they are for encoders; a long sweep waits for its button (and times the page open's
contexts again); links with a bad `n` get the nearest valid value; presenter mode shows one part; a
model too short for a curve, or for any context, says so."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.cost.generation import cache_megabytes, cache_numbers
from core.cost.price import Curve
from core.models.gpt2 import GPT2Numpy
from dashboard.content import cost as text
from dashboard.hosted import LOCAL
from dashboard.views.cost import measure
from tests.dashboard.harness import assert_no_crash, chart_specs, messages, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.usefixtures("fast_apptest")

SCRIPT = page_script("cost")
POSITIONS = 64  # contexts 16, 32 and 63 (n + 1 positions must fit)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    # width 16 and 2 heads, as the fuzz tests' tiny BERT: the price curves of that shape are
    # measured once per test process
    return make_tiny_gpt2(
        tmp_path_factory.mktemp("cost_gpt2"), n_layer=2, n_head=2, n_embd=16, n_positions=POSITIONS
    )


@pytest.fixture(scope="module")
def engine(tiny_gpt2):
    return GPT2Numpy.from_pretrained(tiny_gpt2)


def open_page(model, **params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    if params.pop("present", None) == "1":
        at.session_state["present"] = True
    at.query_params.update({"model": str(model), **params})
    at.run()
    assert_no_crash(at)
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def next_chart(at: AppTest) -> dict:
    label = text.NEXT_LABELS[measure.CACHED]
    (found,) = [spec for spec in chart_specs(at) if spec["data"][0]["name"].startswith(label)]
    return found


def test_one_more_token_shows_core_numbers(tiny_gpt2, engine):
    at = open_page(tiny_gpt2, n="40")
    assert not at.error and not at.warning, messages(at)
    assert text.VARIANTS_ENCODER_ONLY in messages(at)  # parts 2 and 3: one line
    assert n_charts(at) == 2  # the price and one more token
    cached, recomputed, line, marker = next_chart(at)["data"]
    contexts = measure.next_contexts(POSITIONS, LOCAL.max_price_layer_n)
    assert contexts == (16, 32, 63)
    curves = []
    for trace, name in ((cached, measure.CACHED), (recomputed, measure.RECOMPUTED)):
        assert tuple(trace["x"]) == contexts
        seconds = tuple(ms / 1e3 for ms in trace["y"])
        curve = Curve(name, contexts, seconds, (0,) * len(contexts))
        assert trace["name"] == f"{text.NEXT_LABELS[name]}: n^{curve.exponent:.2f}"
        curves.append(curve)
    # the cache's size: the formula's line through the contexts and the chosen n, marked
    assert line["x"] == [16, 32, 40, 63]
    assert line["y"] == pytest.approx([cache_megabytes(engine, n) for n in line["x"]], rel=1e-12)
    assert (marker["x"], marker["y"]) == ([40], [pytest.approx(cache_megabytes(engine, 40), rel=1e-12)])
    numbers = cache_numbers(2, 2, 8, 40)
    assert numbers == 2 * 2 * 2 * 8 * 40
    mb = f"{cache_megabytes(engine, 40):.3g}"  # below 1 MB: three significant digits
    assert mb == f"{numbers * 4 / 10**6:.3g}"  # MB: 10**6 bytes, the unit every page prints
    shown = markdown(at)
    assert f"**{numbers:,} numbers**, **{mb} MB** in float32" in shown
    assert [(m.label, m.value) for m in at.metric] == [("KV cache at n = 40", f"{mb} MB")]
    # the sentence under the chart reads the longest context's points and the fitted exponents
    at_cache, at_full = curves[0].seconds[-1], curves[1].seconds[-1]
    assert f"At n = **63**, one more token takes **{at_cache * 1e3:.1f} ms** with the cache" in shown
    ratio = at_full / at_cache if at_full >= at_cache else at_cache / at_full
    assert f"**{ratio:.1f}×**" in shown
    assert f"**n^{curves[0].exponent:.2f}** with the cache, **n^{curves[1].exponent:.2f}** without" in shown
    assert at.query_params["n"] == "40"


def test_the_n_picker_moves_the_cache(tiny_gpt2, engine):
    at = open_page(tiny_gpt2)
    assert at.number_input(key="cost_n").value == POSITIONS  # unset: the whole context
    at.number_input(key="cost_n").set_value(7).run()
    assert at.metric[0].value == f"{cache_megabytes(engine, 7):.3g} MB"
    assert next_chart(at)["data"][3]["x"] == [7] and at.query_params["n"] == "7"


@pytest.mark.parametrize(
    ("raw", "used", "note"),
    [
        ("0", 1, "The link's `n` value 0 is outside this model's context: 1–64. Using 1"),
        ("99999999999999", 64, "value (a huge number) is outside this model's context: 1–64. Using 64"),
        ("ten", 64, "The link's `n` value is not a whole number; using the model's whole context."),
    ],
)
def test_a_bad_n_gets_the_nearest_valid_value(tiny_gpt2, raw, used, note):
    at = open_page(tiny_gpt2, n=raw)
    assert any(note in m for m in messages(at)), messages(at)
    assert at.number_input(key="cost_n").value == used and at.query_params["n"] == str(used)
    assert n_charts(at) == 2


def test_a_long_sweep_waits_for_its_button(tiny_gpt2, monkeypatch):
    store = measure.price_store()
    for key in [k for k in store.rows if k[:2] == (measure.NEXT, str(tiny_gpt2))]:
        del store.rows[key]
    monkeypatch.setattr(measure, "AUTO_SECONDS", 0.0)  # every sweep counts as long
    at = open_page(tiny_gpt2)
    assert n_charts(at) == 1  # the price; one more token waits
    (button,) = at.button
    assert button.label.startswith("Measure n = 16 … 63 (about ")
    assert "Measured so far: n = 16 (n = 16 took " in markdown(at)
    # 16 again, 32 and 63: each its cache, three cached steps and three full passes
    assert "21 passes through the model of up to 64 tokens" in markdown(at)
    assert at.metric[0].label == "KV cache at n = 64"  # the formula needs no measurement
    button.click().run()
    assert n_charts(at) == 2 and not at.button, messages(at)
    # the sweep timed the page open's context again, with the browser idle
    assert [store.rows[(measure.NEXT, str(tiny_gpt2), n)][2] for n in (16, 32, 63)] == [False] * 3
    at.run()  # measured once: a later run keeps the chart without the button
    assert n_charts(at) == 2 and not at.button


def test_presenter_mode_shows_one_part(tiny_gpt2):
    at = open_page(tiny_gpt2, present="1", part="next")
    assert n_charts(at) == 1 and next_chart(at) and not at.error
    assert at.button_group(key="cost_part").options == [text.PARTS["price"], text.PARTS["next"]]
    at = open_page(tiny_gpt2, present="1", part="head")  # the variants' part: said, then the price
    assert text.VARIANTS_ENCODER_ONLY in messages(at)
    assert n_charts(at) == 1 and at.session_state["cost_part"] == "price"


SHORT = "This model holds 3 positions: too few context lengths for a curve. At n = 2,"


@pytest.mark.parametrize(("positions", "said"), [(3, SHORT), (1, text.NEXT_NO_CONTEXT)])
def test_a_model_too_short_for_a_curve_says_so(tmp_path, positions, said):
    short = make_tiny_gpt2(tmp_path, n_layer=1, n_head=2, n_embd=16, n_positions=positions)
    at = open_page(short)
    assert any(said in m for m in [*messages(at), markdown(at)]), (messages(at), markdown(at))
    assert n_charts(at) == 1 and not at.error  # the price


def test_a_grouped_query_model_prices_its_shared_cache_beside_full_multi_head(tmp_path):
    """A tiny Llama, 4 query heads sharing 2 key/value heads: the cache line counts the 2, and says
    what 4 would hold."""
    from core.models.llama import LlamaNumpy
    from tests.tiny_llama import make_tiny_llama

    folder = make_tiny_llama(tmp_path, layers=2, heads=4, kv_heads=2, width=32, positions=POSITIONS)
    llama = LlamaNumpy.from_pretrained(folder)
    at = open_page(folder, n="40")
    assert not at.error, messages(at)
    numbers = cache_numbers(2, 2, 8, 40)
    mb, full = f"{cache_megabytes(llama, 40):.3g}", f"{cache_megabytes(llama, 40, kv_heads=4):.3g}"
    shown = markdown(at)
    assert f"2 · 2 layers · 2 key/value heads · 8 (d_head) · 40 positions = **{numbers:,} numbers**" in shown
    assert "each key/value head serves 2 of the 4 query heads" in shown
    assert f"it would be **{full} MB**, 2× as much" in shown and mb != full
