"""core/translate/findings.py against hand-built records (alignment first, translations first, both
at once, neither; measured up to an earlier snapshot), and core/translate/record.py: a live run's
record, the shipped one read back, and a missing or damaged one read as None."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.translate.findings import ALIGNED_MIN, RIGHT_MIN, WEAK_MAX, measure
from core.translate.record import TranslationRecord, from_curves, load_record, record_of
from core.translate.trainer import TranslateSettings, Translator

SOURCE, TARGET = ("the", "cat"), ("le", "chat")
SHIPPED = Path(__file__).resolve().parents[2] / "models" / "translator"


def hand_record(loss, exact, best, other=0.2) -> TranslationRecord:
    """Snapshots every 25 steps; head (1, 0) follows `best`, every other head stays at `other`."""
    n = len(loss)
    alignment = np.full((n, 2, 2), other)
    alignment[:, 1, 0] = best
    return TranslationRecord(
        settings={},
        steps=np.arange(n) * 25,
        seconds=np.arange(n, dtype=float),
        loss=np.asarray(loss, dtype=float),
        exact_match=np.asarray(exact, dtype=float),
        alignment=alignment,
        probe=np.zeros((n, 2, 2, 3, 3), dtype=np.float16),
        source=SOURCE,
        target=TARGET,
        links=((0, 0), (1, 1)),
    )


def test_alignment_first_then_the_translations():
    record = hand_record(
        loss=[4.0, 3.0, 1.9, 1.0, 0.5],
        exact=[0.0, 0.1, 0.3, 0.6, 0.95],
        best=[0.2, 0.5, 0.92, 0.95, 0.96],
    )
    found = measure(record)
    assert found.step == 100
    assert found.aligned.step == 50 and found.aligned_head == (1, 0)
    assert found.right.step == 100
    assert (found.order, found.gap) == ("aligned first", 50)
    assert found.early == (50, 0.3, 0.92)  # the last snapshot under half right, before the first over
    assert found.halved.step == 50 and found.loss_first == 4.0 and found.loss_now == 0.5
    assert found.best_head == (1, 0, 0.96)
    assert [(layer, head) for layer, head, _ in found.weak] == [(0, 0), (0, 1), (1, 1)]


def test_translations_first_then_the_alignment():
    record = hand_record(
        loss=[4.0, 2.5, 1.0, 0.3], exact=[0.0, 0.2, RIGHT_MIN, 1.0], best=[0.3, 0.7, 0.8, ALIGNED_MIN]
    )
    found = measure(record)
    assert (found.right.step, found.aligned.step) == (50, 75)
    assert (found.order, found.gap) == ("right first", 25)
    assert found.early == (25, 0.2, 0.7)


def test_both_at_one_snapshot():
    found = measure(hand_record(loss=[3.0, 1.0], exact=[0.0, 0.95], best=[0.1, 0.95]))
    assert (found.order, found.gap) == ("together", 0)


def test_neither_reached_gives_the_best_so_far():
    record = hand_record(loss=[4.0, 3.5, 3.8], exact=[0.0, 0.3, 0.1], best=[0.1, 0.6, 0.4])
    found = measure(record)
    assert found.order == "neither" and found.aligned.step is None and found.right.step is None
    assert (found.aligned.best, found.aligned.best_step) == (0.6, 25)
    assert (found.right.best, found.right.best_step) == (0.3, 25)
    assert found.halved.step is None and (found.halved.best, found.halved.best_step) == (3.5, 25)
    assert found.early is None  # never half right
    assert found.best_head == (1, 0, 0.4)


def test_only_one_of_the_two():
    only_aligned = measure(hand_record(loss=[3.0, 2.0], exact=[0.0, 0.5], best=[0.1, 0.91]))
    assert only_aligned.order == "only aligned" and only_aligned.right.step is None
    only_right = measure(hand_record(loss=[3.0, 2.0], exact=[0.0, 0.91], best=[0.1, 0.4]))
    assert only_right.order == "only right" and only_right.aligned_head is None


def test_measured_up_to_an_earlier_snapshot():
    record = hand_record(
        loss=[4.0, 3.0, 1.9, 1.0, 0.5], exact=[0.0, 0.1, 0.3, 0.6, 0.95], best=[0.2, 0.5, 0.92, 0.95, 0.96]
    )
    found = measure(record, at=2)
    assert found.step == 50 and found.order == "only aligned" and found.right.best == 0.3
    assert measure(record, at=-1) == measure(record) == measure(record, at=99)
    assert measure(record, at=0).step == 0


def test_no_weak_heads_when_every_head_aligns():
    found = measure(hand_record(loss=[3.0, 1.0], exact=[0.0, 1.0], best=[0.1, 0.95], other=WEAK_MAX))
    assert found.weak == ()


# ---- the record -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    settings = TranslateSettings(width=16, heads=2, ffn=32, layers=1, steps=10, record_every=5, eval_pairs=8)
    run = Translator(settings)
    run.run()
    return run, run.save(tmp_path_factory.mktemp("translator"))


def test_a_run_and_its_saved_record_agree(small_run):
    run, folder = small_run
    live, saved = record_of(run), load_record(folder)
    assert saved is not None and saved.recorded and not live.recorded
    assert list(saved.steps) == list(live.steps) == [0, 5, 10]
    assert saved.alignment.shape == (3, 1, 2) and saved.probe.shape[:3] == (3, 1, 2)
    np.testing.assert_allclose(saved.loss, live.loss)
    assert saved.target[1] == "chat" and (1, 2) in saved.links
    assert measure(saved).step == 10


def test_a_missing_or_damaged_record_reads_as_none(small_run, tmp_path):
    _, folder = small_run
    assert load_record(tmp_path) is None
    for name in ("training_record.json", "training_snapshots.npz"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    assert load_record(tmp_path) is not None
    (tmp_path / "training_snapshots.npz").write_bytes(b"not a zip")
    assert load_record(tmp_path) is None
    (tmp_path / "training_snapshots.npz").write_bytes((folder / "training_snapshots.npz").read_bytes())
    curves = json.loads((folder / "training_record.json").read_text())
    for broken in ({**curves, "loss": curves["loss"][:-1]}, {**curves, "alignment": [[1.0]]}, {"steps": []}):
        (tmp_path / "training_record.json").write_text(json.dumps(broken))
        assert load_record(tmp_path) is None, broken
    (tmp_path / "training_record.json").write_text("{")
    assert load_record(tmp_path) is None


def test_the_shipped_record_states_when_the_heads_aligned():
    record = load_record(SHIPPED)
    if record is None:
        pytest.skip("this copy holds no recorded translator")
    found = measure(record)
    assert found.right.step is not None and found.aligned.step is not None
    assert found.best_head[2] >= ALIGNED_MIN and found.early is not None


def test_a_probe_that_does_not_match_the_curves_is_refused():
    curves = {
        "settings": {},
        "steps": [0],
        "seconds": [0.0],
        "loss": [1.0],
        "exact_match": [0.0],
        "alignment": [[[0.0]]],
        "probe": {"source": ["the"], "target": ["le"], "alignment": [[0, 0]]},
    }
    assert from_curves(curves, np.zeros((1, 1, 1, 2, 2))).links == ((0, 0),)
    with pytest.raises(ValueError):
        from_curves(curves, np.zeros((2, 1, 1, 2, 2)))
