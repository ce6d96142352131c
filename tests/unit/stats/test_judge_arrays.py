"""distbench.stats.arrays judges every hypothesis at once: the same numbers, to the last bit, as
the one-hypothesis-at-a-time code it replaced (Prior.squeeze, nested.parts, shift.shift_of,
Shift.p_slower/p_faster/detectable, decide_state), on random families with missing launches,
several nights, learning and learnt priors, trial floors and drift floors. The comparison is
proven bit-sensitive by corrupting one field of the vectorised result by one ulp.

Also: components.seeded_within_variances equals within_variance call by call.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pytest

from distbench.stats.arrays import (
    WHOLE_RUN,
    band_floors,
    hypothesis_shifts,
    judged_outcome,
    member_max,
)
from distbench.stats.components import (
    MAX_PRIOR_DF,
    Prior,
    seeded_within_variances,
    within_variance,
)
from distbench.stats.engine import Drift, Settings, membership, night_index
from distbench.stats.family import Hypothesis, bh_adjust, build_family, weights
from distbench.stats.nested import SideSummary, parts, summarize
from distbench.stats.shift import Shift, shift_of
from distbench.stats.verdict import IMPROVED, REGRESSED, Judged, decide_state


def reference_shifts(
    family: Sequence[Hypothesis], priors: Sequence[Prior], band_var: np.ndarray,
    learning: str, base: SideSummary, cur: SideSummary, data_var: np.ndarray,
    data_df: np.ndarray, trial: np.ndarray, settings: Settings,
) -> list[Shift | None]:  # fmt: skip
    """judge_matrices' loop as it was before distbench.stats.arrays (one hypothesis at a time)."""
    shifts: list[Shift | None] = []
    for h, hypothesis in enumerate(family):
        is_row = hypothesis.is_row and hypothesis.primitive != WHOLE_RUN
        prior = priors[hypothesis.members[0]] if is_row else Prior(
            float(band_var[h]), 2.0 if learning else 0.0, "band"
        )  # fmt: skip
        if not (base.launches[h] and cur.launches[h]):
            shifts.append(None)
            continue
        sigma2, sigma_df = prior.squeeze(float(data_var[h]), int(data_df[h]))
        if math.isfinite(trial[h]):
            sigma2 = max(sigma2, float(trial[h]))
        drift = settings.drift.of(hypothesis)
        found = parts(base, cur, h, sigma2, sigma_df, drift**2)
        shifts.append(shift_of(
            float(cur.mean[h] - base.mean[h]), found, float(trial[h]),
            (int(base.launches[h]), int(cur.launches[h])),
            (int(base.nights[h]), int(cur.nights[h])), prior.source, int(data_df[h]),
        ))  # fmt: skip
    return shifts


def reference_judged(
    family: list[Hypothesis], shifts: list[Shift | None], floors: list[float],
    settings: Settings, learning: str,
) -> list[Judged]:  # fmt: skip
    p_slow = [s.p_slower() if s else 1.0 for s in shifts]
    p_fast = [s.p_faster() if s else 1.0 for s in shifts]
    weight = weights(family, settings.broad_share)
    q_slow, q_fast = bh_adjust(p_slow, weight), bh_adjust(p_fast, weight)
    judged = []
    for i, (hypothesis, shift) in enumerate(zip(family, shifts, strict=True)):
        alpha_own = settings.alpha * weight[i] / max(1, len(family))
        detectable = shift.detectable(alpha_own, floors[i]) if shift else math.inf
        noise_reach = shift.detectable(alpha_own) if shift and shift.se != 0 else 0.0
        state, reason = decide_state(
            shift, q_slow[i], q_fast[i], settings.alpha, floors[i], learning, noise_reach
        )
        judged.append(Judged(hypothesis, shift, p_slow[i], p_fast[i], q_slow[i], q_fast[i],
                             state, detectable, floors[i], reason))  # fmt: skip
    rejected = {
        REGRESSED: sum(q <= settings.alpha for q in q_slow),
        IMPROVED: sum(q <= settings.alpha for q in q_fast),
    }
    m = len(family)
    return [
        dataclasses.replace(
            j, level=min(1.0, max(0.5, 1 - 2 * weight[i] * rejected[j.state] * settings.alpha / m))
        )
        if j.state in rejected
        else j
        for i, j in enumerate(judged)
    ]  # a verdict's interval: its selection's level


