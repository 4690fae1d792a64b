"""core.export: the CLI's writers, and one matrix as labelled CSV (the dashboard's download)."""

import csv
import io

import numpy as np

from core import export


def test_matrix_csv_labels_rows_and_columns():
    values = np.array([[0.25, 0.75], [1.0, 0.0]])
    text = export.matrix_csv(values, ["the", "cat"], ["the", "cat"], "from \\ to")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["from \\ to", "the", "cat"], ["the", "0.25", "0.75"], ["cat", "1", "0"]]


def test_matrix_csv_quotes_labels_with_commas():
    rows = list(csv.reader(io.StringIO(export.matrix_csv(np.eye(1), ['a,"b"'], ["x"]))))
    assert rows[1][0] == 'a,"b"'


def test_cli_uses_the_shared_writers():
    import core.__main__ as cli

    assert cli.to_json is export.to_json and cli.to_npz is export.to_npz and cli.to_csv is export.to_csv
