"""Half of every BERT layer in a second process, so that one forward pass keeps both cores busy.

How a layer splits between the engine's process (part 0) and its partner (part 1): by attention heads
and by the feed-forward's hidden columns, as Megatron-LM splits a layer between GPUs (Shoeybi et al.
2019, section 3). Part 0 takes heads [0, h0) and columns [0, i0), the partner the rest.

    1) each part projects Q, K and V of its heads for every token, attends, and multiplies its heads'
       context by its rows of W^O: a partial sum of the attention output (part 0 adds b^O and the
       residual). -- meet: each needs the other's partial sum.
    2) each adds the two partial sums and applies LayerNorm (both do this small step, which saves a
       meeting), computes its columns of the feed-forward's hidden layer with GELU, and multiplies
       them by its rows of W_2: partial sums again (part 0 adds b_2 and the residual). -- meet.
    3) each adds the two and applies LayerNorm: the layer's output and the next layer's input.

Why a process and not a thread: NumPy holds the GIL between its calls, and on this project's machines
each hand-over of the GIL or wake-up of a sleeping thread costs ~40 microseconds (the virtual CPU halts
when idle), so two Python threads that meet often lose what they gain. Two processes meet through
counters in shared memory that each one polls: a meeting costs about a microsecond when both are
running. Each part computes its half of the products on one core with one BLAS thread, keeps its own
GEMM outputs in its own cache, and streams only its half of the weights.

The meetings rely on x86-64's memory order (stores become visible to other cores in program order), so
a counter written after the data it announces is a safe signal; other CPUs would need memory barriers,
which Python cannot issue, and `unavailable_reason()` keeps them on the one-process path. Linux only:
the shared memory is a memfd that the partner inherits.

The partner starts in the background on first use and runs `python -m core.bert_partner FD`: it imports
NumPy, core.layers and core.bert_kernels only, reads its half of the weights from its stdin into a
block of its own, and then waits for one byte per forward pass. It ends when the engine closes its
stdin or its process ends. Any failure (the partner died, stopped answering, or raised) surfaces as
PartnerError in the engine, which then drops the partner and computes the pass in its own process.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import platform
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from core.bert_kernels import (
    FAST_ACTIVATIONS,
    WeightBlock,
    layer_norm_,
    padded_rows,
    softmax2_rows_,
    softmax2_rows_stable_,
)


class PartnerError(RuntimeError):
    """The partner process failed, died or stopped answering; the engine falls back to one process."""


# A meeting that waits longer than this means the other process is stuck or gone.
MEETING_TIMEOUT_S = 10.0
STARTUP_TIMEOUT_S = 60.0  # importing NumPy on a cold, busy machine can take seconds

# ctl words (int64), each counter on its own 64-byte line so the two processes never write one line
_COUNT = (0, 8)  # meetings passed by part 0 and part 1
_TOKENS = 16  # T of the current forward pass, written by part 0 before it wakes the partner
_FAILED = 24  # set by the partner when it raises
_QUIT = 32  # set by part 0 when it drops the partner, which may be waiting at a meeting
_ROWS = 40  # rows of the current pass's products (T, or T padded), written with _TOKENS
_CTL_WORDS = 48
# The products may run on token rows padded up to a multiple of this (core.bert_kernels.padded_rows):
# the shared memory and the scratch arrays have room for that many rows.
MAX_ROW_MULTIPLE = 8


def unavailable_reason() -> str | None:
    """None when this machine can run a partner, else why not."""
    if sys.platform != "linux" or not hasattr(os, "memfd_create"):
        return "the partner process needs Linux (memfd shared memory)"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "the partner process relies on x86-64's memory order"
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        return "one core: nothing to share the work with"
    return None


@dataclass(frozen=True)
class HalfLayer:
    """One part's share of a layer's weights, shaped for x @ W (views of the engine's weights in part 0,
    copies in the partner's own block in part 1)."""

    w_q: np.ndarray  # (D, h d_head): W^Q's columns for these heads, with core.bert's query_scale in it
    w_k: np.ndarray  # (D, h d_head)
    w_v: np.ndarray  # (D, h d_head)
    b_q: np.ndarray  # (h d_head,)
    b_k: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray  # (h d_head, D): W^O's rows for these heads
    w_1: np.ndarray  # (D, i): the feed-forward's first weight, these hidden columns
    b_1: np.ndarray  # (i,)
    w_2: np.ndarray  # (i, D): its second weight, the same hidden units' rows
    b_o: np.ndarray  # (D,) added by part 0 only
    b_2: np.ndarray  # (D,) added by part 0 only
    ln1_g: np.ndarray  # (D,)
    ln1_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class Split:
    """Where a model's layers split: part 0's heads and hidden columns, and the sizes both parts need."""

    n_layers: int
    hidden: int  # D
    n_heads: int  # H
    head_size: int
    intermediate: int  # I
    eps: float
    activation: str
    max_tokens: int  # the longest input the shared memory holds

    @property
    def max_rows(self) -> int:
        """The most rows a pass's products may run on: max_tokens padded to MAX_ROW_MULTIPLE."""
        return padded_rows(self.max_tokens, MAX_ROW_MULTIPLE)

    @property
    def heads0(self) -> int:
        return self.n_heads // 2

    @property
    def inter0(self) -> int:
        return self.intermediate // 2

    def heads(self, part: int) -> range:
        return range(0, self.heads0) if part == 0 else range(self.heads0, self.n_heads)

    def columns(self, part: int) -> slice:
        """Columns of Q (or K, or V) that belong to this part's heads."""
        heads = self.heads(part)
        return slice(heads.start * self.head_size, heads.stop * self.head_size)

    def inter(self, part: int) -> slice:
        return slice(0, self.inter0) if part == 0 else slice(self.inter0, self.intermediate)


def split_layer(layer, split: Split, part: int) -> HalfLayer:
    """A part's share of a core.bert layer (fused w_qkv = [W^Q | W^K | W^V]), as views: no copies."""
    d, cols, inter = split.hidden, split.columns(part), split.inter(part)
    return HalfLayer(
        w_q=layer.w_qkv[:, cols],
        w_k=layer.w_qkv[:, d:][:, cols],
        w_v=layer.w_qkv[:, 2 * d :][:, cols],
        b_q=layer.b_qkv[cols],
        b_k=layer.b_qkv[d:][cols],
        b_v=layer.b_qkv[2 * d :][cols],
        w_o=layer.w_o[cols],
        w_1=layer.w_1[:, inter],
        b_1=layer.b_1[inter],
        w_2=layer.w_2[inter],
        b_o=layer.b_o,
        b_2=layer.b_2,
        ln1_g=layer.ln1_g,
        ln1_b=layer.ln1_b,
        ln2_g=layer.ln2_g,
        ln2_b=layer.ln2_b,
    )


def _half_shapes(split: Split, part: int) -> dict[str, tuple[int, ...]]:
    d, hd, i = split.hidden, len(split.heads(part)) * split.head_size, split.inter(part)
    n_inter = i.stop - i.start
    return {
        "w_q": (d, hd),
        "w_k": (d, hd),
        "w_v": (d, hd),
        "b_q": (hd,),
        "b_k": (hd,),
        "b_v": (hd,),
        "w_o": (hd, d),
        "w_1": (d, n_inter),
        "b_1": (n_inter,),
        "w_2": (n_inter, d),
        "b_o": (d,),
        "b_2": (d,),
        "ln1_g": (d,),
        "ln1_b": (d,),
        "ln2_g": (d,),
        "ln2_b": (d,),
    }


# ---- the shared memory --------------------------------------------------------------------------


class _Exchange:
    """The memory both parts share, as NumPy views: control words, the embeddings, the partial sums,
    and the partner's attention probabilities (part 0 writes its own straight into the engine's output)."""

    def __init__(self, buffer, split: Split):
        t, r, d, h1 = split.max_tokens, split.max_rows, split.hidden, len(split.heads(1))
        self.ctl = memoryview(buffer)[: 8 * _CTL_WORDS].cast("q")  # plain loads and stores, polled
        floats = np.frombuffer(buffer, dtype=np.float32, offset=8 * _CTL_WORDS)
        self.x0 = floats[: r * d].reshape(r, d)  # the embeddings (and zero padding rows), by part 0
        self.attn_partial = floats[r * d : 3 * r * d].reshape(2, r, d)  # [part] partial sums
        self.ffn_partial = floats[3 * r * d : 5 * r * d].reshape(2, r, d)
        self.partner_probs = floats[5 * r * d : 5 * r * d + split.n_layers * h1 * t * t]

    @staticmethod
    def n_bytes(split: Split) -> int:
        t, r, d, h1 = split.max_tokens, split.max_rows, split.hidden, len(split.heads(1))
        return 8 * _CTL_WORDS + 4 * (5 * r * d + split.n_layers * h1 * t * t)

    def probs_of_partner(self, split: Split, n_tokens: int) -> np.ndarray:
        """(L, H1, T, T) view of the partner's probabilities for a pass of n_tokens."""
        h1 = len(split.heads(1))
        size = split.n_layers * h1 * n_tokens * n_tokens
        return self.partner_probs[:size].reshape(split.n_layers, h1, n_tokens, n_tokens)


class _Meetings:
    """Both parts count the meetings they reach; a part waits until the other's count catches up.

    Waiting polls the other's counter (a spin, as OpenBLAS's own threads wait); after a few hundred
    polls it also yields the core, so a partner that shares one core with us still gets to run."""

    def __init__(self, ctl: memoryview, part: int, check: Callable[[], None]):
        self.ctl, self.check = ctl, check
        self.mine, self.theirs = _COUNT[part], _COUNT[1 - part]
        self.count = ctl[self.mine]

    def __call__(self) -> None:
        self.count += 1
        ctl, count, theirs = self.ctl, self.count, self.theirs
        ctl[self.mine] = count
        if ctl[theirs] >= count:
            return
        polls = 0
        deadline = None
        while ctl[theirs] < count:
            polls += 1
            if polls > 200:
                os.sched_yield()
                if polls % 1024 == 0:
                    self.check()
                    now = time.monotonic()
                    if deadline is None:
                        deadline = now + MEETING_TIMEOUT_S
                    elif now > deadline:
                        raise PartnerError(
                            f"the other part did not reach meeting {count} within {MEETING_TIMEOUT_S:.0f} s"
                        )


# ---- half a layer ---------------------------------------------------------------------------------


class _Scratch:
    """One part's work arrays for up to max_tokens tokens (max_rows rows), allocated once.

    Zeros to begin with: the padding rows below a pass's tokens must hold finite numbers (an inf there
    would raise NumPy's invalid-value warning in LayerNorm), and every pass leaves finite ones."""

    def __init__(self, split: Split, part: int):
        t, r, d = split.max_tokens, split.max_rows, split.hidden
        hd = len(split.heads(part)) * split.head_size
        i = split.inter(part)
        n_inter = i.stop - i.start
        self.q, self.k, self.v, self.context = (np.zeros((r, hd), np.float32) for _ in range(4))
        self.key_t = np.zeros(hd * t, np.float32)
        self.attn_out = np.zeros((r, d), np.float32)
        self.inter = np.zeros((r, n_inter), np.float32)
        self.act_scratch = (np.zeros((r, n_inter), np.float32), np.zeros((r, n_inter), np.float32))
        self.sq = np.zeros((r, d), np.float32)
        self.x = np.zeros((r, d), np.float32)  # the current layer's input, from layer 1 on
        self.mean_d = np.full(d, 1.0 / d, np.float32)
        self.ones = np.ones(t, np.float32)


def run_layers(
    part: int,
    weights: Sequence[HalfLayer],
    split: Split,
    t: int,
    rows: int,
    outputs: np.ndarray | None,
    probs: Callable[[int], np.ndarray],
    exchange: _Exchange,
    meet: _Meetings,
    scratch: _Scratch,
) -> None:
    """This part's half of every layer for a pass of t tokens, whose embeddings part 0 has written
    into exchange.x0, followed by zeros up to `rows` rows (t <= rows <= split.max_rows).

    The products run on `rows` rows, the attention on the t tokens only; the padding rows
    carry finite numbers that no token looks at (core.bert_kernels, "rows for the matrix products").
    outputs (L, t, D): where part 0 writes each layer's output (the engine's hidden states 1..L);
    None for the partner, which keeps them in its scratch. probs(i): (h, t, t) array for this part's
    heads' attention probabilities in layer i."""
    d_head = split.head_size
    n_heads = len(split.heads(part))
    activation = FAST_ACTIVATIONS[split.activation]
    s = scratch
    x = exchange.x0[:rows]
    q, k, v, context = s.q[:rows], s.k[:rows], s.v[:rows], s.context[:rows]
    key_t = s.key_t[: n_heads * d_head * t].reshape(n_heads, d_head, t)
    attn_out, inter, sq, ones = s.attn_out[:rows], s.inter[:rows], s.sq[:rows], s.ones[:t]
    act_scratch = (s.act_scratch[0][:rows], s.act_scratch[1][:rows])
    attn_partial, ffn_partial = exchange.attn_partial[:, :rows], exchange.ffn_partial[:, :rows]

    def heads(token_rows: np.ndarray) -> np.ndarray:  # the t tokens' (t, h d_head) -> (h, t, d_head), a view
        return token_rows[:t].reshape(t, n_heads, d_head).transpose(1, 0, 2)

    for i, w in enumerate(weights):
        # 1) this part's heads: Q, K, V, scores, softmax, context; then its partial sum of W^O
        np.matmul(x, w.w_q, out=q)
        q += w.b_q
        np.matmul(x, w.w_k, out=k)
        k += w.b_k
        np.matmul(x, w.w_v, out=v)
        v += w.b_v
        np.copyto(key_t, heads(k).transpose(0, 2, 1))  # K^T contiguous, as in core.bert
        layer_probs = probs(i)
        np.matmul(heads(q), key_t, out=layer_probs)
        if not softmax2_rows_(layer_probs, ones):  # overflow: redo with the row maximum
            np.matmul(heads(q), key_t, out=layer_probs)
            softmax2_rows_stable_(layer_probs)
        np.matmul(layer_probs, heads(v), out=heads(context))  # the padding rows keep finite old values
        mine = attn_partial[part]
        np.matmul(context, w.w_o, out=mine)
        if part == 0:
            mine += w.b_o
            mine += x
        meet()
        # 2) LayerNorm of the attention output (both parts), then this part's feed-forward columns
        np.add(attn_partial[0], attn_partial[1], out=attn_out)
        layer_norm_(attn_out, w.ln1_g, w.ln1_b, split.eps, s.mean_d, sq)
        np.matmul(attn_out, w.w_1, out=inter)
        inter += w.b_1
        activation(inter, act_scratch)
        mine = ffn_partial[part]
        np.matmul(inter, w.w_2, out=mine)
        if part == 0:
            mine += w.b_2
            mine += attn_out
        meet()
        # 3) the layer's output and the next layer's input: part 0 writes the engine's hidden state
        # (straight into it when there are no padding rows); the partner skips the last layer's
        if outputs is None and i + 1 == len(weights):
            break
        x = outputs[i] if outputs is not None and rows == t else s.x[:rows]
        np.add(ffn_partial[0], ffn_partial[1], out=x)
        layer_norm_(x, w.ln2_g, w.ln2_b, split.eps, s.mean_d, sq)
        if outputs is not None and rows != t:
            outputs[i] = x[:t]


# ---- part 0: the engine's side --------------------------------------------------------------------


class Partner:
    """The engine's partner process: started in the background, used once `ready` and not `failed`."""

    def __init__(self, layers: Sequence, split: Split):
        self.split = split
        self.own = [split_layer(layer, split, 0) for layer in layers]
        self.failed: str | None = None
        self._ready = threading.Event()
        self._closing = threading.Lock()
        self._fd = os.memfd_create("bert-partner")  # close-on-exec: only the partner gets it (pass_fds)
        try:
            os.ftruncate(self._fd, _Exchange.n_bytes(split))
            self._map = mmap.mmap(self._fd, _Exchange.n_bytes(split))
            self._spawn()
        except OSError:
            os.close(self._fd)
            self._fd = None
            raise
        self.exchange = _Exchange(self._map, split)
        self._scratch = _Scratch(split, 0)
        self._meet = _Meetings(self.exchange.ctl, 0, self._check)
        # the partner's half of the weights, sent while the engine goes on in its own process
        partner_half = [split_layer(layer, split, 1) for layer in layers]
        self._starter = threading.Thread(
            target=self._start, args=(partner_half,), name="bert-partner-start", daemon=True
        )
        self._starter.start()

    def _spawn(self) -> None:
        env = dict(os.environ)
        # one BLAS thread in the partner: its core is the second one; an idle OpenBLAS worker would spin
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        package_root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "core.bert_partner", str(self._fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(self._fd,),
            env=env,
            start_new_session=True,  # a Ctrl-C in the engine's terminal is for the engine, not for it
        )

    @property
    def ready(self) -> bool:
        return self._ready.is_set() and self.failed is None

    @property
    def pid(self) -> int:
        return self._process.pid

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> bool:
        """Block until the partner can take work (for benchmarks and tests); False when it failed."""
        self._starter.join(timeout)
        return self.ready

    def _start(self, partner_half: list[HalfLayer]) -> None:
        try:
            header = {f.name: getattr(self.split, f.name) for f in fields(Split)}
            stdin = self._process.stdin
            stdin.write(json.dumps(header).encode() + b"\n")
            for half in partner_half:
                for f in fields(HalfLayer):
                    stdin.write(memoryview(np.ascontiguousarray(getattr(half, f.name), np.float32)).cast("B"))
            stdin.flush()
            ready, _, _ = select.select([self._process.stdout], [], [], STARTUP_TIMEOUT_S)
            line = self._process.stdout.readline() if ready else b""
            if line.strip() != b"ready":
                raise PartnerError(
                    f"the partner did not start: {line.decode(errors='replace').strip() or 'no answer'}"
                )
            self._ready.set()
        except (OSError, ValueError, PartnerError) as err:
            self.close()
            self.failed = str(err) or type(err).__name__

    def _check(self) -> None:
        if self.exchange.ctl[_FAILED]:
            raise PartnerError("the partner process raised an error")
        if self._process.poll() is not None:
            raise PartnerError(f"the partner process ended (exit code {self._process.returncode})")

    def forward(self, hidden: np.ndarray, attentions: np.ndarray, row_multiple: int = 1) -> None:
        """Every layer for one sequence: hidden (L + 1, T, D) with the embeddings in hidden[0], filled
        with the layers' outputs; attentions (L, H, T, T) filled. The products run on the T token rows
        padded to row_multiple (as far as split.max_rows has room). Raises PartnerError."""
        if not self.ready:
            raise PartnerError(self.failed or "the partner is not ready")
        split, exchange = self.split, self.exchange
        t = hidden.shape[1]
        rows = min(padded_rows(t, row_multiple), split.max_rows)
        h0 = split.heads0
        exchange.x0[:t] = hidden[0]
        exchange.x0[t:rows] = 0
        exchange.ctl[_TOKENS] = t
        exchange.ctl[_ROWS] = rows
        try:
            self._process.stdin.write(b"g")  # the partner wakes while we start on our heads
            self._process.stdin.flush()
        except (OSError, ValueError) as err:
            raise PartnerError(f"cannot reach the partner process: {err}") from err
        run_layers(
            0,
            self.own,
            split,
            t,
            rows,
            hidden[1:],
            lambda i: attentions[i, :h0],
            exchange,
            self._meet,
            self._scratch,
        )
        attentions[:, h0:] = exchange.probs_of_partner(split, t)

    def close(self) -> None:
        """Stop the partner (it also stops by itself when this process ends). Safe to call twice, and
        from the starter thread and the engine at once."""
        closing = getattr(self, "_closing", None)
        if closing is None:  # __init__ failed before anything was opened
            return
        with closing:
            process = getattr(self, "_process", None)
            if getattr(self, "exchange", None) is not None:
                self.exchange.ctl[_QUIT] = 1  # a partner waiting at a meeting stops waiting
            if process is not None:
                if not self._ready.is_set():  # the starter may be blocked writing weights: unblock it
                    process.kill()
                for pipe in (process.stdin, process.stdout):
                    with contextlib.suppress(OSError, ValueError):
                        pipe.close()  # end of input: the partner leaves its loop
                try:
                    process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)

    def __del__(self):
        self.close()


