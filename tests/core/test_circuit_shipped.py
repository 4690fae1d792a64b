"""The shipped SmolLM2 circuit (dashboard/content/circuits/smollm2_ioi.json, written by `python -m core
circuit --model smollm2 --prompts 8 --seed 0`): the contract's keys and shapes, every class backed by
its figures past the thresholds written beside them, faithfulness the ratio of the logit differences
it records, the record; and, when SmolLM2 is installed (slow), its prompts and its direct effects
computed again."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core.measures.circuit import CLASSES

SHIPPED = Path(__file__).resolve().parents[2] / "dashboard" / "content" / "circuits" / "smollm2_ioi.json"
L, H = 30, 9  # SmolLM2-135M


@pytest.fixture(scope="module")
def shipped() -> dict:
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def test_the_file_holds_the_contract(shipped):
    assert shipped["task"] == "ioi" and "SmolLM2" in shipped["model"]
    assert len(shipped["prompts"]) == 8
    for prompt in shipped["prompts"]:
        assert prompt["io"].startswith(" ") and prompt["s"].startswith(" ")
        assert prompt["io"].strip() in prompt["text"] and prompt["text"].count(prompt["s"].strip()) == 2
        assert prompt["io"].strip() not in prompt["corrupt"] and prompt["s"].strip() not in prompt["corrupt"]
    direct = np.asarray(shipped["direct"], float)
    assert direct.shape == (L, H) and np.isfinite(direct).all()
    assert shipped["logit_diff_clean"] > shipped["logit_diff_corrupt"]
    assert tuple(shipped["classes"]) == CLASSES
    heads = [tuple(x) for name in CLASSES for x in shipped["classes"][name]]
    assert len(heads) == len(set(heads)) and all(0 <= a < L and 0 <= b < H for a, b in heads)
    record = shipped["record"]
    assert record["command"].startswith("python -m core circuit --model smollm2 --task ioi --prompts 8")
    assert (record["seed"], record["prompts"]) == (0, 8) and record["seconds"] > 0
    assert record["commit"] and record["date"]


def test_every_class_is_backed_by_its_figures(shipped):
    evidence, t = shipped["evidence"], shipped["evidence"]["thresholds"]
    direct = np.asarray(shipped["direct"], float)
    for name in CLASSES:
        rows = evidence["heads"][name]
        assert [r["head"] for r in rows] == shipped["classes"][name]
        for row in rows:
            layer, head = row["head"]
            if name == "name_mover":
                assert row["figure"] == direct[layer, head] >= t["direct"] and row["copy_score"] >= t["copy"]
                assert row["end_io"] >= t["attention_io"] and row["end_io"] > row["end_s"]
            elif name == "negative_name_mover":
                assert row["figure"] == direct[layer, head] <= -t["direct"]
                assert row["negative_copy_score"] >= t["copy"] and row["end_io"] > row["end_s"]
            elif name == "s_inhibition":
                assert row["figure"] == evidence["paths"]["q"]["restored"][layer][head] >= t["s_inhibition"]
            elif name in ("induction", "duplicate_token"):
                assert (
                    row["figure"] == pytest.approx(row["k"] + row["v"], abs=2e-6) and row["figure"] >= t["kv"]
                )
                looks = row["s2_s1_next"] if name == "induction" else row["s2_s1"]
                assert looks >= t["attention_s2"]
            else:
                assert row["figure"] >= t["previous"] and row["s1_next_s1"] >= t["attention_previous"]
    assert evidence["receivers"]["q"] == shipped["classes"]["name_mover"]
    in_classes = {tuple(x) for name in CLASSES for x in shipped["classes"][name]}
    for row in evidence["left_out"]["direct_only"]:
        assert abs(row["direct"]) >= t["direct"] and row["failed"] and tuple(row["head"]) not in in_classes


def test_faithfulness_is_the_ratio_it_records(shipped):
    f = shipped["evidence"]["faithfulness"]
    assert shipped["faithfulness"] == pytest.approx(f["circuit"] / f["model"], rel=1e-5)
    assert f["model"] == pytest.approx(shipped["logit_diff_clean"], abs=1e-4)
    assert shipped["evidence"]["logit_diff_circuit"] == f["circuit"]
    assert f["heads_kept"] == sum(len(v) for v in shipped["classes"].values())
    assert math.isfinite(f["nothing_kept"])


@pytest.mark.slow
def test_its_prompts_and_direct_effects_come_again(shipped):
    from core.models import smollm2

    if smollm2.packaged_gguf() is None:
        pytest.skip("SmolLM2 is not installed (make test installs it)")
    from core.measures.ioi import ioi_prompts
    from core.measures.paths import path_patch
    from core.models.architectures import load_engine

    engine = load_engine("smollm2")
    prompts = ioi_prompts(engine, shipped["record"]["prompts"], shipped["record"]["seed"])
    assert [p.text for p in prompts] == [p["text"] for p in shipped["prompts"]]
    assert [p.corrupt for p in prompts] == [p["corrupt"] for p in shipped["prompts"]]
    found = path_patch(engine, [p.item for p in prompts])
    assert found.metric_clean == pytest.approx(shipped["logit_diff_clean"], abs=1e-3)
    assert found.metric_corrupt == pytest.approx(shipped["logit_diff_corrupt"], abs=1e-3)
    np.testing.assert_allclose(found.restored, np.asarray(shipped["direct"], float), atol=1e-3)
