"""What the first opens on SmolLM2 run instead of the engine's whole pass (issue 49), equal to it on
tiny GPT-2 and Llama checkpoints built here: learn's decoder mode runs the blocks up to the traced one
only (compute.block_steps), and the generate view takes the engine's generation a step at a time so
its bar counts the tokens (generate.generation_steps)."""

from __future__ import annotations

import numpy as np
import pytest

from core.models.architectures import load_engine
from dashboard.views.explore.generate import generation_steps
from dashboard.views.learn.compute import block_steps
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


@pytest.mark.parametrize("temperature, seed", [(None, 0), (1.5, 7)])
def test_the_generation_step_by_step_is_the_engines(engine, temperature, seed):
    whole = engine.generate(TEXT, 6, temperature=temperature, seed=seed)
    steps = list(generation_steps(engine, TEXT, 6, temperature, seed))
    assert [s.token_id for s in steps] == [s.token_id for s in whole.steps]
    for mine, its in zip(steps, whole.steps, strict=True):
        assert (mine.token, mine.top) == (its.token, its.top)
        np.testing.assert_array_equal(mine.attentions, its.attentions)


def test_a_prompt_past_the_context_is_refused_as_the_engine_refuses_it(engine):
    n = engine.max_tokens
    with pytest.raises(ValueError, match="the context would pass") as mine:
        next(generation_steps(engine, TEXT, n, None, 0))
    with pytest.raises(ValueError) as its:
        engine.generate(TEXT, n)
    assert str(mine.value) == str(its.value)
