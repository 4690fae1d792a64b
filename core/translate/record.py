"""The translator's training record: what the train page draws and replays, the same whether the run
is live (`record_of`) or was recorded and shipped with the product (`load_record`, from beside the
model's files: core/translate/trainer.py's `save` writes them).

Files beside a checkpoint: training_record.json (the settings, the curves and the probe pair) and
training_snapshots.npz (`probe`: every cross-attention head on the probe pair at each snapshot,
float16).

Letters: S snapshots, L decoder layers, H heads, T probe target positions (the French words and
</s>), R probe source positions (the English words and </s>).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.train.record import RECORD_FILE, SNAPSHOTS_FILE
from core.translate.trainer import Translator

__all__ = ["TranslationRecord", "from_curves", "load_record", "record_of"]


@dataclass(frozen=True)
class TranslationRecord:
    settings: dict  # TranslateSettings' fields
    steps: np.ndarray  # (S,) the step of each snapshot, 0 = before training
    seconds: np.ndarray  # (S,) training time so far at each snapshot
    loss: np.ndarray  # (S,) held-out teacher-forced cross-entropy (nats per target token)
    exact_match: np.ndarray  # (S,) share of held-out sentences translated word for word
    alignment: np.ndarray  # (S, L, H) each cross-attention head's alignment accuracy
    probe: np.ndarray  # (S, L, H, T, R) float16, the probe pair's cross-attention
    source: tuple[str, ...]  # the probe's English words
    target: tuple[str, ...]  # ... and its French ones
    links: tuple[tuple[int, int], ...]  # the gold alignment: (target index, source index)
    recorded: bool = False  # read back from disk (the shipped run), not trained in this session


def from_curves(curves: dict, probe: np.ndarray, recorded: bool = False) -> TranslationRecord:
    """A record from the trainer's JSON (Translator.record()) and its (S, L, H, T, R) probe array;
    ValueError when their shapes disagree."""
    steps = np.asarray(curves["steps"], dtype=int)
    alignment = np.asarray(curves["alignment"], dtype=float)
    probe = np.asarray(probe)
    pair = curves["probe"]
    source, target = tuple(str(w) for w in pair["source"]), tuple(str(w) for w in pair["target"])
    links = tuple((int(t), int(s)) for t, s in pair["alignment"])
    n = len(steps)
    series = {k: np.asarray(curves[k], dtype=float) for k in ("seconds", "loss", "exact_match")}
    if n == 0 or any(v.shape != (n,) for v in series.values()) or alignment.ndim != 3:
        raise ValueError("the record's curves do not have one value per snapshot")
    if alignment.shape[0] != n or probe.ndim != 5 or probe.shape[:3] != alignment.shape:
        raise ValueError(
            f"the probe's attention {probe.shape} does not match the alignment {alignment.shape}"
        )
    if probe.shape[3] < len(target) or probe.shape[4] < len(source):
        raise ValueError("the probe's attention is smaller than its sentences")
    if any(not (0 <= t < len(target) and 0 <= s < len(source)) for t, s in links):
        raise ValueError("the probe's alignment links words it does not have")
    return TranslationRecord(
        settings=dict(curves["settings"]),
        steps=steps,
        alignment=alignment,
        probe=probe,
        source=source,
        target=target,
        links=links,
        recorded=recorded,
        **series,
    )


def record_of(run: Translator) -> TranslationRecord:
    """The snapshots of a run so far."""
    return from_curves(run.record(), np.stack([s.probe for s in run.snapshots]))


def load_record(model_dir: str | Path) -> TranslationRecord | None:
    """The record saved beside a translator, or None when the folder holds none (or a damaged one)."""
    model_dir = Path(model_dir)
    record, snapshots = model_dir / RECORD_FILE, model_dir / SNAPSHOTS_FILE
    if not (record.is_file() and snapshots.is_file()):
        return None
    try:
        curves = json.loads(record.read_text(encoding="utf-8"))
        with np.load(snapshots) as saved:
            probe = saved["probe"]
        return from_curves(curves, probe, recorded=True)
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile):
        return None
