"""core.notebook: the explore page's figures from any attention (transformers' tuple of tensors, a NumPy
array, nested lists, the product's AttentionResult), with clear errors for what does not fit. The
example notebook's run in a real kernel is test_notebook_kernel.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from core import notebook
from core.models.architectures import load_engine
from tests.conftest import ROOT

TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def result():
    return load_engine("bundled").run(TEXT)


def _softmax_maps(layers=2, heads=3, t=4, seed=0) -> np.ndarray:
    """(L, H, T, T) rows that sum to 1, each map different."""
    scores = np.random.default_rng(seed).normal(size=(layers, heads, t, t))
    weights = np.exp(scores)
    return (weights / weights.sum(-1, keepdims=True)).astype(np.float32)


TOKENS = ["a", "b", "c", "d"]


def _z(fig) -> np.ndarray:
    return np.asarray(fig.data[0].z, dtype=np.float64)


# ---- the forms attentions come in --------------------------------------------------------------------


def test_every_form_gives_the_same_array():
    maps = _softmax_maps()
    per_layer = tuple(layer[None] for layer in maps)  # transformers: L tensors (1, H, T, T)
    for form in (maps, per_layer, [layer for layer in maps], maps.tolist(), maps[:, None]):
        np.testing.assert_array_equal(notebook.attention_array(form), maps)


def test_torch_tensors_are_read_without_the_module_importing_torch():
    torch = pytest.importorskip("torch")
    maps = _softmax_maps()
    as_tuple = tuple(torch.from_numpy(layer[None]).requires_grad_() for layer in maps)
    np.testing.assert_array_equal(notebook.attention_array(as_tuple), maps)
    bf16 = notebook.attention_array(tuple(torch.from_numpy(layer[None]).bfloat16() for layer in maps))
    np.testing.assert_allclose(bf16, maps, atol=1e-2)  # bfloat16 keeps about 3 digits


def test_head_view_holds_that_heads_weights_rows_query_columns_key():
    maps = _softmax_maps()
    fig = notebook.head_view(maps, TOKENS, layer=1, head=2)
    np.testing.assert_allclose(_z(fig), maps[1, 2], atol=1e-6)
    assert list(fig.data[0].y) == TOKENS and list(fig.data[0].x) == TOKENS
    assert fig.layout.yaxis.title.text == "from (query)" and fig.layout.xaxis.title.text == "to (key)"
    assert fig.layout.title.text == "Layer 2, head 3"  # shown from 1, as on the page


def test_model_view_has_a_thumbnail_per_head_and_needs_no_tokens():
    maps = _softmax_maps()
    fig = notebook.model_view(maps)
    points = fig.data[1]
    assert len(points.customdata) == 2 * 3
    assert points.text[0].startswith("<b>layer 1, head 1</b>") and "click" not in points.text[0]
    assert "on the next token" in points.text[0]  # not causal: the next token is seen
    causal = np.tril(np.ones((4, 4), dtype=np.float32))
    causal = np.broadcast_to(causal / causal.sum(-1, keepdims=True), maps.shape)
    assert "on the next token" not in notebook.model_view(causal).data[1].text[0]


def test_lines_view_draws_all_heads_or_the_ones_asked():
    maps = _softmax_maps()
    every = notebook.lines_view(maps, TOKENS, layer=1)
    assert every.layout.title.text == "Layer 2, all heads"
    assert all(trace.visible is not False and trace.visible != "legendonly" for trace in every.data)
    one = notebook.lines_view(maps, TOKENS, layer=1, heads=[2])
    hidden = {trace.legendgroup for trace in one.data if trace.visible == "legendonly"}
    assert hidden == {"head0", "head1"} and one.layout.title.text == "Layer 2, head 3"
    assert next(trace.text for trace in every.data if trace.mode == "markers+text") == tuple(TOKENS)


# ---- what does not fit is said plainly --------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda m: notebook.head_view(m, TOKENS[:3]), ValueError, "3 tokens for attention over 4 positions"),
        (lambda m: notebook.head_view(m), ValueError, "tokens are needed"),
        (lambda m: notebook.head_view(m, "a b c d"), TypeError, "not one string"),
        (lambda m: notebook.head_view(m, TOKENS, layer=2), IndexError, "numbered 0 to 1"),
        (lambda m: notebook.head_view(m, TOKENS, head=-1), IndexError, "head -1 is out of range"),
        (lambda m: notebook.head_view(m, TOKENS, head=1.5), TypeError, "whole number"),
        (lambda m: notebook.lines_view(m, TOKENS, heads=[3]), IndexError, "head 3 is out of range"),
        (lambda m: notebook.lines_view(m, TOKENS, direction="up"), ValueError, "direction"),
        (lambda m: notebook.head_view(m[0], TOKENS), ValueError, "expected [layers][heads][T][T]"),
        (lambda m: notebook.head_view(m[..., :3], TOKENS), ValueError, "one square map"),
        (lambda m: notebook.head_view(tuple(np.stack([m, m], axis=1)), TOKENS), ValueError, "batch of 2"),
        (lambda m: notebook.head_view(m, TOKENS, merge=True), ValueError, "AttentionResult"),
        (lambda m: notebook.head_view([[[1, 2], [3]]], TOKENS), ValueError, "numbers shaped"),
        (lambda m: notebook.show("x", view="flow"), ValueError, "head, model, lines"),
        (lambda m: notebook.show("x", engine="jax"), ValueError, "engine must be"),
    ],
)
def test_errors_say_what_is_wrong(call, error, words):
    with pytest.raises(error) as raised:
        call(_softmax_maps())
    assert words in str(raised.value)


# ---- the product's engines ----------------------------------------------------------------------------


def test_show_draws_the_engines_attention(result):
    fig = notebook.show(TEXT, layer=2, head=3)
    np.testing.assert_allclose(_z(fig), result.attentions[2, 3], atol=1e-6)
    assert fig.data[0].y[0] == "[CLS]" and fig.data[0].y[5] == "the (2)"  # repeats numbered, as on the page
    lines = notebook.show(TEXT, view="lines", layer=1)
    assert lines.layout.title.text == "Layer 2, all heads"
    grid = notebook.show(TEXT, view="model", selected=(5, 11))
    assert len(grid.data[1].customdata) == result.n_layers * result.n_heads
    assert "on [CLS]/[SEP]" in grid.data[1].text[0]


def test_a_result_is_drawn_with_the_pages_token_toggles(result):
    fig = notebook.head_view(result, merge=True, hide_special=True)
    assert "[CLS]" not in fig.data[0].y
    np.testing.assert_allclose(_z(fig).sum(axis=1), 1.0, atol=1e-5)  # rows renormalised over the words
    assert (
        fig.layout.title.text
        == "Layer 1, head 1 · pieces merged into words · special tokens hidden, rows renormalised"
    )


def test_show_reads_a_pair_and_the_letter_model():
    pair = notebook.attention("The cat sat.", pair="It was tired.")
    assert pair.tokens.count("[SEP]") == 2 and set(pair.token_type_ids) == {0, 1}
    letters = notebook.show("hello", model="letters", view="head")
    assert len(letters.data[0].y) == len(notebook.attention("hello", model="letters").tokens)
    with pytest.raises(ValueError, match="a decoder reads one text"):
        notebook.show("hello", model="letters", pair="there")


def test_importing_it_loads_no_ui_and_drawing_no_streamlit():
    code = (
        "import sys, numpy as np; import core.notebook as nb;"
        "assert not {'plotly', 'dashboard', 'streamlit', 'torch'} & set(sys.modules), 'import';"
        "nb.model_view(np.full((1, 1, 2, 2), 0.5)); nb.lines_view(np.full((1, 1, 2, 2), 0.5), ['a', 'b']);"
        "nb.head_view(np.full((1, 1, 2, 2), 0.5), ['a', 'b']);"
        "assert not {'streamlit', 'torch'} & set(sys.modules), 'draw'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
