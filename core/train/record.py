"""A training run's record: what the train page draws and replays, the same whether the run is live
or was recorded and shipped with the product (then read back from beside the model's files).

Files beside a checkpoint: training_record.json (the settings and the curves) and
training_snapshots.npz (the probe's ids and its attention at each snapshot, float16: enough for a
heat map, a quarter of the float64 size).

Letters: S snapshots, L layers, H heads, T probe positions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["RECORD_FILE", "SNAPSHOTS_FILE", "TrainingRecord", "load_record"]

RECORD_FILE = "training_record.json"
SNAPSHOTS_FILE = "training_snapshots.npz"


@dataclass(frozen=True)
class TrainingRecord:
    settings: dict  # TrainSettings' fields
    steps: np.ndarray  # (S,) the step of each snapshot, 0 = before training
    seconds: np.ndarray  # (S,) training time so far at each snapshot
    loss_first: np.ndarray  # (S,) held-out cross-entropy (nats) on first occurrences
    loss_repeat: np.ndarray  # (S,) ... and on repeats
    previous_token: np.ndarray  # (S, L, H) scores on the probe
    induction: np.ndarray  # (S, L, H) prefix-matching scores on the probe
    attentions: np.ndarray  # (S, L, H, T, T) float16, the probe's attention
    probe: np.ndarray  # (T,) the probe's token ids: <s>, n letters, the same n again
    recorded: bool = False  # read back from disk (the shipped run), not trained in this session

    @property
    def probe_length(self) -> int:
        return (len(self.probe) - 1) // 2

    def curves(self) -> dict:
        """The CLI's JSON: one entry per snapshot."""
        return {
            "settings": self.settings,
            "steps": self.steps.tolist(),
            "seconds": np.round(self.seconds, 3).tolist(),
            "loss_first": self.loss_first.tolist(),
            "loss_repeat": self.loss_repeat.tolist(),
            "induction": self.induction.tolist(),
            "previous_token": self.previous_token.tolist(),
        }

    def save(self, out: Path) -> None:
        (out / RECORD_FILE).write_text(json.dumps(self.curves()) + "\n")
        np.savez_compressed(
            out / SNAPSHOTS_FILE, attentions=self.attentions.astype(np.float16), probe=self.probe
        )


def load_record(model_dir: str | Path) -> TrainingRecord | None:
    """The record saved beside a model, or None when the folder holds none (or a damaged one)."""
    model_dir = Path(model_dir)
    record, snapshots = model_dir / RECORD_FILE, model_dir / SNAPSHOTS_FILE
    if not (record.is_file() and snapshots.is_file()):
        return None
    try:
        curves = json.loads(record.read_text())
        with np.load(snapshots) as saved:
            attentions, probe = saved["attentions"], saved["probe"]
        arrays = {k: np.asarray(curves[k], dtype=float) for k in ("seconds", "loss_first", "loss_repeat")}
        return TrainingRecord(
            settings=dict(curves["settings"]),
            steps=np.asarray(curves["steps"], dtype=int),
            previous_token=np.asarray(curves["previous_token"], dtype=float),
            induction=np.asarray(curves["induction"], dtype=float),
            attentions=attentions,
            probe=probe,
            recorded=True,
            **arrays,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
