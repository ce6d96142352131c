"""Change points of night-level series whose noise drifts: where a level stepped and stayed.
`distbench history` calls it once for every series of a history.

    found = detect_changes([y1, y2, ...], white=[0.0, 0.003, ...], alpha=0.05, floor=0.05)

A series is one case's nights, y = the mean log value of a night's launches (larger is slower);
`white` is the launch-noise variance of a night value, from the spread of the launches of its
nights (0 with one launch a night). The method, and why:

1. Noise (changepoint_model.estimate_noise): AR(1) drift plus that launch noise, fitted robustly
   to the steps being looked for. AR(1) pre-whitening rather than a Newey-West long-run
   variance: a kernel estimate from 60 nights is biased low at phi = 0.8 (Andrews 1991) and the
   test it feeds fires on drift, and the GLS statistic of a whitened series also uses the jump
   at the step itself, which a difference of means cannot (Andrews and Monahan 1992 pre-whiten
   for the same reason). Launch noise matters: fitted as AR(1) alone, a drift with phi = 0.8
   under as much launch noise gave 21.5 false change points per 100 series, 9.5 with the launch
   noise known (ci/bench_stats_history.py).
   Where a history's series of one length agree on phi and are many independent series, they
   share their median phi (changepoint_pool): 60 nights estimate one series' phi poorly.
2. Statistic (changepoint_model.profile): the GLS t of a step at every night with MIN_SIZE
   nights on each side; a series' statistic is the largest |t|.
3. Null (changepoint_null): that maximum simulated from the model, with phi's uncertainty
   carried in (a series' own phi) or that of a pooled phi. The largest |t| over a series, not
   the t of the night it picked, is what is tested: selection is paid for.
4. Family: every series is tested whole; Benjamini-Hochberg at `alpha` over the series decides
   which changed (the whole history's chance of any false change point stays <= alpha when
   nothing changed). In those R of m, binary segmentation splits at the largest |t| and tests
   each part against the null of its length at alpha R / m (Benjamini and Bogomolov 2014,
   selective inference on families), until no part holds a change past `floor`.
5. Groups (changepoint_group): the series of one group (history: a primitive's rows on the same
   nights) are averaged into one series more of their family, judged as the rest are. Where it
   changed, each of its series not selected alone is tested at the group's night, in the null
   of |t| at a night given in advance, at the level it would join the family at (a series
   selected alone whose step is there too is placed there: a mean of the group's series places a
   shared step better than one series does). A change of
   code moves a primitive's rows together far more often than one row: 10 of 108 series 20 %
   slower from one night were found in 84 % without the groups and Qn's pooling (five seeds),
   92 % with them (ci/bench_stats_history.py; docs/history.md).

What it cannot see: a step in the last MIN_SIZE - 1 nights (it needs MIN_SIZE nights on its
new level), a change inside a part shorter than 2 MIN_SIZE nights, a regression undone within a
few nights among many, and drift with phi above PHI_MAX (a random walk has no level to step).
docs/history.md gives its false alarms and the steps it finds (ci/bench_stats_history.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from distbench.stats.changepoint_group import build_groups, member_test
from distbench.stats.changepoint_model import (
    MIN_SIZE,
    Noise,
    estimate_noise,
    normal_scores,
)
from distbench.stats.changepoint_null import NullPool, pool_for
from distbench.stats.changepoint_parts import (
    Part,
    located,
    place,
    placers,
    search,
    test_parts,
    unknown_noise,
)
from distbench.stats.changepoint_pool import pooled_noise
from distbench.stats.family import bh_adjust

__all__ = ["MIN_SIZE", "Found", "SeriesChanges", "detect_changes"]


@dataclass(frozen=True)
class Found:
    """One change point of a series."""

    index: int
    """Position in the series of the first night of the new level."""
    effect: float
    """The step in log units (GLS, at that night): > 0 slower."""
    t: float
    p_value: float
    """Of the largest |t| of the part it was found in, under that part's null."""
    part: tuple[int, int]
    """The part of the series searched: [start, end) positions."""
    together: bool = False
    """Found at the night its group (its primitive's rows) stepped, tested at that night
    (changepoint_group); `p_value` is then that test's."""
    nights: tuple[int, int] | None = None
    """(first, last): the positions its step's first night may be at, 95 % (changepoint_where;
    a row found with its group: the group's)."""


