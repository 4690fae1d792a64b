"""The source articles' worked examples: their inputs, what they print at each step, the true values.

Two examples, from the articles in ../shared/seeds (the product's sources):
- "cat-mat": "The Power of Attention: How AI Models Learn to Focus on What Matters"
  (seeds/000_7e8edce575fb3dde.txt). Two tokens, "The cat" and "sat on the mat", 4-dimensional
  embeddings, one head of size 3, Q, K and V given directly.
- "i-love-nlp": "A Comprehensive Overview of the Attention Mechanism" (seeds/002_59fe7e7f25bc8a3a.txt).
  The query of "love" against the keys of "I", "love", "NLP", all scalars (d_k = 1).

Each printed value is checked twice: against the true value (the core run on the article's inputs),
and against the value the article's *own* previous printed step leads to. A value that is wrong
both ways is a slip made at that step; a value that is wrong but follows from the article's earlier
numbers only carries an earlier slip forward ("propagated"). Printed values are rounded, so a
value counts as right when it is within half a unit of its last printed decimal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.lesson.attention import softmax
from core.lesson.trace import LayerTrace, from_projections

__all__ = ["EXAMPLES", "Flag", "StepCheck", "WorkedExample", "check_example", "layer_norm_article_form"]

# The steps an article can print, in order, with the page's step number.
CHECKED_STEPS = (("scores", 3), ("scaled", 4), ("probs", 5), ("context", 6))


@dataclass(frozen=True)
class Flag:
    """One printed number that differs from the true one."""

    index: tuple[int, int]  # (row, column) in the step's matrix, 0-indexed; rows are queries
    printed: float  # what the article prints
    true: float  # the core's value from the article's inputs
    from_printed: float  # what the article's own previous printed step leads to
    kind: str  # "slip": wrong even from the article's own numbers; "propagated": carries an earlier slip


@dataclass(frozen=True, eq=False)
class StepCheck:
    step: str  # trace name: "scores", "scaled", "probs", "context"
    number: int  # the learn page's step number
    printed: np.ndarray | None  # (T_q, T_k) or (T_q, d_v) as printed; None if the article skips the step
    decimals: int | None  # decimals the article rounds this step to; None = its numbers are exact
    true: np.ndarray  # (T_q, ...) the core's value
    from_printed: np.ndarray  # the step recomputed from the article's previous printed numbers
    flags: tuple[Flag, ...]
    note: str = ""

    @property
    def tolerance(self) -> float:
        """Half a unit of the last printed decimal: the most that rounding can explain."""
        return _tolerance(self.decimals)


@dataclass(frozen=True, eq=False)
class WorkedExample:
    slug: str  # the URL's ?example= value
    title: str  # shown on the page
    source: str  # the article it comes from
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    inputs: dict[str, np.ndarray]  # "query", "key", "value" (T, d_k); "x" (T, d_model) and "w_o" when used
    printed: dict[str, np.ndarray]  # step name -> what the article prints for it
    decimals: dict[str, int | None]  # step name -> decimals it is rounded to (None: exact)
    input_notes: dict[str, str] = field(default_factory=dict)  # where an input comes from, when not obvious
    step_notes: dict[str, str] = field(default_factory=dict)  # remarks on a step that are not a number
    remarks: tuple[str, ...] = ()  # other differences from the standard formulation
    scale: bool = True  # the article divides by sqrt(d_k)

    def trace(self, inputs: dict[str, np.ndarray] | None = None) -> LayerTrace:
        """Run the core on the article's inputs, or on edited ones (same names and shapes)."""
        given = {**self.inputs, **(inputs or {})}
        return from_projections(
            given["query"],
            given["key"],
            given["value"],
            query_tokens=self.query_tokens,
            key_tokens=self.key_tokens,
            scale=self.scale,
            x=given.get("x"),
            w_o=given.get("w_o"),
        )

    def checks(self) -> tuple[StepCheck, ...]:
        return check_example(self)