def same(a: object, b: object) -> bool:
    """Bit-equal, nans alike, type alike (an int field stays an int), recursing into dataclasses."""
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, float) and isinstance(b, float):
        sign = math.copysign(1, a) == math.copysign(1, b)
        return type(a) is type(b) and ((math.isnan(a) and math.isnan(b)) or (a == b and sign))
    return type(a) is type(b) and a == b


def random_case(seed: int) -> dict:
    """A random comparison: keys of 4 primitives, two sides of launches over nights with holes,
    its summaries and priors, as judge_matrices prepares them."""
    rng = np.random.default_rng(seed)
    keys = [
        {"kind": "comm", "primitive": p, "size_bytes": str(s), "world_size": w, "dtype": d}
        for p in ("all_reduce", "broadcast", "reduce", "all_gather")
        for s in (1024, 65536, 1 << 22)
        for w in ("2", "4")
        for d in ("float32", "bfloat16")
        if rng.random() < 0.8
    ]
    family = build_family(keys)
    if seed % 2:  # relative mode's whole run: one more row
        family.append(Hypothesis(WHOLE_RUN, tuple(range(len(keys))), (("whole", "run"),)))
    rows = len(keys) + (seed % 2)
    member = membership(family, rows)
    sides = []
    for launches in (int(rng.integers(1, 9)), int(rng.integers(1, 4))):
        y = rng.normal(0.0, rng.choice([1e-3, 0.05, 0.3]), size=(launches, rows))
        y[rng.random(y.shape) < 0.1] = np.nan
        within = np.abs(rng.normal(0, 0.01, size=y.shape))
        within[rng.random(y.shape) < 0.3] = np.nan
        nights = night_index([f"n{i // int(rng.integers(1, 4))}" for i in range(launches)])
        sides.append(summarize(y, within, nights, member))
    base, cur = sides
    data_df = base.within_df + cur.within_df
    with np.errstate(invalid="ignore", divide="ignore"):
        data_var = (base.within_squares + cur.within_squares) / data_df
    with _quiet():
        trial = np.nanmean(np.vstack([base.trial_part, cur.trial_part]), axis=0)
    choices = [0.0, 2.0, 7.5, MAX_PRIOR_DF]
    priors = [
        Prior(float(rng.choice([1e-4, 0.01, 0.2, math.nan])) if rng.random() < 0.9 else 0.01,
              float(rng.choice(choices)), f"prior {i % 3}")
        for i in range(len(keys))
    ]  # fmt: skip
    prior_var = np.array([p.variance for p in priors])
    band_var = member_max(family, np.append(prior_var, np.nanmax(prior_var))[:rows])
    drift = Drift(row=0.01, band=0.02, broad=0.0, whole=0.05) if seed % 3 else Drift()
    settings = Settings(alpha=float(rng.choice([0.05, 0.2])), drift=drift)
    row_floors = [float(f) for f in rng.choice([0.0, 0.05, 0.5, math.inf], size=len(keys))]
    floors = [max(row_floors[i] for i in h.members) for h in family]
    assert band_floors(family, row_floors, max) == floors
    return dict(family=family, priors=priors, band_var=band_var, base=base, cur=cur,
                data_var=data_var, data_df=data_df, trial=trial, settings=settings,
                floors=floors, learning="learning the noise: 1 of 5 nights" if seed % 4 == 0
                else "")  # fmt: skip


