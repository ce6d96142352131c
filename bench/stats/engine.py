"""One comparison, judged: rows -> the declared family -> each hypothesis's shift -> BH -> states.

compare, the nightly gate and report all call `judge_family`, so they cannot disagree on a row.

Relative and absolute. A shared box moves every row of a launch together (its load, its clock);
a code change moves one primitive's rows, or a band of them. With rows of MIN_RELATIVE or more
primitives in a comparison, each hypothesis of primitive p is tested on its rows' values *beyond
the rest of the run*: from each launch value the launch's common level is taken out, the median
over the other primitives of their mean deviation from their own rows' means (`common_levels`,
leave one primitive out, so p's own regression cannot hide itself, one vote per primitive). What
moves every primitive alike is then one hypothesis of its own, "the whole run", tested on the
launches' common level itself. With fewer primitives every hypothesis is absolute.

When most primitives move at once, each its own way, the box changed under the window: the night
cannot tell (box.py), and only the whole run keeps its verdict.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from distbench.stats.arrays import (
    WHOLE_RUN,
    band_floors,
    hypothesis_shifts,
    judged_outcome,
    member_max,
)
from distbench.stats.box import box_changed, split, unjudged
from distbench.stats.common import MIN_RELATIVE, common_level
from distbench.stats.components import LaunchValue, Prior, fit_prior
from distbench.stats.defaults import DEFAULT_DF
from distbench.stats.family import Hypothesis, build_family, primitive_of
from distbench.stats.matrices import SideMatrix, membership, night_index
from distbench.stats.nested import summarize
from distbench.stats.verdict import Judged

BAND_PRIOR_DF = DEFAULT_DF
"""While the baseline learns, a band's members' variances (as if perfectly correlated, the
widest a mean of them can be) enter as a prior worth as many launches as its members' default
priors (defaults.DEFAULT_DF), so a band's interval is never wider than its widest row's; once it
has learnt, a band's own launches alone say how far its mean scatters (no prior: the members'
correlation is what the band's launches measure). 2 before 2026-12-05: a new user's report gave
every size of all_gather together [0.008x, 141x] beside rows of [0.06x, 25x]; bands of one
launch a side covered 100 % either way (99.8-100 % at 4, ci/bench_stats_report.py)."""
MIN_PRIOR_ROWS = 3
"""Rows a prior is fitted from (components.fit_prior): fewer, and the group borrows from its
whole kind, then falls back to the default."""


@dataclass(frozen=True)
class RowInput:
    """One matched row of a comparison."""

    key: Mapping[str, str]
    base: tuple[LaunchValue, ...]
    current: tuple[LaunchValue, ...]
    floor: float = 0.0
    """The threshold floor (share) a change must pass as well."""
    default: Prior | None = None
    """The stated default prior for this row (metric, size band, its own within-launch part);
    used while the baseline is learning and where no prior can be fitted."""


@dataclass(frozen=True, kw_only=True)
class Drift:
    """How far (an sd, in log terms) a hypothesis's level may move between a baseline's nights
    and tonight beyond what the baseline's own nights show: the floor of the night part of the
    noise. Measured between recording groups hours apart on the development box
    (docs/gate.md#drift); 0 trusts the window's own nights alone."""

    row: float = 0.0
    band: float = 0.0
    broad: float = 0.0
    """A primitive's every row."""
    whole: float = 0.0
    """The whole run."""

    def of(self, hypothesis: Hypothesis) -> float:
        if hypothesis.primitive == WHOLE_RUN:
            return self.whole
        if hypothesis.is_row:
            return self.row
        return self.broad if not hypothesis.band else self.band


@dataclass(frozen=True, kw_only=True)
class Settings:
    alpha: float = 0.05
    """BH's q over the whole family."""
    broad_share: float = 0.5
    """The share of alpha on the broad hypotheses (family.is_broad; weighted BH)."""
    min_nights: int = 5
    """Nights the baseline must hold before its noise is known (else: cannot tell, learning)."""
    relative: bool = True
    """Test hypotheses beyond the rest of the run with rows of MIN_RELATIVE+ primitives."""
    drift: Drift = field(default_factory=lambda: Drift())
    """The floor of the night part of the noise, per kind of hypothesis (nested.py)."""


@dataclass
class Outcome:
    rows: list[Judged]
    """One per RowInput, in order (their row hypotheses)."""
    bands: list[Judged]
    """Every band (and the whole run, relative mode), in family order."""
    family_size: int
    nights: tuple[int, int]
    """Distinct nights on the baseline and the current side."""
    learning: str
    """'' once the noise is known, else why not ('learning the noise: 3 of 5 nights')."""
    relative: bool
    notes: list[str] = field(default_factory=list)
    box: str = ""
    """'' for a night judged as usual; else why no primitive could be judged (box.py: 'the box
    changed: 6 of 7 primitives moved beyond the window at once ...')."""
    split: dict[str, list[str]] = field(default_factory=dict)
    """On a night judged as usual on which most primitives were named as a change of code names
    them, those read slower and those read faster (box.split); else {}."""


def size_band(key: Mapping[str, str]) -> str:
    """Rows of one primitive whose noise is alike: small (< 64 KiB), mid (< 4 MiB), large."""
    text = key.get("size_bytes", "")
    if not text.isdigit():
        return "none"
    size = int(text)
    return "small" if size < 64 * 1024 else "mid" if size < 4 * 1024 * 1024 else "large"


def nights_of(rows: Sequence[RowInput], side: str) -> int:
    return len({v.night for row in rows for v in getattr(row, side)})


def common_levels(
    base: SideMatrix, current: SideMatrix, primitives: np.ndarray, exclude: str
) -> tuple[np.ndarray, np.ndarray]:
    """Each launch's common level on both sides (common.common_level): each row's deviation is
    its value minus its mean over every launch of both sides."""
    both = np.vstack([base.y, current.y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-nan slices: a launch with no row
        deviation = both - np.nanmean(both, axis=0)
    levels = common_level(deviation, primitives, exclude)
    return levels[: len(base.y)], levels[len(base.y) :]


def row_priors(
    keys: Sequence[Mapping[str, str]], spreads: Sequence[tuple[float, int]],
    defaults: Sequence[Prior], learning: bool,
) -> list[Prior]:  # fmt: skip
    """Each row's prior: its default while learning; else the empirical-Bayes fit over the
    rows of its primitive and size band (else of its kind), else its default."""
    if learning:
        return list(defaults)
    groups: dict[tuple[str, str], list[int]] = {}
    kinds: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault((primitive_of(key), size_band(key)), []).append(i)
        kinds.setdefault(key.get("kind", ""), []).append(i)
    fitted: dict[tuple[int, ...], Prior | None] = {}

    def fit(members: list[int], what: str) -> Prior | None:
        if tuple(members) not in fitted:
            usable = [spreads[i] for i in members if spreads[i][1] > 0]
            fitted[tuple(members)] = (
                fit_prior([v for v, _d in usable], [d for _v, d in usable],
                          f"estimated from {len(usable)} rows of {what} in this comparison")
                if len(usable) >= MIN_PRIOR_ROWS else None
            )  # fmt: skip
        return fitted[tuple(members)]

    priors = []
    for i, key in enumerate(keys):
        primitive, band = primitive_of(key), size_band(key)
        found = fit(groups[(primitive, band)], f"{primitive.split(':')[-1]}, {band} sizes")
        priors.append(found or fit(kinds[key.get("kind", "")], "this kind") or defaults[i])
    return priors


@lru_cache(maxsize=64)
def cached_family(keys: tuple[tuple[tuple[str, str], ...], ...]) -> tuple[Hypothesis, ...]:
    """build_family of these row keys, once (a replay judges thousands of nights of one family)."""
    return tuple(build_family([dict(k) for k in keys]))


def judge_family(
    rows: Sequence[RowInput], settings: Settings, fallback: Prior,
    floor_of_band: Callable[[Sequence[float]], float] = max,
) -> Outcome:  # fmt: skip
    """Judge every declared hypothesis of the comparison (module docstring)."""
    return judge_matrices(
        [row.key for row in rows], SideMatrix.of(rows, "base"), SideMatrix.of(rows, "current"),
        [row.floor for row in rows], [row.default or fallback for row in rows], settings,
        fallback, floor_of_band,
    )  # fmt: skip


def judge_matrices(
    keys: Sequence[Mapping[str, str]], base: SideMatrix, current: SideMatrix,
    row_floors: Sequence[float], defaults: Sequence[Prior], settings: Settings, fallback: Prior,
    floor_of_band: Callable[[Sequence[float]], float] = max,
) -> Outcome:  # fmt: skip
    """judge_family on launch values already laid out as matrices (a replay's fast path)."""
    nights = (len(set(base.nights)), len(set(current.nights)))
    if not keys:
        return Outcome([], [], 0, nights, "", False)
    learning = (
        f"learning the noise: {nights[0]} of {settings.min_nights} nights"
        if nights[0] < settings.min_nights
        else ""
    )
    primitives = np.array([primitive_of(k) for k in keys])
    relative = settings.relative and len(set(primitives.tolist())) >= MIN_RELATIVE
    family = list(cached_family(tuple(tuple(k.items()) for k in keys)))
    member = membership(family, len(keys))
    sides = [base, current]
    if relative:
        sides = [SideMatrix(m.launches, m.nights, m.y.copy(), m.within) for m in sides]
        for primitive in set(primitives.tolist()):
            own = primitives == primitive
            levels = common_levels(base, current, primitives, primitive)
            for m, level in zip(sides, levels, strict=True):
                m.y[:, own] -= level[:, None]
        whole = common_levels(base, current, primitives, exclude="")
        family.append(Hypothesis(WHOLE_RUN, tuple(range(len(keys))), (("whole", "run"),)))
        for m, level in zip(sides, whole, strict=True):  # the whole run: one more "row"
            m.y = np.hstack([m.y, level[:, None]])
            m.within = np.hstack([m.within, np.full((len(level), 1), np.nan)])
        member = membership(family, len(keys) + 1)  # the whole run: the extra row
    base_sum, cur_sum = (summarize(m.y, m.within, night_index(m.nights), member) for m in sides)
    data_df = base_sum.within_df + cur_sum.within_df
    with np.errstate(invalid="ignore", divide="ignore"):
        data_var = (base_sum.within_squares + cur_sum.within_squares) / data_df
    spreads = [(float(data_var[j]), int(data_df[j])) for j in range(len(keys))]
    priors = row_priors(keys, spreads, defaults, bool(learning))
    prior_var = np.array([p.variance for p in priors])
    band_var = member_max(family, prior_var)
    if relative:
        band_var[-1] = prior_var.max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the whole run has no trial part
        trial = np.nanmean(np.vstack([base_sum.trial_part, cur_sum.trial_part]), axis=0)
    band_prior = (band_var, BAND_PRIOR_DF if learning else 0.0,
                  "its rows' variances, as if moving together")  # fmt: skip
    shifts = hypothesis_shifts(
        family, priors, band_prior, base_sum, cur_sum, (data_var, data_df), trial,
        [settings.drift.of(h) for h in family],
    )  # fmt: skip
    floors = band_floors(family, row_floors, floor_of_band)
    outcome = judged_outcome(family, shifts, floors, settings, learning, nights, relative)
    if relative and not learning:
        judged, compared = [*outcome.rows, *outcome.bands], len(set(primitives.tolist()))
        reason = box_changed(judged, compared)
        if reason:
            outcome.rows, outcome.bands = unjudged(outcome.rows), unjudged(outcome.bands)
            outcome.box = reason
        else:
            outcome.split = split(judged, compared)
    return outcome
