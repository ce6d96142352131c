"""The report's headline: a few sentences per compared source, written from compare's verdicts
(reports/report/verdicts.py), never by hand. For each source (at most MOST_SOURCES):

1. what the noise was learnt from: with one launch on a side, that a difference between the
   sources cannot be told apart from the difference between two launches of one box, and which
   spread between launches the verdicts assume (the baseline window's, or the stated default);
2. the regressed (slower) and improved (faster) hypotheses, compare's strongest per primitive and
   direction (reports/compare/words.py headline_verdicts), named as compare names them, with their
   speedup and its interval (at its verdict's level: `at 99.3 %`); or that none is past the
   noise and the threshold;
3. every row together: the whole run (relative mode) or the one primitive, its speedup, interval
   and state;
4. the rows per state, and the smallest change one row alone, and every row of a primitive
   together, would have shown (detectable_change).
"""

# ruff: noqa: RUF002  (the multiplication sign in docstrings on purpose)

from __future__ import annotations

import statistics

import pandas as pd

from distbench.reports.compare.words import band_name, headline_verdicts, percent
from distbench.reports.report.uncertainty import TIMES, speedup_interval
from distbench.reports.report.verdicts import (
    COMPARE,
    DIRECTION,
    NOT_JUDGED,
    SourceVerdict,
    counts,
    speedup_of,
    state_text,
)
from distbench.stats.defaults import SOURCE as DEFAULT_SOURCE
from distbench.stats.engine import WHOLE_RUN
from distbench.stats.verdict import IMPROVED, REGRESSED, Judged

MOST_SOURCES = 3
"""Sources given sentences of their own."""
MOST_CALLS = 3
"""Hypotheses named per direction; the rest are counted."""


def speedup_words(judged: Judged, relative: bool) -> str:
    """'1.41× [1.20×, 1.63×] beyond the rest of the run': as every table prints a speedup
    (uncertainty.speedup_interval, capped at >10× and <0.1×)."""
    text = speedup_interval(*speedup_of(judged), judged.level)
    beyond = relative and judged.hypothesis.primitive != WHOLE_RUN
    return text + (" beyond the rest of the run" if beyond else "")


def noise_sentence(verdict: SourceVerdict, baseline: str) -> str:
    """Rule 1."""
    outcome = verdict.comparison.outcome
    base_launches, launches = verdict.launches()
    base_nights = outcome.nights[0]
    if outcome.learning:
        assumed = f"the stated default spread between launches: {DEFAULT_SOURCE}"
    elif verdict.comparison.baseline.window:
        assumed = (
            f"the spread between launches of {baseline}'s baseline window ({base_nights} nights, "
            f"{base_launches} launches)"
        )
    else:
        assumed = "the spread between the launches of both sides"
    if base_launches == 1 or launches == 1:
        who = (
            f"{baseline} and {verdict.source} are one launch each"
            if base_launches == launches == 1
            else f"{baseline if base_launches == 1 else verdict.source} is a single launch"
        )
        return (
            f"{who}: a difference between them cannot be told apart from the difference between "
            f"two launches of one box. The verdicts, on each row's "
            f"{verdict.comparison.metric.name}, assume {assumed}; they call only what stands "
            "out of it."
        )
    learning = f" ({outcome.learning})" if outcome.learning else ""
    return (
        f"{verdict.source} ({launches} launches, {outcome.nights[1]} night(s)) is judged against "
        f"{baseline} ({base_launches} launches, {base_nights} night(s)) launch by launch on "
        f"each row's {verdict.comparison.metric.name} ({metric_origin(verdict)}), "
        f"with {assumed}{learning}."
    )


def metric_origin(verdict: SourceVerdict) -> str:
    """Where the judged metric comes from, and what a gate on another one would do."""
    if verdict.comparison.metric.name == COMPARE.chosen_metric.name:
        return (
            "`distbench compare`'s default; a gate run with another --metric, as ci/nightly.sh's "
            "time_us_min, can call other rows: report --metric judges that one"
        )
    return "report --metric, as a gate run with that --metric judges it"