@contextmanager
def _quiet() -> Iterator[None]:
    """No numpy warnings: empty and all-nan slices are part of the random cases."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def vectorised(case: dict) -> tuple[list[Shift | None], list[Judged]]:
    family, learning = case["family"], case["learning"]
    shifts = hypothesis_shifts(
        family, case["priors"], (case["band_var"], 2.0 if learning else 0.0, "band"),
        case["base"], case["cur"], (case["data_var"], case["data_df"]), case["trial"],
        [case["settings"].drift.of(h) for h in family],
    )  # fmt: skip
    outcome = judged_outcome(family, shifts, case["floors"], case["settings"], learning, (1, 1),
                             False)  # fmt: skip
    return shifts, [*outcome.rows, *outcome.bands]


def reference(case: dict) -> tuple[list[Shift | None], list[Judged]]:
    family, learning = case["family"], case["learning"]
    shifts = reference_shifts(
        family, case["priors"], case["band_var"], learning, case["base"], case["cur"],
        case["data_var"], case["data_df"], case["trial"], case["settings"],
    )  # fmt: skip
    judged = reference_judged(family, shifts, case["floors"], case["settings"], learning)
    row = [j.hypothesis.is_row and j.hypothesis.primitive != WHOLE_RUN for j in judged]
    ordered = [j for j, r in zip(judged, row, strict=True) if r]
    return shifts, ordered + [j for j, r in zip(judged, row, strict=True) if not r]


@pytest.mark.parametrize("seed", range(12))
def test_every_hypothesis_is_judged_as_one_at_a_time_to_the_last_bit(seed: int) -> None:
    case = random_case(seed)
    with _quiet():
        new_shifts, new_judged = vectorised(case)
        old_shifts, old_judged = reference(case)
    assert sum(s is None for s in old_shifts) < len(old_shifts)  # something was judged
    assert len(new_judged) == len(old_judged) == len(case["family"])
    for new, old in zip(new_shifts, old_shifts, strict=True):
        assert same(new, old), (new, old)
    for new, old in zip(new_judged, old_judged, strict=True):
        assert same(new, old), (new, old)


def test_the_comparison_sees_one_ulp() -> None:
    """Mutation: one shift's se moved by one ulp, or a p-value, must not compare equal."""
    case = random_case(1)
    with _quiet():
        shifts, judged = vectorised(case)
    shift = next(s for s in shifts if s is not None)
    moved = dataclasses.replace(shift, se=math.nextafter(shift.se, math.inf))
    assert not same(moved, shift)
    one = judged[0]
    assert not same(dataclasses.replace(one, p_slower=math.nextafter(one.p_slower, 2.0)), one)
    assert not same(dataclasses.replace(shift, data_df=float(shift.data_df)), shift)


def test_band_floors_take_the_rule_given() -> None:
    family = build_family([{"kind": "comm", "primitive": "p", "size_bytes": str(s)}
                           for s in (1, 2, 4)])  # fmt: skip
    floors = [0.05, 0.5, 0.1]
    assert band_floors(family, floors, max) == [max(floors[i] for i in h.members) for h in family]
    assert band_floors(family, floors, min) == [min(floors[i] for i in h.members) for h in family]


def test_seeded_within_variances_equal_within_variance_call_by_call() -> None:
    rng = np.random.default_rng(3)
    requests = []
    for i in range(400):
        units = list(rng.lognormal(3, 0.3, int(rng.integers(0, 9))))
        if i % 7 == 0 and units:
            units[0] = -1.0  # not a time: dropped, as within_variance drops it
        statistic = (np.min, np.median, np.mean, np.max)[i % 4]
        requests.append((units, statistic, i // 2))
    found = seeded_within_variances(requests)
    expected = [within_variance(u, s, seed) for u, s, seed in requests]
    assert all(same(a, b) for a, b in zip(found, expected, strict=True))
    assert any(math.isfinite(v) for v in found)
    swapped = seeded_within_variances([(u, s, seed + 1) for u, s, seed in requests])
    assert not all(same(a, b) for a, b in zip(swapped, expected, strict=True))
