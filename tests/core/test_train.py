"""Training from scratch (core/train): the letter data, the heads' scores, the checkpoint that
transformers and the NumPy engine both load, the record, reproducibility, the findings, the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from core.__main__ import main
from core.models.gpt2 import GPT2Numpy
from core.models.shipped import SHIPPED_COMMAND, shipped_model_dir
from core.train.checkpoint import engine_from_params
from core.train.data import LETTERS, START, letter_batch, probe_sequence
from core.train.findings import best_head, fastest_drop, repeat_loss_with_ablation
from core.train.heads import induction_scores, previous_token_scores
from core.train.record import TrainingRecord, load_record
from core.train.trainer import Trainer, TrainSettings

TINY = TrainSettings(
    layers=2, heads=2, width=16, context=24, steps=6, record_every=3, probe_length=8, batch=4
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    trainer = Trainer(TINY)
    trainer.run()
    return trainer, trainer.save(tmp_path_factory.mktemp("letters"))


def test_each_sequence_holds_a_segment_and_its_copy():
    batch = letter_batch(np.random.default_rng(3), 50, 40)
    assert batch.inputs.shape == batch.targets.shape == batch.repeat.shape == (50, 40)
    assert (batch.inputs[:, 0] == START).all() and (batch.inputs[:, 1:] < len(LETTERS)).all()
    assert (batch.targets[:, :-1] == batch.inputs[:, 1:]).all()
    distances = set()
    for inputs, targets, repeat in zip(batch.inputs, batch.targets, batch.repeat, strict=True):
        assert repeat.sum() >= 40 - 12 - 1  # a cycle of at most 12 letters: the rest predictable
        for t in np.flatnonzero(repeat):
            # the letter before the target occurred earlier, followed by the target: copy by content
            earlier = [s for s in range(1, t) if inputs[s] == inputs[t] and targets[s] == targets[t]]
            assert earlier, "a repeat must be predictable from an earlier occurrence"
            distances.add(t - earlier[-1])
    assert len(distances) >= 8  # the copy's distance changes: copying from a fixed offset fails


def test_the_probe_is_a_start_token_and_two_copies():
    probe = probe_sequence(5, seed=1)
    assert probe[0] == START and len(probe) == 11 and (probe[1:6] == probe[6:]).all()
    assert len(set(probe[1:6])) == 5  # different letters: each has one earlier occurrence
    with pytest.raises(ValueError, match="different letters"):
        probe_sequence(27)


def test_head_scores_on_hand_built_patterns():
    n, t = 4, 9
    previous = np.zeros((t, t))
    previous[0, 0] = 1
    previous[np.arange(1, t), np.arange(t - 1)] = 1  # every token looks one back
    induction = np.zeros((t, t))
    induction[np.arange(t), 0] = 1
    rows = np.arange(1 + n, t)
    induction[rows] = 0
    induction[rows, rows - n + 1] = 1  # the copy looks at what followed its letter's first occurrence
    probs = np.stack([previous, induction])[None]  # (1, 2, T, T)
    assert previous_token_scores(probs)[0].tolist() == [1.0, 0.0]
    assert induction_scores(probs, n)[0].tolist() == [0.0, 1.0]


def test_the_checkpoint_is_a_gpt2_that_transformers_and_the_engine_agree_on(trained):
    torch = pytest.importorskip("torch")
    from transformers import AutoTokenizer, GPT2LMHeadModel

    trainer, out = trained
    text = "abcdefg hijk abcdefg"
    engine = GPT2Numpy.from_pretrained(out)
    ours = engine.run(text)
    assert ours.tokens[0] == "<s>" and "".join(ours.tokens[1:]) == text.replace(" ", "")
    ids = AutoTokenizer.from_pretrained(out)(text, return_tensors="pt").input_ids
    assert ids[0].tolist() == list(engine.encode(text).ids)
    model = GPT2LMHeadModel.from_pretrained(out, attn_implementation="eager").eval()
    with torch.no_grad():
        theirs = model(ids, output_attentions=True)
    np.testing.assert_allclose(
        ours.attentions, np.stack([a[0].numpy() for a in theirs.attentions]), atol=1e-5
    )
    logits = engine.unembed(engine.forward(ids[0].numpy()).hidden_states[-1])
    np.testing.assert_allclose(logits, theirs.logits[0].numpy(), atol=1e-5)
    # and the saved weights are the trainer's
    np.testing.assert_array_equal(engine.token_embeddings, trainer.params["wte.weight"])


def test_the_record_reads_back_as_saved(trained):
    trainer, out = trained
    live, saved = trainer.record(), load_record(out)
    assert saved.recorded and not live.recorded
    assert saved.steps.tolist() == [0, 3, 6]
    for name in ("loss_first", "loss_repeat", "previous_token", "induction", "probe"):
        np.testing.assert_allclose(getattr(saved, name), getattr(live, name))
    np.testing.assert_array_equal(saved.attentions, live.attentions)
    assert saved.attentions.shape == (3, 2, 2, 17, 17) and saved.settings["seed"] == 0
    (out / "training_record.json").write_text("{not json")
    assert load_record(out) is None  # a damaged record is no record, not a traceback


def test_training_is_reproducible_from_its_seed():
    first, second = Trainer(TINY), Trainer(TINY)
    first.run(), second.run()
    np.testing.assert_array_equal(first.record().loss_repeat, second.record().loss_repeat)
    for name, value in first.params.items():
        np.testing.assert_array_equal(value, second.params[name])
    other = Trainer(replace(TINY, seed=1))
    other.run()
    assert not np.array_equal(other.params["wte.weight"], first.params["wte.weight"])


def test_the_position_table_stays_fixed_while_everything_else_learns(trained):
    trainer, _ = trained
    fresh = Trainer(TINY)
    np.testing.assert_array_equal(trainer.params["wpe.weight"], fresh.params["wpe.weight"])
    assert not np.array_equal(
        trainer.params["h.0.attn.c_attn.weight"], fresh.params["h.0.attn.c_attn.weight"]
    )


def test_run_stops_at_the_step_count_and_after_its_time():
    trainer = Trainer(replace(TINY, steps=5, record_every=2))
    assert trainer.run(n_steps=3) and trainer.step == 3
    trainer.run()
    assert trainer.done and trainer.step == 5 and [s.step for s in trainer.snapshots] == [0, 2, 4, 5]
    assert trainer.run() == [] and trainer.step == 5
    slow = Trainer(replace(TINY, steps=10_000))
    slow.run(seconds=0.0)
    assert slow.step == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [({"width": 15}, "divisible"), ({"probe_length": 20}, "probe"), ({"lr": 0.0}, "learning rate")],
)
def test_bad_settings_say_what_to_change(change, message):
    with pytest.raises(ValueError, match=message):
        Trainer(replace(TINY, **change))


def _record(loss_repeat, induction_best, layers=2):
    s = len(loss_repeat)
    induction = np.zeros((s, layers, 2))
    induction[:, -1, 1] = induction_best
    return TrainingRecord(
        settings={},
        steps=np.arange(s) * 10,
        seconds=np.arange(s, dtype=float),
        loss_first=np.full(s, 3.3),
        loss_repeat=np.asarray(loss_repeat, dtype=float),
        previous_token=np.zeros((s, layers, 2)),
        induction=induction,
        attentions=np.zeros((s, layers, 2, 3, 3), dtype=np.float16),
        probe=np.array([START, 0, 0]),
    )


def test_the_fastest_drop_and_whether_the_induction_score_rose_with_it():
    drop = fastest_drop(_record([3.3, 3.2, 3.1, 1.0, 0.8], [0.02, 0.03, 0.05, 0.6, 0.7]))
    assert (drop.start, drop.end, drop.loss_before, drop.loss_after) == (20, 30, 3.1, 1.0)
    assert drop.with_induction and (drop.induction_before, drop.induction_after) == (0.05, 0.6)
    assert (drop.rise_start, drop.rise_end) == (20, 30)
    # a long record (windows of 100 steps): a quick early fall, a plateau, then the phase change
    loss = np.concatenate([[3.5, 3.2, 3.0], np.full(8, 3.0), np.linspace(3.0, 0.5, 6), np.full(8, 0.5)])
    score = np.concatenate([np.full(10, 0.05), np.linspace(0.05, 0.6, 5), np.full(10, 0.6)])
    record = replace(_record(loss, score), steps=np.arange(25) * 25)
    phase = fastest_drop(record)
    assert phase.end - phase.start == 100 and 250 <= phase.start <= 300 and phase.with_induction
    assert 225 <= phase.rise_start <= 275 and phase.induction_after - phase.induction_before > 0.3
    apart = fastest_drop(_record([3.3, 3.2, 3.1, 1.0, 0.8, 0.7, 0.6], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6]))
    assert not apart.with_induction  # the score rose three snapshots later
    flat = fastest_drop(_record([3.3, 2.0, 1.0], [0.02, 0.02, 0.02]))
    assert not flat.with_induction  # no score rose at all
    assert fastest_drop(_record([3.0, 3.1, 3.2], [0, 0, 0])) is None  # it never fell
    assert fastest_drop(_record([3.0], [0])) is None
    one_layer = fastest_drop(_record([3.3, 1.0], [0.0, 0.9], layers=1))
    assert np.isnan(one_layer.induction_after) and not one_layer.with_induction


def test_best_head_within_layers_and_above_its_minimum():
    scores = np.array([[0.1, 0.7], [0.9, 0.2]])
    assert best_head(scores, range(0, 1), 0.5) == (0, 1, 0.7)
    assert best_head(scores, range(1, 2), 0.5) == (1, 0, 0.9)
    assert best_head(scores, range(1, 2), 0.95) is None
    assert best_head(scores, range(2, 4), 0.0) is None  # a one-layer model has no later layer


def test_ablation_cuts_each_head_through_the_engine(trained):
    trainer, _ = trained
    engine = engine_from_params(trainer.params, trainer.config)
    batch = letter_batch(np.random.default_rng(0), 3, TINY.context)
    baseline, cut = repeat_loss_with_ablation(engine, batch)
    assert cut.shape == (2, 2) and np.isfinite(cut).all() and not np.allclose(cut, baseline)
    # one head by hand: the engine's ablate argument, the repeats' mean cross-entropy
    losses = []
    for inputs, targets, repeat in zip(batch.inputs, batch.targets, batch.repeat, strict=True):
        logits = engine.unembed(engine.forward(inputs, ablate=[(1, 0)]).hidden_states[-1]).astype(np.float64)
        log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True))
        log_probs -= logits.max(-1, keepdims=True)
        losses += list(-log_probs[np.arange(len(targets)), targets][repeat])
    assert cut[1, 0] == pytest.approx(np.mean(losses), rel=1e-9)


def test_the_cli_trains_saves_and_prints_the_curves(tmp_path, capsys):
    out = tmp_path / "model"
    args = ["train", "--out", str(out), "--steps", "2", "--layers", "1", "--heads", "2", "--seed", "4"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["out"] == str(out) and printed["steps"][0] == 0 and printed["steps"][-1] == 2
    assert np.asarray(printed["induction"]).shape[1:] == (1, 2)
    assert len(printed["loss_first"]) == len(printed["loss_repeat"]) == len(printed["previous_token"])
    assert GPT2Numpy.from_pretrained(out).n_layers == 1 and load_record(out).settings["seed"] == 4
    assert main(["train", "--out", str(tmp_path / "x"), "--layers", "9"]) == 2
    assert "--layers" in capsys.readouterr().err


@pytest.fixture(scope="module")
def default_run():
    """The shipped model's settings, trained for its first 400 steps (about 10 s on this machine)."""
    trainer = Trainer(replace(TrainSettings(), steps=400))
    trainer.run()
    return trainer.record()


