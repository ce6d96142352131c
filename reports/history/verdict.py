"""history's verdicts: a change point with its levels on each side, and each case's state over
the last runs in the four words of distbench.stats.verdict (regressed, improved, no change seen
with what it would have caught, cannot tell)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from distbench.reports.history.detect import Series
from distbench.reports.history.load import RunInfo
from distbench.stats import verdict as verdict_words
from distbench.stats.changepoint import MIN_SIZE, SeriesChanges
from distbench.stats.changepoint_reach import detectable_step, together_step
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, NO_CHANGE, REGRESSED


@dataclass(frozen=True)
class ChangePoint:
    case: str
    kind: str
    metric: str
    position: int
    """Index (by start time) of the first run after the change."""
    run: RunInfo
    before: float
    """Geometric mean of the nights since the previous change point (or the series' start);
    relative mode: of the nights' values with the run's common level taken out (its level at
    the run's mean state of the box; detect.relative_series)."""
    after: float
    """... and of the nights up to the next one (or the series' end)."""
    change: float
    """after / before - 1 (> 0: slower)."""
    p_value: float
    """Of the largest step statistic of the part it was found in, under that part's null; or,
    `together`, of its step at the night its primitive's rows stepped together."""
    q_value: float
    """The series' Benjamini-Hochberg q over the history's series."""
    nights_before: int
    nights_after: int
    together: bool = False
    """Found where its primitive's rows stepped together (distbench.stats.changepoint_group)."""
    span: tuple[int, int] = (-1, -1)
    """Positions of the first and last run its step's first night may be at, 95 %
    (distbench.stats.changepoint_where; a row found with its group: the group's)."""

    @property
    def span_text(self) -> str:
        """'-3..+2': the span in runs before and after its run; '0' where it is that run."""
        first, last = (p - self.position for p in self.span)
        return "0" if first == last == 0 else f"{first:+d}..{last:+d}"

    @property
    def state(self) -> str:
        """regressed (slower) or improved."""
        return REGRESSED if self.change > 0 else IMPROVED


@dataclass(frozen=True)
class Verdict:
    """One case over the last `recent` runs, in the four states of distbench.stats.verdict."""

    case: str
    kind: str
    metric: str
    state: str
    reason: str
    """What it saw or why it cannot tell: 'since nightly-0041: +21 %', 'too few nights: 4 of
    6' (since the series' start; 'too few nights since the last change' after one), 'would
    catch nothing below 10x after 3 nights, would catch >= 14 % after 7 nights'."""
    detectable: float
    """The smallest step it would catch MIN_SIZE nights after it (inf: none)."""
    together: float = math.inf
    """The same, where every row of its primitive takes the step at once: the smaller of that
    and together_step (its own test may find it too); inf where neither can."""
    later: float = math.inf
    """The same, `recent` nights after the step (inf: nothing, or its part is too short to ask)."""
    older: bool = False
    """Whether its last change point is older than the runs its verdict looks back over (its
    reason names it: the change table lists it, its state is of the last runs)."""

    @property
    def text(self) -> str:
        return f"{self.state}: {self.reason}" if self.reason else self.state


def change_point(
    series: Series, judged: SeriesChanges, index: int, runs: list[RunInfo]
) -> ChangePoint:
    """The change point at series position `index`: its levels up to its neighbours."""
    bounds = [0, *(f.index for f in judged.found), len(series.values)]
    at = bounds.index(index)
    logs = series.judged
    before, after = logs[bounds[at - 1] : index], logs[index : bounds[at + 1]]
    found = next(f for f in judged.found if f.index == index)
    position = int(series.runs[index])
    first, last = found.nights or (index, index)
    return ChangePoint(
        case=series.case,
        kind=series.kind,
        metric=series.metric,
        position=position,
        run=runs[position],
        before=float(np.exp(before.mean())),
        after=float(np.exp(after.mean())),
        change=float(np.exp(after.mean() - before.mean()) - 1),
        p_value=found.p_value,
        q_value=judged.q_value,
        nights_before=len(before),
        nights_after=len(after),
        together=found.together,
        span=(int(series.runs[first]), int(series.runs[last])),
    )


def verdict(
    series: Series, judged: SeriesChanges, runs: list[RunInfo], recent: int, floor: float
) -> Verdict:
    """A case's state over the last `recent` runs: regressed or improved when one of its change
    points starts there; cannot tell when it was not measured in the last run, its nights since
    the last change are too few to show one, or its test would show no step below 10x there
    (`blind_text`); else no change seen, with what it would have caught. A change point older
    than the last `recent` runs is named in the reason of a verdict that is not about it."""
    first_recent = len(runs) - recent
    found = [(int(series.runs[f.index]), f) for f in judged.found]
    seen = [(position, f) for position, f in found if position >= first_recent]
    detectable = detectable_step(judged, MIN_SIZE, floor)
    name = (series.case, series.kind, series.metric)
    for state, slower in ((REGRESSED, True), (IMPROVED, False)):
        hits = [(p, f) for p, f in seen if (f.effect > 0) == slower]
        if hits:
            position, _f = hits[-1]
            cp = change_point(series, judged, _f.index, runs)
            reason = f"from {runs[position].name}{span_words(cp, runs)}: {cp.change * 100:+.0f} %"
            reason += " (its primitive's rows stepped with it)" if cp.together else ""
            return Verdict(*name, state, reason, detectable)
    older = found[-1][1] if found and not seen else None
    before = older_text(series, judged, runs, older.index, recent) if older else ""
    if int(series.runs[-1]) != len(runs) - 1:
        reason = f"not measured since {runs[int(series.runs[-1])].name}"
        return Verdict(*name, CANNOT_TELL, before + reason, detectable, older=bool(older))
    since = len(series.values) - judged.last_start
    after = " since the last change" if judged.found else ""
    if since < 2 * MIN_SIZE:
        reason = f"too few nights{after}: {since} of {2 * MIN_SIZE}"
        reason = before + reason + trend_text(series, recent, floor)
        return Verdict(*name, CANNOT_TELL, reason, detectable, older=bool(older))
    asked = recent > MIN_SIZE and recent <= since - MIN_SIZE
    later = detectable_step(judged, recent, floor) if asked else math.inf
    together = min(together_step(judged, MIN_SIZE, floor), detectable)  # either way finds it
    if not any(verdict_words.sees(d) for d in (detectable, later, together)):
        reason = before + blind_text(since, after, recent if asked else 0)
        reason += trend_text(series, recent, floor)
        return Verdict(*name, CANNOT_TELL, reason, detectable, older=bool(older))
    reason = before + catch_text(detectable, MIN_SIZE)
    if asked:
        reason += ", " + catch_text(later, recent)
    if together < detectable:
        reason += f"; every {series.primitive} row at once: " + catch_text(
            together, MIN_SIZE
        ).removeprefix("would catch ")
    reason += trend_text(series, recent, floor)
    return Verdict(*name, NO_CHANGE, reason, detectable, together, later, bool(older))


def blind_text(nights: int, since: str, recent: int) -> str:
    """Why a case whose test would see nothing cannot tell: '12 nights are too few to see any
    step: would catch nothing below 10x after 3 nights, nor after 7'. Its test runs on ranks
    and pays for the night it picks and for the history's family: in few nights even the
    largest step's statistic stays below what it must pass (docs/history.md)."""
    nor = f", nor after {recent}" if recent else ""
    return (
        f"{nights} nights{since} are too few to see any step: "
        f"{verdict_words.catch_text(math.inf)} after {MIN_SIZE} nights{nor}"
    )


def older_text(
    series: Series, judged: SeriesChanges, runs: list[RunInfo], index: int, recent: int
) -> str:
    """'before the last 7 runs: regressed +48 % from nightly-0010; ': a case's last change
    point, older than the runs its verdict looks back over (the change table lists it)."""
    cp = change_point(series, judged, index, runs)
    return (
        f"before the last {recent} runs: {cp.state} {cp.change * 100:+.0f} % from "
        f"{cp.run.name}{span_words(cp, runs)}; "
    )


def span_words(cp: ChangePoint, runs: list[RunInfo]) -> str:
    """' (95 %: nightly-0037 to nightly-0042)': the runs its step may have started in, where
    that is more than its own run; else ''."""
    first, last = cp.span
    if first == last:
        return ""
    return f" (95 %: {runs[first].name} to {runs[last].name})"


def trend_text(series: Series, recent: int, floor: float) -> str:
    """For a whole-run series with no step: '; its level moved +78 % from its first 7 nights to
    its last 7' when that is past `floor`, else ''. The whole run is judged at its own drift,
    which a steady trend of every case looks like, so no step is found there; the verdict still
    says how far its level went (a description, not a test)."""
    if not series.whole_run or len(series.values) < 2:
        return ""
    logs = series.judged
    k = max(1, min(recent, len(logs) // 2))
    moved = math.expm1(float(logs[-k:].mean() - logs[:k].mean()))
    if abs(moved) < floor:
        return ""
    first, last = ("night", "night") if k == 1 else (f"{k} nights", str(k))
    return f"; its level moved {moved * 100:+.0f} % from its first {first} to its last {last}"


def catch_text(detectable: float, after: int) -> str:
    """'would catch >= 34 % after 3 nights' (distbench.stats.verdict.catch_text's words)."""
    return f"{verdict_words.catch_text(detectable)} after {after} nights"
