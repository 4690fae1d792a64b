"""A worked example's arithmetic, checked: the summary of every printed number that differs from the
true value, and one step's printed numbers beside the renderer's heatmap. The verdicts themselves
come from core.lesson.worked_examples; this module only lays them out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from core.lesson.worked_examples import StepCheck, WorkedExample
from dashboard.content.learn import AGREES, FROM_ITS_NUMBERS, SHORT_VERDICT, STEP_VIEW_LABELS, VERDICT

if TYPE_CHECKING:
    import pandas as pd


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _table_height(n_rows: int) -> int:
    """Every row visible, no inner scroll bar: 35 px a row plus the header."""
    return 35 * (n_rows + 1) + 3


def _fmt_printed(value: float, decimals: int | None) -> str:
    return f"{value:g}" if decimals is None else f"{value:.{decimals}f}"


def check_labels(
    check: StepCheck, query_tokens: tuple[str, ...], key_tokens: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """A checked matrix's row and column names: queries by keys, or queries by dimensions."""
    if check.step == "context":
        return list(query_tokens), [f"dim {j + 1}" for j in range(check.true.shape[1])]
    return list(query_tokens), list(key_tokens)


def check_table(check: StepCheck, rows: list[str], cols: list[str]) -> pd.DataFrame:
    """Every entry of one step: the article's number, the true one, the one its own numbers give."""
    import pandas as pd  # here, not at the top: the default page never needs it (0.2 s to import)

    flags = {f.index: f for f in check.flags}
    records = []
    for index in np.ndindex(check.true.shape):
        r, c = index
        flag = flags.get(index)
        records.append(
            {
                "entry": f"{rows[r]} → {cols[c]}",
                "article": _fmt_printed(float(check.printed[index]), check.decimals),
                "true": f"{check.true[index]:.4f}",
                "from its numbers": f"{check.from_printed[index]:.4f}",
                "verdict": SHORT_VERDICT[flag.kind] if flag else AGREES,
            }
        )
    return pd.DataFrame.from_records(records)


def summary_table(ex: WorkedExample, checks: tuple[StepCheck, ...]) -> pd.DataFrame:
    """Every printed number that differs from the true value, over all steps."""
    import pandas as pd  # see check_table

    names = {c.step: STEP_VIEW_LABELS[str(c.number)] for c in checks}  # short: the table must fit
    records = []
    for check in checks:
        rows, cols = check_labels(check, ex.query_tokens, ex.key_tokens)
        for f in check.flags:
            records.append(
                {
                    "step": names[check.step],
                    "entry": f"{rows[f.index[0]]} → {cols[f.index[1]]}",
                    "article prints": _fmt_printed(f.printed, check.decimals),
                    "true value": f"{f.true:.4f}",
                    "from its own numbers": f"{f.from_printed:.4f}",
                    "verdict": VERDICT[f.kind],
                }
            )
    return pd.DataFrame.from_records(records)


def draw_summary(ex: WorkedExample, checks: tuple[StepCheck, ...]) -> None:
    """The article's arithmetic, checked: how many printed numbers differ, and which."""
    n_flags = sum(len(c.flags) for c in checks)
    n_slips = sum(f.kind == "slip" for c in checks for f in c.flags)
    st.markdown("#### The article's arithmetic, checked")
    if not n_flags:
        st.markdown("Every printed number agrees with the true value.")
        return
    st.markdown(
        f"{_count(n_flags, 'printed number differs', 'printed numbers differ')} from the true "
        f"values: {_count(n_slips, 'is a slip', 'are slips')} made at that step, and "
        f"{_count(n_flags - n_slips, 'follows', 'follow')} from an earlier slip (right, given the "
        "article's own previous numbers). The column *from its own numbers* redoes each step from what "
        "the article printed just before, to tell the two apart."
    )
    summary = summary_table(ex, checks)
    st.dataframe(summary, hide_index=True, key="learn_summary", height=_table_height(len(summary)))


def draw_check(check: StepCheck, query_tokens: tuple[str, ...], key_tokens: tuple[str, ...]) -> None:
    """One step's printed numbers with their verdicts (beside the step's heatmap)."""
    if check.printed is None:
        st.info("The article prints no numbers for this step.", icon=":material/info:")
        return
    n_bad = len(check.flags)
    verdict = "all agree with the true values." if not n_bad else f"{n_bad} of {check.printed.size} differ."
    st.markdown(f"**The article's numbers:** {verdict}")
    # a static table: its cells wrap, so every column stays in view beside the heatmap
    st.table(check_table(check, *check_labels(check, query_tokens, key_tokens)), hide_index=True)
    st.caption(FROM_ITS_NUMBERS)
