"""Training a small GPT-2 from scratch on the letter data, recording what a class should watch.

Every `record_every` steps (and before the first) the trainer writes a snapshot: the loss on a
fixed held-out batch, apart for first occurrences and repeats, and, on the probe (<s>, n letters,
the same n again), every head's attention, previous-token score and prefix-matching score. The
position table is a fixed sinusoidal one (Vaswani et al. 2017) stored in GPT-2's wpe and never
trained, so position is readable from the start and a head can find "the token just before" at
once; the saved checkpoint stays a plain GPT-2 that the engines and transformers load.

What made the heads form within a minute here (bench/README.md has the runs): the cycle data
(core/train/data.py), a spread of 0.1 instead of GPT-2's 0.02 for the initial weights, token
embeddings and the position table (at width 32, 0.02 leaves every attention score near zero, where
the gradient that would shape a head is smallest: the model sat on the plateau "one of the letters
seen so far"). Weight decay would only slow a short run.

Letters: L layers, H heads, D width, T context, n the probe's copy length.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.models.gpt2_config import GPT2Config
from core.train.adamw import AdamW
from core.train.checkpoint import save_checkpoint
from core.train.data import VOCAB_SIZE, Batch, letter_batch, probe_sequence
from core.train.heads import induction_scores, previous_token_scores
from core.train.model import forward, init_params, loss_and_grads, per_token_loss
from core.train.record import TrainingRecord

__all__ = ["Snapshot", "SnapshotRun", "TrainSettings", "Trainer", "held_out_batch", "sinusoidal_positions"]

GPT2_INIT_STD = 0.02  # init_params' spread (GPT-2's own)
PROBE_SEED = 0  # the probe is the same sequence for every run, so runs can be compared
EVAL_SEQUENCES = 64


@dataclass(frozen=True)
class TrainSettings:
    layers: int = 2  # 1 or 2 blocks: with one, no induction head can form (it needs two in a row)
    heads: int = 4
    width: int = 32  # D, divisible by heads
    context: int = 64  # T, positions per training sequence
    steps: int = 600
    lr: float = 3e-3  # peak learning rate, after a linear warm-up
    warmup: int = 50
    seed: int = 0  # the initial weights and the data
    batch: int = 32
    weight_decay: float = 0.0
    record_every: int = 25
    probe_length: int = 12  # n: the probe holds 1 + 2 n tokens
    init_std: float = 0.1  # the weights' and token embeddings' initial spread (GPT-2 uses 0.02)
    position_scale: float = 0.1  # the fixed sinusoidal position table's amplitude

    def check(self) -> None:
        """ValueError with what to change, before any work."""
        if self.layers < 1 or self.heads < 1 or self.width % self.heads:
            raise ValueError(
                f"width ({self.width}) must be divisible by heads ({self.heads}), both 1 or more"
            )
        if 1 + 2 * self.probe_length > self.context:
            raise ValueError(
                f"the probe (1 + 2 x {self.probe_length} tokens) must fit the context ({self.context})"
            )
        if self.steps < 1 or self.record_every < 1 or not self.lr > 0:
            raise ValueError("steps and record_every must be 1 or more, the learning rate above 0")

    def config(self) -> GPT2Config:
        return GPT2Config(
            vocab_size=VOCAB_SIZE,
            n_embd=self.width,
            n_layer=self.layers,
            n_head=self.heads,
            n_positions=self.context,
        )


@dataclass(frozen=True)
class Snapshot:
    step: int
    seconds: float  # training time so far
    loss_first: float  # mean cross-entropy (nats) on the held-out batch's first occurrences
    loss_repeat: float  # ... and on its repeats
    previous_token: np.ndarray  # (L, H) scores on the probe
    induction: np.ndarray  # (L, H) prefix-matching scores on the probe
    attentions: np.ndarray = field(repr=False)  # (L, H, T, T) float16 on the probe


def sinusoidal_positions(n: int, d: int, scale: float) -> np.ndarray:
    """(n, d): sin and cos of the position at geometric frequencies (Vaswani et al. 2017), times
    `scale`, the token embeddings' initial spread, so neither drowns the other."""
    positions = np.arange(n)[:, None]
    rates = np.exp(-math.log(10_000.0) * np.arange(0, d, 2) / d)[None, :]  # (1, d / 2)
    table = np.zeros((n, d))
    table[:, 0::2], table[:, 1::2] = np.sin(positions * rates), np.cos(positions * rates)
    return (scale * table).astype(np.float32)


