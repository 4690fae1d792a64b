"""The explore page on a decoder (a GPT-2 checkpoint built here): every view it offers draws, the
numbers each decoder view shows are core's (next word, generation, logit lens, sinks, induction),
the step control walks a generation, a view of the other kind says so in one line, and bad link
values get a message and the nearest valid value."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.decoder_reads import first_token_share, likeliest, logit_lens
from core.measures.induction import INDUCTION_MIN, induction
from core.models.gpt2 import GPT2Numpy
from core.models.smollm2 import SMOLLM2_KEY
from dashboard.charts.decoder import shown_token
from dashboard.charts.explore import escape_label
from dashboard.content import ablation as ablation_text
from dashboard.content import decoder as text
from dashboard.views.explore.ablation import next_token_change
from dashboard.views.explore.decoder import views_for
from dashboard.views.explore.induction import top_scoring
from dashboard.widgets import md
from tests.dashboard.harness import (
    assert_no_crash,
    chart_specs,
    messages,
    n_charts,
    page_script,
    plotly_array,
)
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.usefixtures("fast_apptest")

SCRIPT = page_script("explore")
TEXT = "The trophy would not fit in the suitcase because it was too large."


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(
        tmp_path_factory.mktemp("explore_gpt2"), n_layer=2, n_head=3, n_embd=24, n_positions=64
    )


@pytest.fixture(scope="module")
def engine(gpt2_dir):
    return GPT2Numpy.from_pretrained(gpt2_dir)


def open_page(gpt2_dir, **params) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": str(gpt2_dir), "text": TEXT, **params})
    at.run()
    assert_no_crash(at, params)
    return at


def shown(at: AppTest) -> str:
    return " ".join(str(m.value) for kind in ("markdown", "caption", "info") for m in at.get(kind))


@pytest.mark.parametrize("view", views_for(True))
def test_every_decoder_view_draws(gpt2_dir, view):
    at = open_page(gpt2_dir, view=view)
    assert not at.error, messages(at)
    assert at.session_state["explore_view"] == view
    assert n_charts(at) >= 1, messages(at)


def test_next_word_shows_the_engines_five_likeliest(gpt2_dir, engine):
    at = open_page(gpt2_dir, view="nextword")
    ids, probs = likeliest(engine.run(TEXT).next_token_logits, 5)
    bars = chart_specs(at)[0]["data"][0]
    np.testing.assert_allclose(plotly_array(bars["x"]), probs, atol=1e-6)
    assert bars["y"][0] == escape_label(shown_token(engine.decode(ids[0])))
    assert f"({probs[0]:.1%})" in shown(at)


@pytest.mark.parametrize("prompt", ["The cat sat", TEXT])
def test_next_words_quote_has_an_ellipsis_only_where_it_is_cut(gpt2_dir, engine, prompt):
    """The sentence quotes the prompt's last tokens; "…" only when the prompt has more than those
    (issue 48: "After “…The capital of France is”" though nothing was cut)."""
    from dashboard.views.explore.decoder import TAIL

    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": str(gpt2_dir), "text": prompt, "view": "nextword"})
    at.run()
    assert_no_crash(at)
    ids = engine.encode(prompt).ids
    quoted = md("".join(engine.decode(i) for i in ids[-TAIL:]).lstrip())
    cut = len(ids) > TAIL
    assert cut == (prompt == TEXT)  # one prompt of each kind
    assert f"After “{'…' if cut else ''}{quoted}”, the model's first choice" in shown(at)


def test_generation_is_the_engines_and_the_step_control_walks_it(gpt2_dir, engine):
    at = open_page(gpt2_dir, view="generate", tokens="6")
    expected = engine.generate(TEXT, 6, top=20)  # the view shows 20 candidates
    assert "**Step 1 of 6:**" in shown(at)
    first = expected.steps[0]
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[0]["data"][0]["x"]), [p for _t, p in first.top], atol=1e-6
    )
    layer = at.session_state["explore_layer"]
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[1]["data"][0]["z"]), first.attentions[layer], atol=1e-6
    )
    at.button(key="explore_gen_next").click().run()
    assert at.session_state["explore_gen_step"] == 2
    second = expected.steps[1]
    assert f"**Step 2 of 6:** {md(''.join(expected.prompt) + first.token)}" in shown(at)
    assert len(chart_specs(at)[1]["data"][0]["x"]) == len(expected.prompt) + 1  # one more token seen
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[1]["data"][0]["z"]), second.attentions[layer], atol=1e-6
    )


def generate_layer(at: AppTest) -> int:
    """The layer the generate view's slider shows (0-indexed)."""
    (slider,) = [s for s in at.select_slider if s.key.startswith("explore_w_gen_layer_")]
    return int(slider.value)