@dataclass(frozen=True)
class SeriesChanges:
    """One series, judged."""

    found: tuple[Found, ...]
    """Its change points, by position."""
    nights: int
    p_value: float
    """The whole series' test (nan: too short to test)."""
    q_value: float
    """Benjamini-Hochberg over the family of series."""
    noise: Noise
    """Its fitted noise (arrays of one)."""
    level: float
    """The level a further change in its last part would be tested at."""
    pool: NullPool | None
    scale: float
    """Log units per normal-score unit (changepoint_model.normal_scores)."""
    group: SeriesChanges | None = None
    """Its group's series, judged (changepoint_group): what a step of every series of the group
    at once shows (changepoint_reach.detectable_step of it); None outside a group."""
    ranked: bool = True
    """Judged on the normal scores of its ranks (every series given); False: as it is (a
    group's series), where a step's t grows with its size."""

    @property
    def last_start(self) -> int:
        """Position where its last part begins (its last change point, else 0)."""
        return self.found[-1].index if self.found else 0


def pool_length(n: int) -> int:
    """Nights of the pool a series of n nights is read in: n up to 100, then a grid of steps of
    10 % below n (fewer pools; a pool's estimate of phi from 10 % fewer nights is a little wider,
    which its null carries)."""
    if n <= 100:
        return n
    return int(100 * 1.1 ** math.floor(math.log(n / 100) / math.log(1.1)))