def _from_previous(step: str, previous: np.ndarray, ex: WorkedExample) -> np.ndarray:
    """One step of the article's own chain: the step computed from the previous step's value."""
    if step == "scores":
        return ex.inputs["query"] @ ex.inputs["key"].T
    if step == "scaled":
        return previous / math.sqrt(ex.inputs["key"].shape[-1]) if ex.scale else previous
    if step == "probs":
        return softmax(previous, axis=-1)
    if step == "context":
        return previous @ ex.inputs["value"]
    raise ValueError(f"no rule for step {step!r}")


def _tolerance(decimals: int | None) -> float:
    # None: the article's numbers are exact here (products of one-decimal inputs, or whole numbers)
    return 1e-9 if decimals is None else 0.5 * 10.0**-decimals + 1e-12


def _chain_step(
    step: str, chain: np.ndarray | None, chain_err: np.ndarray | None, ex: WorkedExample
) -> tuple[np.ndarray, np.ndarray]:
    """The step from the article's previous numbers, and how far rounding in those numbers can move
    it (each input moved by its own error bound, one at a time, the changes added up)."""
    value = _from_previous(step, chain, ex)
    bound = np.zeros_like(value)
    if chain is None or chain_err is None:
        return value, bound
    for index in np.ndindex(chain.shape):
        if chain_err[index] == 0:
            continue
        change = np.zeros_like(value)
        for sign in (1.0, -1.0):
            moved = chain.copy()
            moved[index] += sign * chain_err[index]
            change = np.maximum(change, np.abs(_from_previous(step, moved, ex) - value))
        bound += change
    return value, bound


def check_example(ex: WorkedExample) -> tuple[StepCheck, ...]:
    """Compare every printed step with the true value and with the article's own chain."""
    true = ex.trace()
    checks = []
    # the article's own numbers so far (printed where it prints them, else computed from them),
    # and an error bound on each from rounding
    chain: np.ndarray | None = None
    chain_err: np.ndarray | None = None
    for step, number in CHECKED_STEPS:
        from_printed, slack = _chain_step(step, chain, chain_err, ex)
        true_value = true[step][0]  # one head
        printed = ex.printed.get(step)
        decimals = ex.decimals.get(step)
        tol = _tolerance(decimals)
        flags: list[Flag] = []
        if printed is not None:
            printed = np.asarray(printed, dtype=np.float64).reshape(true_value.shape)
            for index in np.ndindex(printed.shape):
                p, t, c = float(printed[index]), float(true_value[index]), float(from_printed[index])
                if abs(p - t) > tol:
                    kind = "propagated" if abs(p - c) <= tol + slack[index] else "slip"
                    flags.append(Flag(index=index, printed=p, true=t, from_printed=c, kind=kind))
            chain, chain_err = printed, np.full(printed.shape, tol)
        else:
            chain, chain_err = from_printed, slack
        checks.append(
            StepCheck(
                step=step,
                number=number,
                printed=printed,
                decimals=decimals,
                true=true_value,
                from_printed=from_printed,
                flags=tuple(flags),
                note=ex.step_notes.get(step, ""),
            )
        )
    return tuple(checks)


def layer_norm_article_form(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """The layer norm as article 000 writes it, (x - mean) / (std + eps), eps outside the root.

    torch.nn.LayerNorm and BERT use (x - mean) / sqrt(var + eps). The two agree when the spread of
    x is large next to eps and part ways when it is small (a nearly constant vector).
    """
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)  # biased, as torch's variance
    return (x - mean) / (std + eps)


# ---- article 000: "The cat sat on the mat" --------------------------------------------------

# The article never prints W^O (it only says it is 3 x 4). This one is ours, chosen with one
# decimal like the article's numbers, so that step 7 can be shown; the page says so.
_CAT_MAT_W_O = np.array(
    [
        [0.3, -0.1, 0.2, 0.4],
        [-0.2, 0.5, 0.1, -0.3],
        [0.1, 0.2, -0.4, 0.2],
    ]
)

