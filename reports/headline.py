"""The report's headline: 3-5 sentences written from the verdicts of the compared rows
(uncertainty.judge_speedups), never by hand. Each sentence comes from one rule:

1. per source and direction, the cases called faster or slower, with their sizes and the range
   of their 95 % intervals ("cluster-b is faster than cluster-a for all_reduce ≥ 1M at 3 ranks
   (latency) (1.4–2.3×)"), or that no row differs;
2. how many of the other rows are indistinguishable at this precision, and how many untested;
3. what precision more data would buy: the trials per side that resolve 10 % within a launch,
   and whether the scatter between rows of one launch (tau) is beyond what trials remove;
4. the false alarms the rank test alone would give by chance, so a reader can weigh the calls.
"""

# ruff: noqa: RUF001, RUF002  (the multiplication sign and en dashes on purpose)

from __future__ import annotations

import math

import pandas as pd

from distbench.parse import format_size
from distbench.reports.uncertainty import (
    FASTER,
    REPORT_RULE,
    SAME,
    SLOWER,
    UNTESTED,
    trials_to_resolve,
)

MOST_CASES = 3
"""Cases named per sentence; the rest are counted."""
MOST_SOURCES = 3
"""Sources given a sentence of their own (the headline stays at most 5 sentences)."""
RESOLVE = 0.10
"""The change the precision sentence is about (10 %)."""


def size_span(sizes: list[int], all_sizes: list[int]) -> str:
    """'≥ 1M' when the sizes are the case's largest, '≤ 16K' its smallest, 'at every size',
    '1M–4M' a run of adjacent ones, else a list."""
    sizes, all_sizes = sorted(set(sizes)), sorted(set(all_sizes))
    if sizes == all_sizes:
        return "at every size"
    if len(sizes) == 1:
        return f"at {format_size(sizes[0])}"
    if sizes == all_sizes[-len(sizes) :]:
        return f"≥ {format_size(sizes[0])}"
    if sizes == all_sizes[: len(sizes)]:
        return f"≤ {format_size(sizes[-1])}"
    start = all_sizes.index(sizes[0])
    if sizes == all_sizes[start : start + len(sizes)]:
        return f"{format_size(sizes[0])}–{format_size(sizes[-1])}"
    return "at " + ", ".join(format_size(s) for s in sizes)


def case_phrase(rows: pd.DataFrame, all_rows: pd.DataFrame) -> str:
    """'all_reduce ≥ 1M at 3 ranks (latency) (1.4–2.3×)': one case's called rows."""
    first = rows.iloc[0]
    what = str(first.get("primitive", "ddp"))
    if rows.get("size_bytes", pd.Series(dtype=float)).notna().all() and "size_bytes" in rows:
        sizes = rows["size_bytes"].astype(int).tolist()
        what += " " + size_span(sizes, all_rows["size_bytes"].astype(int).tolist())
    if "strategy" in rows and rows["strategy"].notna().all():
        what += f" ({', '.join(sorted(rows['strategy'].astype(str).unique()))})"
    what += f" at {int(first['world_size'])} ranks"
    if "mode" in rows and rows["mode"].notna().all():
        what += f" ({first['mode']})"
    if len(rows) < len(all_rows):  # e.g. one dtype of two: say how many rows
        what += f" ({len(rows)} of {len(all_rows)} rows)"
    return f"{what} ({rows['low'].min():.2g}–{rows['high'].max():.2g}×)"


def called_sentence(source: str, baseline: str, rows: pd.DataFrame, case: list[str]) -> str:
    """Rule 1 for one source."""
    parts = []
    for verdict in (FASTER, SLOWER):
        called = rows[rows["verdict"] == verdict]
        if called.empty:
            continue
        cases = called.groupby(case, sort=True, dropna=False)
        every = dict(iter(rows.groupby(case, sort=True, dropna=False)))
        phrases = [case_phrase(group, every[key]) for key, group in list(cases)[:MOST_CASES]]
        more = cases.ngroups - MOST_CASES
        text = "; ".join(phrases) + (f"; and {more} more case(s)" if more > 0 else "")
        parts.append(f"{verdict} for {text}")
    if not parts:
        return (
            f"No compared row shows {source} faster or slower than {baseline} beyond this "
            "report's noise."
        )
    return f"{source} is " + ", and ".join(parts) + f" than {baseline}."


def precision_sentence(rows: pd.DataFrame) -> str:
    """Rule 3: trials to resolve RESOLVE, and whether the launch scatter allows it at all."""
    needed = trials_to_resolve(rows, RESOLVE)
    tested = rows[rows["verdict"] != UNTESTED]
    if needed is None or tested.empty:
        return (
            f"Collect at least {REPORT_RULE.min_samples} trials (DDP: windows) per run so that "
            "rows can be tested."
        )
    tau = float(tested["tau"].median())
    text = (
        f"Within a launch, about {needed} trials per run would resolve a "
        f"{RESOLVE * 100:.0f} % difference"
    )
    if Z_RESOLVE * tau >= math.log1p(RESOLVE):
        text += (
            f"; but rows of one launch scatter by about {math.expm1(tau) * 100:.0f} % beyond "
            "their samples, which more trials do not shrink: compare launches on a quieter "
            "machine, or larger differences"
        )
    return text + "."


Z_RESOLVE = 1.959964
"""tau resolves a change when the 95 % half-width it alone gives is below it."""


def write_headline(judged: pd.DataFrame, baseline: str, case: list[str]) -> str:
    """The headline for every compared row (comm and DDP rows together, one frame; `case`: the
    columns that name a case apart from its size)."""
    if judged.empty:
        return ""
    sentences = [
        called_sentence(str(source), baseline, rows, case)
        for source, rows in judged.groupby("source", sort=True)
    ][:MOST_SOURCES]
    called = judged["verdict"].isin((FASTER, SLOWER)).sum()
    same = int((judged["verdict"] == SAME).sum())
    untested = int((judged["verdict"] == UNTESTED).sum())
    rest = f"{'The other' if called else 'All'} {same} of {len(judged)} compared rows are "
    if called and not same:
        rest = "No other compared row is "
    rest += "indistinguishable at this precision (95 % intervals, compare's rank test)"
    if untested:
        rest += (
            f"; {untested} could not be tested (fewer than {REPORT_RULE.min_samples} "
            "independent samples a side)"
        )
    sentences.append(rest + ".")
    sentences.append(precision_sentence(judged))
    return " ".join(sentences)