def held_out_batch(settings: TrainSettings) -> Batch:
    """The sequences a run with these settings is scored on: never trained on, the same every time."""
    return letter_batch(np.random.default_rng([settings.seed, 2]), EVAL_SEQUENCES, settings.context)


class SnapshotRun:
    """What every training run here shares: `run` steps on (train_step), timing the steps only, and
    takes a snapshot every `record_every` steps and at the last. Subclasses set settings (with steps
    and record_every), step, seconds and snapshots, and define train_step and snapshot."""

    @property
    def done(self) -> bool:
        return self.step >= self.settings.steps

    def run(self, n_steps: int | None = None, seconds: float | None = None) -> list:
        """Train up to n_steps more (all that remain by default), stopping early after `seconds` of
        wall time; returns the snapshots recorded on the way."""
        start, new = time.perf_counter(), []
        stop_at = self.settings.steps if n_steps is None else min(self.settings.steps, self.step + n_steps)
        while self.step < stop_at and (seconds is None or time.perf_counter() - start < seconds):
            began = time.perf_counter()
            self.train_step()
            self.seconds += time.perf_counter() - began
            if self.step % self.settings.record_every == 0 or self.step == self.settings.steps:
                new.append(self.snapshot())
        self.snapshots += new
        return new


class Trainer(SnapshotRun):
    """Trainer(settings).run(n) trains n more steps; .snapshots holds the record so far."""

    def __init__(self, settings: TrainSettings = TrainSettings()):
        settings.check()
        self.settings, self.config = settings, settings.config()
        rng = np.random.default_rng(settings.seed)
        self.params = init_params(self.config, rng)
        for value in self.params.values():  # GPT-2's 0.02 suits width 768; see the module docstring
            if value.ndim == 2:
                value *= settings.init_std / GPT2_INIT_STD
        self.params["wpe.weight"] = sinusoidal_positions(
            settings.context, settings.width, settings.position_scale
        )
        self.optimizer = AdamW(
            self.params,
            settings.lr,
            betas=(0.9, 0.95),
            weight_decay=settings.weight_decay,
            frozen=["wpe.weight"],
        )
        self.data_rng = np.random.default_rng([settings.seed, 1])
        self.eval_batch = held_out_batch(settings)
        self.probe = probe_sequence(settings.probe_length, PROBE_SEED)
        self.step, self.seconds = 0, 0.0
        self.snapshots = [self.snapshot()]

    def learning_rate(self, step: int) -> float:
        """Linear warm-up to the peak, then constant (a run is short; decay would only slow the drop)."""
        return self.settings.lr * min(1.0, (step + 1) / max(1, self.settings.warmup))

    def train_step(self) -> float:
        """One AdamW step on a fresh batch; returns its loss."""
        batch = letter_batch(self.data_rng, self.settings.batch, self.settings.context)
        weights = np.ones(batch.targets.shape, dtype=np.float32)
        loss, grads, _ = loss_and_grads(self.params, self.config, batch.inputs, batch.targets, weights)
        self.optimizer.step(self.params, grads, self.learning_rate(self.step))
        self.step += 1
        return loss

    def snapshot(self) -> Snapshot:
        """Score the model as it is now (held-out loss, the heads on the probe)."""
        losses = per_token_loss(self.params, self.config, self.eval_batch.inputs, self.eval_batch.targets)
        repeat = self.eval_batch.repeat
        _, cache = forward(self.params, self.config, self.probe[None, :])
        probs = cache["probs"][:, 0]  # (L, H, T, T)
        return Snapshot(
            step=self.step,
            seconds=self.seconds,
            loss_first=float(losses[~repeat].mean()),
            loss_repeat=float(losses[repeat].mean()),
            previous_token=previous_token_scores(probs),
            induction=induction_scores(probs, self.settings.probe_length),
            attentions=probs.astype(np.float16),
        )

    def record(self) -> TrainingRecord:
        """The snapshots so far, as the page and the CLI read them."""
        snaps = self.snapshots
        return TrainingRecord(
            settings=asdict(self.settings),
            steps=np.array([s.step for s in snaps]),
            seconds=np.array([s.seconds for s in snaps]),
            loss_first=np.array([s.loss_first for s in snaps]),
            loss_repeat=np.array([s.loss_repeat for s in snaps]),
            previous_token=np.stack([s.previous_token for s in snaps]),
            induction=np.stack([s.induction for s in snaps]),
            attentions=np.stack([s.attentions for s in snaps]),
            probe=self.probe,
        )

    def save(self, out: str | Path) -> Path:
        """The model as a GPT-2 checkpoint in `out`, with its training record beside it."""
        out = save_checkpoint(self.params, self.config, Path(out))
        self.record().save(out)
        return out