CAT_MAT = WorkedExample(
    slug="cat-mat",
    title="“The cat sat on the mat”: two tokens, one head of size 3",
    source="“The Power of Attention: How AI Models Learn to Focus on What Matters” (source article 000)",
    query_tokens=("The cat", "sat on the mat"),
    key_tokens=("The cat", "sat on the mat"),
    inputs={
        "x": np.array([[0.2, 0.5, -0.3, 0.1], [0.1, -0.2, 0.7, 0.3]]),  # x1, x2
        "query": np.array([[0.1, -0.2, 0.3], [-0.3, 0.1, 0.2]]),  # Q1, Q2
        "key": np.array([[0.2, 0.1, -0.1], [0.1, -0.2, 0.3]]),  # K1, K2
        "value": np.array([[-0.1, 0.3, 0.2], [0.2, -0.1, 0.1]]),  # V1, V2
        "w_o": _CAT_MAT_W_O,
    },
    input_notes={
        "x": "x₁ and x₂ as the article prints them. With Q, K and V given, they enter only at the "
        "residual of step 7.",
        "query": "Printed by the article. It never prints W^Q, W^K or W^V, so Q, K and V are the inputs "
        "here.",
        "w_o": "Not in the article (it only says W^O is 3 × 4). These numbers are ours, so step 7 can run.",
    },
    printed={
        "scores": np.array([[-0.01, 0.13], [-0.07, 0.01]]),
        "scaled": np.array([[-0.0058, 0.0751], [-0.0404, 0.0058]]),
        "probs": np.array([[0.4798, 0.5202], [0.4885, 0.5115]]),
        "context": np.array([[0.0546, 0.0942, 0.1490], [0.0456, 0.0942, 0.1486]]),
    },
    # scores are products of one-decimal numbers: exact with two decimals, so no rounding excuse
    decimals={"scores": None, "scaled": 4, "probs": 4, "context": 4},
    remarks=(
        "Layer norm: the article writes y = (x − μ) / (σ + ε). torch.nn.LayerNorm and BERT use "
        "y = (x − μ) / √(σ² + ε), with ε inside the square root, followed by a learned scale γ and "
        "shift β. The two forms agree when σ is large next to ε and drift apart for nearly constant rows.",
        "Layer norm works across the features of one token (each row here), not feature by feature "
        "across tokens as the article's wording suggests.",
    ),
)


# ---- article 002: "I love NLP" --------------------------------------------------------------

I_LOVE_NLP = WorkedExample(
    slug="i-love-nlp",
    title="“I love NLP”: the query of “love”, scalar keys and values (d_k = 1)",
    source="“A Comprehensive Overview of the Attention Mechanism” (source article 002)",
    query_tokens=("love",),
    key_tokens=("I", "love", "NLP"),
    inputs={
        "query": np.array([[2.0]]),
        "key": np.array([[1.0], [2.0], [3.0]]),
        "value": np.array([[2.0], [4.0], [6.0]]),
    },
    input_notes={
        "query": "Only the word “love” asks a question in this example, so there is one query row.",
    },
    printed={
        "scores": np.array([[2.0, 4.0, 6.0]]),
        "probs": np.array([[0.1, 0.3, 0.6]]),
        "context": np.array([[5.0]]),
    },
    decimals={"scores": None, "probs": 1, "context": 1},  # "≈ [0.1, 0.3, 0.6]": one decimal
    step_notes={
        "scaled": "The article skips this step. With d_k = 1 it changes nothing, since √1 = 1.",
    },
    remarks=("The example has no embeddings and no W^O: it stops at the weighted sum (step 6).",),
)

EXAMPLES: dict[str, WorkedExample] = {ex.slug: ex for ex in (CAT_MAT, I_LOVE_NLP)}
