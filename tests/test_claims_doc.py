"""docs/house.md's table of claims is core/measures/claims.py's CLAIMS, row for row."""

from __future__ import annotations

from pathlib import Path

from core.measures.claims import CLAIMS, KINDS

HOUSE = Path(__file__).resolve().parents[1] / "docs" / "house.md"


def table_rows() -> dict[str, list[str]]:
    rows = {}
    for line in HOUSE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and ":" in cells[0] and cells[0].split(":")[0] in CLAIMS:
            rows[cells[0].split(":")[0]] = cells
    return rows


def test_every_claim_is_in_the_docs_table_as_the_code_has_it():
    rows = table_rows()
    assert set(rows) == set(CLAIMS), set(rows) ^ set(CLAIMS)
    for name, claim in CLAIMS.items():
        cells = rows[name]
        assert cells[0] == f"{name}: {claim.says}", name
        assert [kind for kind, mark in zip(KINDS, cells[1:4], strict=True) if mark == "✓"] == [
            kind for kind in KINDS if kind in claim.kinds
        ], name
        assert cells[4] == claim.condition, name