def detect_changes(
    series: Sequence[np.ndarray], white: Sequence[float], alpha: float = 0.05,
    floor: float = 0.0, pools: Callable[[int, bool], NullPool] = pool_for,
    families: Sequence[int] | None = None, pool_phi: bool = True,
    alone: Sequence[bool] | None = None, groups: Sequence[int] | None = None,
) -> list[SeriesChanges]:  # fmt: skip
    """Every series' change points (module docstring). `floor`: the smallest step (a share of
    the level before it) kept as a change point; a series whose largest step is smaller counts
    as unchanged before Benjamini-Hochberg (a coarse timer's ties can make a 1 % bump certain).
    `pools(n, launches)`: the null pool of series of n nights (changepoint_null.pool_for, or a
    caller's cache of it). `families`: each series' family (Benjamini-Hochberg runs within each;
    default: one family, the history). `pool_phi`: each family's series of one length share
    their drift's phi when they agree on it (changepoint_pool; False: each series' own phi, as
    every series was judged before pooling). `alone`: series whose phi is never pooled with the
    rest of their family (a drift of another kind: history's whole-run series, the box's own
    level, among the cases judged beyond it). `groups`: each series' group (-1: none; a
    group's series have one length): a group of GROUP_MIN series or more is one series more of
    their family, and where it changed, each of its series is tested at its night too
    (changepoint_group); the result holds the given series only."""
    given = len(series)
    family = list(families) if families is not None else [0] * given
    apart = list(alone) if alone is not None else [False] * given
    lengths = [len(s) for s in series]
    launch = [float(w) > 0 for w in white]
    noises: dict[int, Noise] = {}
    null_of: dict[int, NullPool] = {}
    scored: dict[int, np.ndarray] = {}
    white_scored: dict[int, float] = {}
    scales: dict[int, float] = {}
    whole: dict[int, Part] = {}

    def judge_whole(rows: list[int], scores: np.ndarray, white_scores: np.ndarray,
                    scale: np.ndarray, y: np.ndarray, pooling: bool) -> None:  # fmt: skip
        n, launches = scores.shape[1], launch[rows[0]]
        noise = estimate_noise(scores, white_scores)
        if pooling:
            noise = pooled_noise(scores, white_scores, noise)
        pool = pools(pool_length(n), launches)
        for j, i in enumerate(rows):
            noises[i], null_of[i] = noise.take(np.array([j])), pool
            scored[i], scales[i] = scores[j], float(scale[j])
            white_scored[i] = float(white_scores[j])
        for part in test_parts(scores, y, noise, [(i, 0, n) for i in rows], null_of):
            small = abs(math.expm1(part.effect)) < floor  # a step too small to report: p = 1
            small &= part.series < given  # a group's rows are held to the floor, not the group
            whole[part.series] = replace(part, p_value=1.0) if small else part

    estimated: dict[tuple[int, bool, int, int], list[int]] = {}
    for i, key in enumerate(zip(lengths, launch, family, strict=True)):
        estimated.setdefault((*key, i if apart[i] else -1), []).append(i)
    for (n, _launches, _member, _apart), rows in sorted(estimated.items()):
        if n >= 2 * MIN_SIZE:
            y = np.stack([np.asarray(series[i], float) for i in rows])
            own = np.array([float(white[i]) for i in rows])
            scores, white_scores, scale = normal_scores(y, own)
            judge_whole(rows, scores, white_scores, scale, y, pool_phi)
    labels = [g if i in scored else -1 for i, g in enumerate(groups or [-1] * given)]
    built = build_groups(scored, white_scored, scales, series, labels)
    group_of = {given + j: g for j, g in enumerate(built)}
    series = [*series, *(g.logs for g in built)]
    for j, g in enumerate(built):  # a group's series is judged as it is, not ranked again
        i = given + j
        family.append(family[g.members[0]])
        lengths.append(len(g.logs))
        launch.append(launch[g.members[0]])
        scale = np.array([g.scale])
        judge_whole([i], g.scores[None, :], np.array([g.white]), scale, g.logs[None, :], False)
    members_of: dict[int, list[int]] = {}
    for i in sorted(whole):
        members_of.setdefault(family[i], []).append(i)
    q_of: dict[int, float] = {}
    level_of: dict[int, float] = {}
    for tested in members_of.values():
        q_of.update(zip(tested, bh_adjust([whole[i].p_value for i in tested]), strict=True))
        chosen = sum(q_of[i] <= alpha for i in tested)
        for i in tested:  # a part's level if changed, else the level it would join at
            level_of[i] = alpha * (chosen if q_of[i] <= alpha else chosen + 1) / len(tested)
    selected = [i for i in sorted(whole) if q_of[i] <= alpha]
    found: dict[int, list[Found]] = {i: [] for i in range(len(series))}
    launch_noise = [*white, *(g.log_white for g in built)]  # where a step may have started
    white = [*white, *(0.0 for _ in built)]  # a group's logs are placed as drift alone
    placing = placers(series, white, selected)
    queue = place([whole[i] for i in selected], series, placing)
    at_nights = [p for p in queue if p.series in group_of]
    queue = [p for p in queue if p.series not in group_of]
    alone_at = {p.series: j for j, p in enumerate(queue)}
    for part in at_nights:  # its rows tested at the group's night
        nights = located(part, series, launch_noise)
        span = (part.start, part.end)
        found[part.series].append(
            Found(part.split, part.effect, part.t, part.p_value, span, nights=nights)
        )
        for i in group_of[part.series].members:
            if i not in null_of:
                continue
            one = member_test(scored[i], np.asarray(series[i], float), noises[i], null_of[i],
                              part.split)  # fmt: skip
            if one is None or one.p_value > level_of[i]:
                continue
            at_night = Part(i, 0, lengths[i], part.split, one.effect, one.t, one.p_value, True,
                            nights)  # fmt: skip
            if i in alone_at:  # selected alone: placed at the group's night (its mean places it)
                j = alone_at[i]
                queue[j] = replace(at_night, t=queue[j].t, p_value=queue[j].p_value)
            else:
                queue.append(at_night)
    placing.update(placers(series, white, [p.series for p in queue if p.series not in placing]))
    while queue:
        children = []
        for part in queue:
            if abs(math.expm1(part.effect)) < floor:
                continue
            span = (part.start, part.end)
            nights = part.nights or located(part, series, launch_noise)
            found[part.series].append(
                Found(part.split, part.effect, part.t, part.p_value, span, part.together, nights)
            )
            children += [(part.series, part.start, part.split), (part.series, part.split, part.end)]
        found_parts = search(children, series, scored, noises, null_of)
        queue = place([p for p in found_parts if p.p_value <= level_of[p.series]], series, placing)
    judged = [
        SeriesChanges(
            tuple(sorted(found[i], key=lambda f: f.index)), lengths[i],
            whole[i].p_value if i in whole else math.nan, q_of.get(i, math.nan),
            noises.get(i, unknown_noise()), min(level_of.get(i, alpha), 1.0), null_of.get(i),
            scales.get(i, math.nan),
        )
        for i in range(len(series))
    ]  # fmt: skip
    for i, g in group_of.items():  # each series of a group carries its group, judged
        judged[i] = replace(judged[i], ranked=False)
        for member in g.members:
            judged[member] = replace(judged[member], group=judged[i])
    return judged[:given]