def test_the_generate_views_layer_is_in_the_link_and_the_link_reopens_it(gpt2_dir, engine):
    """Issue 48: moving the layer left `layer=0` in the link, and the link reopened the last layer."""
    at = open_page(gpt2_dir, view="generate", tokens="3")
    last = engine.n_layers - 1
    assert generate_layer(at) == last and at.query_params["layer"] == str(last)  # no layer named: the last
    (slider,) = [s for s in at.select_slider if s.key.startswith("explore_w_gen_layer_")]
    slider.set_value(0).run()
    assert_no_crash(at)
    assert at.query_params["layer"] == "0"
    first = engine.generate(TEXT, 3).steps[0]
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[1]["data"][0]["z"]), first.attentions[0], atol=1e-6
    )
    link = {name: at.query_params[name] for name in at.query_params}
    again = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    again.query_params.update(link)
    again.run()
    assert_no_crash(again)
    assert generate_layer(again) == 0 and again.query_params["layer"] == "0"
    # the head view shows the same layer, and a layer the model lacks is the nearest, with a note
    again.segmented_control(key="explore_view").set_value("head").run()
    assert again.query_params["layer"] == "0"
    far = open_page(gpt2_dir, view="generate", tokens="3", layer=str(last + 5))
    assert generate_layer(far) == last and "outside this model's layers" in " ".join(messages(far))


def test_sampling_with_a_seed_is_reproduced_by_the_link(gpt2_dir, engine):
    at = open_page(gpt2_dir, view="generate", tokens="5", temperature="1.5", seed="7", step="5")
    expected = engine.generate(TEXT, 5, temperature=1.5, seed=7, top=20)
    assert "**Step 5 of 5:**" in shown(at) and "seed 7" in shown(at)
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[0]["data"][0]["x"])[:20],  # then the drawn token, when past them
        [p for _t, p in expected.steps[4].top],
        atol=1e-6,
    )
    assert at.query_params["temperature"] == "1.5" and at.query_params["seed"] == "7"


def test_the_logit_lens_is_cores(gpt2_dir, engine):
    longer = TEXT + " It did not fit at all."
    at = open_page(gpt2_dir, view="lens", text=longer)
    result = engine.run(longer)
    lens = logit_lens(engine, result.hidden_states[:, -16:])
    heat = chart_specs(at)[0]["data"][0]
    np.testing.assert_allclose(plotly_array(heat["z"]), lens.top_probs, atol=1e-6)
    assert heat["text"][-1][-1] == shown_token(engine.decode(lens.top_ids[-1, -1])).replace("&", "&amp;")
    assert text.LENS_LONG.format(n=16, total=result.n_tokens) in shown(at)


def test_sinks_are_the_first_token_shares(gpt2_dir, engine):
    at = open_page(gpt2_dir, view="sinks")
    shares = first_token_share(engine.run(TEXT).attentions)
    np.testing.assert_allclose(plotly_array(chart_specs(at)[0]["data"][0]["z"]), shares, atol=1e-6)
    head_view = open_page(gpt2_dir, view="head", layer="1", head="2")
    assert f"sends {shares[1, 2]:.0%} of its attention" in shown(head_view)


def test_induction_switches_off_only_heads_that_score_as_induction_heads(gpt2_dir, engine):
    """A random model has no induction head: none scores INDUCTION_MIN, so none is switched off (the
    losses chart has no third bar), however many the link allows."""
    at = open_page(gpt2_dir, view="induction", length="20", seed="3", top="2")
    found = induction(engine, 20, 3)
    assert found.scores.max() < INDUCTION_MIN and top_scoring(found.scores, 2) == ()
    np.testing.assert_allclose(plotly_array(chart_specs(at)[0]["data"][0]["z"]), found.scores, atol=1e-6)
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[1]["data"][0]["y"]), [found.loss_first, found.loss_repeat], atol=1e-9
    )
    assert f"{found.loss_first:.2f}" in shown(at)


def test_a_view_of_the_other_kind_says_so(gpt2_dir):
    decoder_on_encoder = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    decoder_on_encoder.query_params.update({"model": "bundled", "view": "generate", "text": TEXT})
    decoder_on_encoder.run()
    assert text.DECODER_ONLY.format(view="Generate") in messages(decoder_on_encoder)
    assert decoder_on_encoder.session_state["explore_view"] == "head" and n_charts(decoder_on_encoder)
    at = open_page(gpt2_dir, view="qk")
    assert text.ENCODER_ONLY.format(view="Q/K space") in messages(at)
    at = open_page(gpt2_dir, view="head", text="The [MASK] sat on the mat.")
    assert text.MASK_DECODER in shown(at)


