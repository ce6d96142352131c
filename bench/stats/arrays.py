"""Every hypothesis of one comparison judged at once: its shift (nested.py's model), p-values,
Benjamini-Hochberg, state and detectable change, as array operations over the family.

A 10,000-row comparison declares ~16,000 hypotheses and a report judges it twice; one hypothesis
at a time (Prior.squeeze, nested.parts, shift.shift_of, Shift.p_slower, Shift.detectable) that was
~2 s of the report's CPU. The arithmetic here is theirs, operation for operation and in the same
order, on float64 arrays (IEEE: the same numbers to the last bit), and scipy's t functions are the
same ufuncs on arrays; only exp and log1p stay in Python's math, as Shift's own methods call them.
tests (staged: test_judge_arrays) compare both on random families, row by row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from distbench.stats.components import MAX_PRIOR_DF, Prior
from distbench.stats.family import Hypothesis, bh_adjust, weights
from distbench.stats.nested import SideSummary
from distbench.stats.shift import POWER, Shift, share_of
from distbench.stats.verdict import IMPROVED, REGRESSED, Judged, decide_state, selected_level

if TYPE_CHECKING:
    from distbench.stats.engine import Outcome, Settings

WHOLE_RUN = "*:whole run"
"""The primitive name of the whole-run hypothesis (relative mode)."""


def member_max(family: Sequence[Hypothesis], values: np.ndarray) -> np.ndarray:
    """Each hypothesis's largest value of `values` (one per row) over its members (nan if any is
    nan, as ndarray.max)."""
    lengths = np.fromiter((len(h.members) for h in family), int, len(family))
    flat = np.fromiter(chain.from_iterable(h.members for h in family), int, int(lengths.sum()))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.maximum.reduceat(values[flat], starts)


def band_floors(
    family: Sequence[Hypothesis], row_floors: Sequence[float],
    floor_of_band: Callable[[Sequence[float]], float],
) -> list[float]:  # fmt: skip
    """floor_of_band of each hypothesis's rows' floors: the built-in max at once (its value
    where no floor is nan), any other rule one hypothesis at a time."""
    floors = np.asarray(row_floors, dtype=float)
    if floor_of_band is not max or np.isnan(floors).any() or not len(family):
        return [floor_of_band([row_floors[i] for i in h.members]) for h in family]
    return member_max(family, floors).tolist()


def hypothesis_shifts(
    family: Sequence[Hypothesis], priors: Sequence[Prior],
    band_prior: tuple[np.ndarray, float, str],
    base: SideSummary, current: SideSummary, data: tuple[np.ndarray, np.ndarray],
    trial: np.ndarray, drifts: Sequence[float],
) -> list[Shift | None]:  # fmt: skip
    """Each hypothesis's Shift, None without launches on both sides: engine.judge_matrices' loop
    (Prior.squeeze, the trial floor, nested.parts, shift.shift_of) over arrays. `band_prior`:
    the variance, df and source of a band's prior; `data`: the launches' own variance and df."""
    band_var, band_df, band_source = band_prior
    data_var, data_df = data
    is_row = np.array([h.is_row and h.primitive != WHOLE_RUN for h in family], dtype=bool)
    first = np.array([h.members[0] for h in family], dtype=int)
    row_var = np.array([p.variance for p in priors], dtype=float)
    row_df = np.array([p.df for p in priors], dtype=float)
    p_var = np.where(is_row, row_var[first], band_var)
    p_df = np.where(is_row, row_df[first], band_df)
    var, df = data_var.astype(float), np.floor(data_df).astype(float)  # int(data_df[h])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # Prior.squeeze, branch by branch, then the trial floor
        merged_df = p_df + df
        merged = (p_df * p_var + df * var) / merged_df
        prior_only = (df <= 0) | ~np.isfinite(var)
        sigma2 = np.where(
            prior_only,
            p_var,
            np.where(p_df <= 0, var, np.where(p_df >= MAX_PRIOR_DF, p_var, merged)),
        )
        sigma_df = np.where(prior_only, p_df, np.where(
            p_df <= 0, df, np.where(p_df >= MAX_PRIOR_DF, p_df, merged_df)))  # fmt: skip
        sigma2 = np.where(np.isfinite(trial) & (trial > sigma2), trial, sigma2)
        # nested.parts
        k_b, k_c = base.nights.astype(float), current.nights.astype(float)
        between_df = k_b - 1 + k_c - 1
        mean_inverse = (base.inverse_launches + current.inverse_launches) / (k_b + k_c)
        drift2 = np.array([d**2 for d in drifts], dtype=float)
        ms = (base.between_squares + current.between_squares) / between_df
        estimate = ms - sigma2 * mean_inverse
        estimate = np.where(estimate > 0.0, estimate, 0.0)
        estimated = (between_df > 0) & (estimate > drift2)
        tau2 = np.where(estimated, estimate, drift2)
        tau_df = np.where(estimated, between_df, np.inf)
        launch_weight = base.inverse_launches / k_b**2 + current.inverse_launches / k_c**2
        night_weight = 1 / k_b + 1 / k_c
        # Parts.variance, Parts.df (Satterthwaite), shift_of
        terms = [(tau2 * night_weight, tau_df), (sigma2 * launch_weight, sigma_df)]
        total = terms[0][0] + terms[1][0]
        spread = sum(
            (np.where((d > 0) & np.isfinite(d) & (t > 0), t * t / d, 0.0) for t, d in terms),
            np.zeros(len(family)),
        )
        satterthwaite = np.where(spread > 0, total * total / spread, np.inf)
        variance = tau2 * night_weight + sigma2 * launch_weight
        se = np.where(variance > 0, np.sqrt(np.where(variance > 0, variance, 0.0)), 0.0)
        t_df = np.where(satterthwaite > 0, satterthwaite, np.inf)
        effect = current.mean - base.mean
    shown = (base.launches > 0) & (current.launches > 0)
    rows = zip(first.tolist(), is_row.tolist(), strict=True)
    sources = [priors[i].source if row else band_source for i, row in rows]
    columns = zip(
        shown.tolist(), effect.tolist(), se.tolist(), t_df.tolist(), sigma2.tolist(),
        trial.tolist(), base.launches.tolist(), current.launches.tolist(), sources,
        df.tolist(), tau2.tolist(), base.nights.tolist(), current.nights.tolist(), strict=True,
    )  # fmt: skip
    return [
        Shift(e, s, d, v, w, int(nb), int(nc), src, int(ddf), tau, int(kb), int(kc))
        if ok else None
        for ok, e, s, d, v, w, nb, nc, src, ddf, tau, kb, kc in columns
    ]  # fmt: skip


def judged_outcome(
    family: list[Hypothesis], shifts: list[Shift | None], floors: list[float],
    settings: Settings, learning: str, nights: tuple[int, int], relative: bool,
) -> Outcome:  # fmt: skip
    """BH over the family in both directions, then each hypothesis's state (Shift.p_slower,
    p_faster and detectable over arrays)."""
    from distbench.stats.engine import Outcome

    count = len(family)
    known = [s for s in shifts if s is not None]
    effect = np.array([s.effect for s in known], dtype=float)
    se = np.array([s.se for s in known], dtype=float)
    df = np.array([s.df for s in known], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, effect / np.where(se > 0, se, 1.0), np.copysign(np.inf, effect))
    slower, faster = iter(special.stdtr(df, -t).tolist()), iter(special.stdtr(df, t).tolist())
    p_slow = [next(slower) if s else 1.0 for s in shifts]
    p_fast = [next(faster) if s else 1.0 for s in shifts]
    weight = weights(family, settings.broad_share)
    q_slow, q_fast = bh_adjust(p_slow, weight), bh_adjust(p_fast, weight)
    alpha_own = [settings.alpha * w / max(1, count) for w in weight]
    at = [i for i, s in enumerate(shifts) if s is not None]
    own = np.array([alpha_own[i] for i in at], dtype=float)
    critical = iter(special.stdtrit(df, 1 - own).tolist())
    reach = iter(special.stdtrit(df, POWER).tolist())
    judged = []
    for i, (hypothesis, shift) in enumerate(zip(family, shifts, strict=True)):
        detectable = noise_reach = math.inf
        if shift is not None:
            quantile, power = next(critical), next(reach)
            if shift.se > 0 and math.isfinite(shift.se):
                ends = max(math.log1p(floors[i]), quantile * shift.se) + power * shift.se
                detectable = share_of(ends)
                noise_reach = share_of((quantile + power) * shift.se)
            elif shift.se == 0:  # no noise at all: it sees every change past the floor
                noise_reach = 0.0
        state, reason = decide_state(
            shift, q_slow[i], q_fast[i], settings.alpha, floors[i], learning, noise_reach
        )
        judged.append(
            Judged(hypothesis, shift, p_slow[i], p_fast[i], q_slow[i], q_fast[i], state,
                   detectable, floors[i], reason)
        )  # fmt: skip
    rejected = {  # BH's discoveries in each direction, before the floor
        REGRESSED: sum(q <= settings.alpha for q in q_slow),
        IMPROVED: sum(q <= settings.alpha for q in q_fast),
    }
    judged = [
        replace(j, level=selected_level(rejected[j.state], count, settings.alpha, weight[i]))
        if j.state in rejected
        else j
        for i, j in enumerate(judged)
    ]  # a verdict's interval: its selection's level, leaving out no change (selected_level)
    rows = [j for j in judged if j.hypothesis.is_row and j.hypothesis.primitive != WHOLE_RUN]
    bands = [j for j in judged if not (j.hypothesis.is_row and j.hypothesis.primitive != WHOLE_RUN)]
    return Outcome(rows, bands, count, nights, learning, relative)
