"""What the first opens on SmolLM2 run instead of the engine's whole pass (issue 49), equal to it on
tiny GPT-2 and Llama checkpoints built here: learn's decoder mode runs the blocks up to the traced one
only (compute.block_steps), and the generate view takes the engine's generation a step at a time so
its bar counts the tokens (generate.generation_steps); on a machine where generating would be long
(dashboard/long_work.py, its speed patched) the view asks first and counts after the button."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.models.architectures import load_engine
from dashboard import long_work
from dashboard.views.explore.generate import generation_steps
from dashboard.views.learn.compute import block_steps
from tests.dashboard.harness import assert_no_crash, messages, n_charts, page_script
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

TEXT = "The trophy would not fit in the suitcase"


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def engine(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "gpt2":
        return load_engine(str(make_tiny_gpt2(folder, n_layer=3, n_head=2, n_embd=16)))
    return load_engine(str(make_tiny_llama(folder, layers=3)))


def test_a_blocks_steps_are_the_whole_passes(engine):
    ids = engine.encode(TEXT).ids
    for layer in range(engine.n_layers):
        whole = engine.forward(ids, trace_layers=[layer]).steps[layer]
        alone = block_steps(engine, ids, layer)
        assert alone.keys() == whole.keys()
        for name, array in whole.items():
            np.testing.assert_array_equal(alone[name], array, err_msg=f"layer {layer}: {name}")


@pytest.mark.parametrize(
    "temperature, seed, cut", [(None, 0, (0, 1.0)), (1.5, 7, (0, 1.0)), (1.5, 7, (5, 0.8))]
)
def test_the_generation_step_by_step_is_the_engines(engine, temperature, seed, cut):
    top_k, top_p = cut
    whole = engine.generate(TEXT, 6, temperature=temperature, seed=seed, top_k=top_k, top_p=top_p, top=20)
    steps = list(generation_steps(engine, TEXT, 6, temperature, seed, top_k, top_p))
    assert [s.token_id for s in steps] == [s.token_id for s in whole.steps]
    for mine, its in zip(steps, whole.steps, strict=True):
        assert (mine.token, mine.top, mine.kept[:20]) == (its.token, its.top, its.kept[:20])
        np.testing.assert_array_equal(mine.attentions, its.attentions)


def test_a_prompt_past_the_context_is_refused_as_the_engine_refuses_it(engine):
    n = engine.max_tokens
    with pytest.raises(ValueError, match="the context would pass") as mine:
        next(generation_steps(engine, TEXT, n, None, 0))
    with pytest.raises(ValueError) as its:
        engine.generate(TEXT, n)
    assert str(mine.value) == str(its.value)


def test_on_a_slow_machine_the_generate_view_asks_first_then_counts_the_tokens(tmp_path, monkeypatch):
    model = make_tiny_gpt2(tmp_path / "gpt2", n_layer=2, n_head=2, n_embd=16)
    long_work.shelf.clear()
    monkeypatch.setattr(long_work, "machine_speed", lambda: 1.0)  # multiply-adds a second: all long
    monkeypatch.setattr(long_work, "_ratios", {})
    monkeypatch.setattr(long_work, "record", lambda work, seconds: None)
    monkeypatch.setenv("ATTENTION_EXPLORER_ASK_AFTER", str(long_work.DEFAULT_ASK_AFTER))
    bars, real = [], st.progress

    def counted(value, text=None):  # every text a bar shows, first and moved
        bars.append(text)
        bar = real(value, text=text)
        moved = bar.progress
        bar.progress = lambda v, text=None: (bars.append(text), moved(v, text=text))
        return bar

    monkeypatch.setattr(st, "progress", counted)
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": str(model), "text": TEXT, "view": "generate", "tokens": "4"})
    at.run()
    assert_no_crash(at)
    (line,) = [c.value for c in at.caption if "on this machine" in c.value]
    assert line.startswith("Generating 4 tokens takes about") and "(4 runs of the model)" in line
    assert n_charts(at) == 0 and not bars  # nothing generated before the button
    at.button(key="long_work_generate").click().run()
    assert not at.error, messages(at)
    assert n_charts(at) == 2 and "Generated 4 of 4 tokens" in bars