@pytest.mark.slow
def test_a_decoders_view_with_no_model_named_opens_smollm2():
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"view": "nextword", "text": "The bank approved the"})
    at.run()
    assert not at.exception and not at.error
    assert at.session_state["explore_model"] == SMOLLM2_KEY and at.session_state["explore_view"] == "nextword"
    assert "the model's first choice is" in shown(at) and n_charts(at)


@pytest.mark.parametrize(
    ("params", "note", "state"),
    [
        ({"tokens": "0"}, "below 1; using 1", ("explore_gen_tokens", 1)),
        ({"tokens": "99"}, "above 50; using 50", ("explore_gen_tokens", 50)),
        ({"temperature": "-1"}, "0 or below; using 0.1", ("explore_gen_temperature", 0.1)),
        ({"temperature": "9"}, "above 2.0; using 2", ("explore_gen_temperature", 2.0)),
        ({"temperature": "nan"}, "not a number; generating greedily", ("explore_gen_temperature", None)),
        ({"length": "1000"}, "above 256; using 256", ("explore_ind_length", 32)),
    ],
)
def test_bad_link_values_get_the_nearest_valid_value(gpt2_dir, params, note, state):
    view = "induction" if "length" in params else "generate"
    at = open_page(gpt2_dir, view=view, **params)
    assert any(note in m for m in messages(at)), messages(at)
    assert at.session_state[state[0]] == state[1]
    assert n_charts(at) >= 1 and not at.error


def test_a_prompt_near_the_context_generates_what_fits(gpt2_dir, engine):
    long_text = "the cat sat on the mat " * 12  # past 64 tokens: the model reads the first 64
    at = open_page(gpt2_dir, view="generate", tokens="10", text=long_text)
    n_prompt = len(engine.encode(long_text).ids)
    kept = max(1, 64 - n_prompt + 1)
    assert text.GEN_CUT.format(prompt=n_prompt, context=64, asked=10, kept=kept) in messages(at)
    assert f"of {kept}:**" in shown(at)


@pytest.mark.parametrize("engine_name", ["numpy", "torch"])
def test_the_parity_badge_on_a_decoder(gpt2_dir, engine_name):
    at = open_page(gpt2_dir, view="head", engine=engine_name)
    if any(t.key == "explore_parity" for t in at.toggle):
        at.toggle(key="explore_parity").set_value(True).run()
    badges = [m.value for m in at.markdown if "NumPy vs PyTorch" in m.value]
    assert badges, messages(at)
    assert float(re.search(r"max \|Δ\| = ([0-9.e+-]+)", badges[0]).group(1)) <= 1e-5
    assert "green-badge" in badges[0]


def test_induction_on_a_model_that_copies(tmp_path_factory):
    """The hand-built GPT-2 whose layer 2, head 1 is an induction head that copies: its score is
    the top one, the second copy's loss falls, and switching that head off takes it back up."""
    from tests.role_gpt2 import make_role_gpt2

    model = make_role_gpt2(tmp_path_factory.mktemp("role_gpt2"))
    found = induction(GPT2Numpy.from_pretrained(model), 30, 0)
    cut = induction(GPT2Numpy.from_pretrained(model), 30, 0, [(1, 0)])
    assert top_scoring(found.scores, 1) == ((1, 0),) and found.loss_repeat < found.loss_first - 1
    at = open_page(model, view="induction", length="30", top="1")
    said = shown(at)
    assert f"loss **{found.loss_repeat:.2f}**" in said and "switched off (2.1)" in said
    rise = cut.loss_repeat - found.loss_repeat
    undone = rise / (found.loss_first - found.loss_repeat)
    assert text.IND_CHANGE.format(rise=rise, undone=undone) in said


@pytest.mark.parametrize(("token", "shown"), [(" ", "␣"), ("\n", "⏎"), (" the", "␣the"), ("", "∅")])
def test_the_ablation_sentence_shows_an_invisible_next_token(token, shown):
    """The likeliest next token before and after switching heads off, a space or a line break among
    them, is named as the charts label it (shown_token), never as empty quotes (“ ”)."""
    decode = [token, "x"].__getitem__  # the rest of the probability on tokens not shown
    stays = next_token_change(np.array([0.21, 0.12]), np.array([0.15, 0.1]), decode)
    assert stays == ablation_text.NEXT_SAME.format(before=md(shown), p_before=0.21, p_after=0.15)
    changes = next_token_change(np.array([0.15, 0.25]), np.array([0.3, 0.2]), decode)
    assert changes == ablation_text.NEXT_CHANGED.format(
        before="x", p_before=0.25, after=md(shown), p_after=0.3
    )
