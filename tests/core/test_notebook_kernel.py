"""docs/notebook.ipynb runs in a real Jupyter kernel (ipykernel, driven by nbclient) with this
environment's Python, started in docs/ as Jupyter and VS Code start a notebook's kernel in its own
folder (the notebook's first cell makes the repository importable from there); its figures are read
back from the outputs a notebook front end renders (Plotly's mime bundle) and checked against the
engine. One run of the notebook for every check: a kernel's start and the model's load cost seconds."""

from __future__ import annotations

import ast
import base64
import json
import re

import numpy as np
import pytest

from core.models.architectures import load_engine
from tests.conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
PLOTLY_MIME = "application/vnd.plotly.v1+json"  # what JupyterLab, Notebook 7 and VS Code draw

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stored():
    return nbformat.read(NOTEBOOK, as_version=4)


@pytest.fixture(scope="module")
def ran(stored):
    """The notebook after a run in a fresh kernel whose working directory is the notebook's folder."""
    notebook = nbformat.from_dict(json.loads(json.dumps(stored)))  # a copy: `stored` stays as committed
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, if a cell fails
    return notebook


def _array(value) -> np.ndarray:
    """A figure's array as Plotly writes it to JSON: a list, or a base64 typed array."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=np.float64)


def _figures(notebook) -> list[tuple[str, dict]]:
    """(the cell's source, its Plotly figure) for every code cell that drew one, in order."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if PLOTLY_MIME in output.get("data", {}):
                found.append((cell.source, output["data"][PLOTLY_MIME]))
    return found


def _layer_head(figure: dict) -> tuple[int, int]:
    """(layer, head), 0-indexed, from a head view's title "Layer 6, head 12"."""
    match = re.match(r"Layer (\d+), head (\d+)", figure["layout"]["title"]["text"])
    return int(match[1]) - 1, int(match[2]) - 1


def test_the_committed_notebook_is_small_and_holds_no_outputs(stored):
    nbformat.validate(stored)
    code = [cell for cell in stored.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)
    assert NOTEBOOK.stat().st_size < 20_000


def test_the_notebook_draws_the_engines_attention_in_a_real_kernel(stored, ran):
    text = next(
        node.value.value
        for cell in stored.cells
        if cell.cell_type == "code"
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TEXT"
    )
    result = load_engine("bundled").run(text)
    figures = _figures(ran)
    kinds = [figure["data"][0]["type"] for _source, figure in figures]
    assert kinds == ["heatmap", "image", "scatter", "heatmap"], kinds  # head, model, lines, head
    for source, figure in (figures[0], figures[3]):  # show(...), then transformers' tuple
        layer, head = _layer_head(figure)
        trace = figure["data"][0]
        np.testing.assert_allclose(
            _array(trace["z"]), result.attentions[layer, head], atol=1e-6, err_msg=source
        )
        assert len(trace["y"]) == len(result.tokens) and trace["y"][0] == result.tokens[0]  # rows: queries
        assert figure["layout"]["yaxis"]["title"]["text"] == "from (query)"
        assert figure["layout"]["xaxis"]["title"]["text"] == "to (key)"
    grid = figures[1][1]
    assert len(grid["data"][1]["customdata"]) == result.n_layers * result.n_heads  # a point per head
    lines = figures[2][1]
    assert lines["layout"]["title"]["text"].startswith("Layer 6, head 12")
    errors = [o for cell in ran.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