# ---- part 1: the partner process --------------------------------------------------------------------


class _EngineGone(Exception):
    """The engine's end of the pipe closed before all weights arrived."""


def _read_weights(stream, split: Split) -> list[HalfLayer]:
    shapes = _half_shapes(split, 1)
    block = WeightBlock(
        split.n_layers * sum(WeightBlock.floats_for(np.empty(s, np.float32)) for s in shapes.values())
    )
    layers = []
    for _ in range(split.n_layers):
        arrays = {}
        for name, shape in shapes.items():
            piece = block.store(np.zeros(shape, np.float32))
            view = memoryview(piece).cast("B")
            got = 0
            while got < len(view):
                n = stream.readinto(view[got:])
                if not n:
                    raise _EngineGone
                got += n
            arrays[name] = piece
        layers.append(HalfLayer(**arrays))
    return layers


def main(argv: Sequence[str]) -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    try:
        header = stdin.readline()
        if not header:
            return 0  # the engine's process ended before it sent anything
        split = Split(**json.loads(header))
        weights = _read_weights(stdin, split)
        fd = int(argv[0])
        shared = mmap.mmap(fd, _Exchange.n_bytes(split))
        exchange = _Exchange(shared, split)
        scratch = _Scratch(split, 1)
        parent = os.getppid()

        def check() -> None:
            if os.getppid() != parent or exchange.ctl[_QUIT]:
                raise _EngineGone

        meet = _Meetings(exchange.ctl, 1, check)
    except _EngineGone:
        return 0  # it ended while sending the weights (a one-sentence script, say): nothing to report
    except Exception as err:  # tell the engine why, on the line it waits for
        with contextlib.suppress(OSError):
            stdout.write(f"error: {type(err).__name__}: {err}\n".encode())
            stdout.flush()
        return 1
    stdout.write(b"ready\n")
    stdout.flush()
    while stdin.read(1) == b"g":  # one byte a forward pass; end of input: the engine is done
        t, rows = exchange.ctl[_TOKENS], exchange.ctl[_ROWS]
        try:
            run_layers(
                1,
                weights,
                split,
                t,
                rows,
                None,
                lambda i, t=t: exchange.probs_of_partner(split, t)[i],
                exchange,
                meet,
                scratch,
            )
        except _EngineGone:
            return 0
        except BaseException as err:
            exchange.ctl[_FAILED] = 1
            print(f"bert partner: {type(err).__name__}: {err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