def test_the_default_run_grows_an_induction_head_and_copies(default_run):
    later = default_run.induction[-1, 1:]  # layer 2's heads
    assert later.max() > 0.4, f"no induction head by step 400: {later.round(2).tolist()}"
    assert default_run.loss_repeat[-1] < 0.5 * default_run.loss_first[-1]
    assert default_run.induction[0, 1:].max() < 0.15  # it was not there at the start
    drop = fastest_drop(default_run)
    assert drop.with_induction and drop.loss_before - drop.loss_after > 0.3


def test_the_shipped_model_is_what_its_command_makes(default_run):
    """The shipped record's first 400 steps are this run's (the same seed, data and code)."""
    model_dir = shipped_model_dir()
    assert model_dir is not None, f"models/letters-gpt2 is missing: {SHIPPED_COMMAND}"
    shipped = load_record(model_dir)
    assert shipped.settings == {**default_run.settings, "steps": shipped.settings["steps"]}
    n = len(default_run.steps)
    assert shipped.steps[:n].tolist() == default_run.steps.tolist()
    # BLAS kernels differ between machines in the last bits; 400 steps keep them small
    np.testing.assert_allclose(shipped.loss_repeat[:n], default_run.loss_repeat, rtol=0.02, atol=0.02)
    np.testing.assert_allclose(shipped.induction[:n], default_run.induction, atol=0.05)
    engine = GPT2Numpy.from_pretrained(model_dir)
    assert (engine.n_layers, engine.n_heads, engine.max_tokens) == (2, 4, 64)