def called_sentence(verdict: SourceVerdict, baseline: str, rows: pd.DataFrame) -> str:
    """Rule 2."""
    box = verdict.comparison.outcome.box
    if box:
        return (
            f"Against {baseline}, {verdict.source} cannot tell: {box}; no primitive is judged "
            "(a change that moves most primitives, each its own way, reads the same)."
        )
    called = headline_verdicts(verdict.comparison)
    parts = []
    for state in (IMPROVED, REGRESSED):
        mine = [j for j in called if j.state == state]
        if not mine:
            continue
        named = [f"{band_name(j)}, {speedup_words(j, verdict.relative)}" for j in mine[:MOST_CALLS]]
        more = len(mine) - MOST_CALLS
        text = "; ".join(named) + (f"; and {more} more" if more > 0 else "")
        parts.append(f"{state} ({DIRECTION[state]}) for {text}")
    if parts:
        return f"Against {baseline}, {verdict.source} is " + "; and ".join(parts) + "."
    shown = ", ".join(f"{n} {state}" for state, n in counts(rows["state"]).items())
    return (
        f"Against {baseline}, no row or band of {verdict.source} is past the noise and the "
        f"{str(COMPARE.threshold.threshold).replace('%', ' %')} threshold ({shown})."
    )


def whole_sentence(verdict: SourceVerdict, baseline: str) -> str | None:
    """Rule 3."""
    judged, raw = verdict.whole()
    estimate = raw or judged
    if judged is None or estimate is None or estimate.shift is None or judged.hypothesis.is_row:
        return None
    what = (
        "Every primitive alike (the whole run)"
        if verdict.relative
        else f"Every row of {band_name(judged).split(',')[0]} together"
    )
    return (
        f"{what}: {verdict.source} runs at {speedup_words(estimate, False)} {baseline}'s speed: "
        f"{state_text(judged)}."
    )


def caught(share: float) -> str:
    """A detectable change as the report writes it: '31 %', or '>10×' as its speedups are capped
    (compare's terminal spells it '>10x', in ASCII)."""
    return percent(share).replace("x", TIMES)


def seen_sentence(verdict: SourceVerdict, rows: pd.DataFrame) -> str:
    """Rule 4."""
    shown = ", ".join(f"{n} {state}" for state, n in counts(rows["state"]).items())
    judged = rows[rows["state"] != NOT_JUDGED]
    text = f"Of {len(rows)} compared rows: {shown}"
    if judged.empty:
        return text + "."
    if verdict.comparison.outcome.box:
        return text + "; what a row could see is not vouched for tonight (the box changed)."
    alone = judged["detectable"].astype(float).tolist()
    text += (
        f"; one row alone would catch a slowdown from {caught(min(alone))} "
        f"(median {caught(statistics.median(alone))})"
    )
    together = [
        j.detectable
        for j in verdict.comparison.outcome.bands
        if not j.hypothesis.band and j.hypothesis.primitive != WHOLE_RUN
    ]
    if together:
        text += f", every row of a primitive together from {caught(min(together))}"
    return text + " (80 % power)."


def write_headline(verdicts: dict[str, SourceVerdict], baseline: str, rows: pd.DataFrame) -> str:
    """The headline (module docstring). `rows`: every compared row of the report (comm and DDP,
    reports/report/verdicts.annotate), with its `source` and `state`."""
    sentences: list[str] = []
    for source, verdict in list(verdicts.items())[:MOST_SOURCES]:
        mine = rows[rows["source"].astype(str) == source]
        if mine.empty:
            continue
        sentences.append(noise_sentence(verdict, baseline))
        sentences.append(called_sentence(verdict, baseline, mine))
        whole = whole_sentence(verdict, baseline)
        sentences += [whole] if whole else []
        sentences.append(seen_sentence(verdict, mine))
    return " ".join(sentences)
