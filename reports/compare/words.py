"""The words and lines of a comparison that every format prints alike: a hypothesis's name, its
change with interval, and what the comparison could see (the detectable change per primitive).

    all_reduce >= 1M, world size 3: +24 % [+12, +38] % at 99.3 % beyond the rest of the run
    all_reduce: every row together >= 9 %, sizes >= 1M together >= 12 %; one row alone >= 31 %
        to 140 %
    all_to_all: every row together >10x; one row alone >10x     (when it could see nothing)
"""

from __future__ import annotations

import math

from distbench.parse import format_size
from distbench.reports.compare.judge import Comparison
from distbench.stats.common import MIN_RELATIVE
from distbench.stats.engine import WHOLE_RUN
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, REGRESSED, Judged, describe_change

NAME_KEYS = ("strategy", "pattern", "op", "root", "src", "dst", "mode", "api", "placement", "env")


def row_name(key: dict[str, str]) -> str:
    """'all_reduce 1M float32 n=2 pattern=ring': enough to find the row in the table."""
    size = key.get("size_bytes", "")
    parts = [key.get("primitive", "?")]
    parts += [format_size(int(size))] if size.isdigit() else []
    parts += [key["dtype"]] if key.get("dtype") else []
    parts += [f"n={key['world_size']}"] if key.get("world_size") else []
    parts += [f"{k}={key[k]}" for k in NAME_KEYS if key.get(k)]
    return " ".join(parts)


def band_name(judged: Judged) -> str:
    """'all_reduce >= 1M, world size 3, bfloat16', 'send_recv, every row', 'the whole run'."""
    hypothesis = judged.hypothesis
    if hypothesis.primitive == WHOLE_RUN:
        return "the whole run (every primitive alike)"
    primitive = hypothesis.primitive.split(":", 1)[1]
    if hypothesis.is_row:
        return row_name(dict(hypothesis.band))
    parts = []
    for column, value in hypothesis.band:
        if column == "size_from":
            parts.append(f">= {format_size(int(value))}")
        elif column == "world_size":
            parts.append(f"world size {value}")
        elif column == "dtype":
            parts.append(value)
        else:
            parts.append(f"{column}={value}")
    return f"{primitive} {', '.join(parts)}" if parts else f"{primitive}, every row"


def relative_words(comparison: Comparison, judged: Judged) -> str:
    if comparison.outcome.relative and judged.hypothesis.primitive != WHOLE_RUN:
        return " beyond the rest of the run"
    return ""


def verdict_line(comparison: Comparison, judged: Judged) -> str:
    """'regressed: all_reduce >= 1M, world size 3: +24 % [+12, +38] % at 99.3 % beyond the rest
    of the run (q=0.0004)'."""
    q = judged.q_slower if judged.state == REGRESSED else judged.q_faster
    return (
        f"{judged.state}: {band_name(judged)}: {describe_change(judged)}"
        f"{relative_words(comparison, judged)} (q={q:.2g})"
    )


def headline_verdicts(comparison: Comparison) -> list[Judged]:
    """Per primitive, its strongest regressed and its strongest improved hypothesis (the band
    that names the regression best: the largest t); the whole run's, if any."""
    best: dict[tuple[str, str], Judged] = {}
    for judged in (*comparison.outcome.bands, *comparison.outcome.rows):
        if judged.state not in (REGRESSED, IMPROVED) or judged.shift is None:
            continue
        slot = (judged.hypothesis.primitive, judged.state)
        if slot not in best or abs(judged.shift.t) > abs(best[slot].shift.t):
            best[slot] = judged
    return sorted(best.values(), key=lambda j: (j.state != REGRESSED, j.hypothesis.primitive))


def percent(share: float) -> str:
    if not math.isfinite(share) or share > 9:
        return ">10x"
    return f"{share * 100:.0f} %"


def at_least(share: float) -> str:
    """'>= 18 %' of a detectable change, or '>10x' past percent's cap (not '>= >10x')."""
    shown = percent(share)
    return shown if shown == ">10x" else f">= {shown}"


def scope(comparison: Comparison, judged: Judged) -> str:
    """What a hypothesis's change and `detectable_change` are measured against: "beyond the rest
    of the run" (a primitive's, relative mode), else "own level" (the whole run, absolute mode)."""
    return "beyond the rest of the run" if relative_words(comparison, judged) else "own level"


def seen_header(comparison: Comparison) -> str:
    """The heading of seen_lines: in relative mode, what each claim is about (a primitive's change
    beyond the rest of the run: a slowdown of most primitives at once is not one)."""
    if not comparison.outcome.relative:
        return "what this comparison could see (80 % power):"
    return (
        "what this comparison could see (80 % power; a primitive's change beyond the rest of the "
        "run, the whole run's on its own level):"
    )


def seen_lines(comparison: Comparison) -> list[str]:
    """What the comparison could see, per primitive: every row together, each size band (every
    world size and dtype), and the range over its single rows (80 % power, the level each is
    tested at)."""
    bands: dict[str, list[Judged]] = {}
    for judged in comparison.outcome.bands:
        bands.setdefault(judged.hypothesis.primitive, []).append(judged)
    rows: dict[str, list[float]] = {}
    for judged in comparison.outcome.rows:
        rows.setdefault(judged.hypothesis.primitive, []).append(judged.detectable)
    lines = []
    if comparison.outcome.box:  # nothing a primitive could see is vouched for (stats/box.py)
        rows, lines = {}, ["every primitive: nothing tonight (cannot tell: the box changed)"]
    for primitive in sorted(rows):
        parts = []
        for judged in bands.get(primitive, []):
            band = judged.hypothesis.band
            if all(column == "size_from" for column, _value in band):
                what = (
                    "every row together"
                    if not band
                    else f"sizes {band_name(judged).split(' ', 1)[1]} together"
                )
                parts.append(f"{what} {at_least(judged.detectable)}")
        low, high = min(rows[primitive]), max(rows[primitive])
        alone = at_least(low)
        if percent(high) != percent(low):
            alone += f" to {percent(high)}"
        name = primitive.split(":", 1)[1]
        lines.append(f"{name}: {', '.join(parts) + '; ' if parts else ''}one row alone {alone}")
    for judged in comparison.outcome.bands:
        if judged.hypothesis.primitive == WHOLE_RUN:
            lines.append(f"the whole run (every primitive alike): {at_least(judged.detectable)}")
            lines.append(SEVERAL)
    if caught_below_claim(comparison):
        lines.append(BELOW_CLAIM)
    return lines


BELOW_CLAIM = (
    "(a figure above is the change caught 8 times in 10; a smaller one is caught less often, "
    "and tonight one was)"
)


def caught_below_claim(comparison: Comparison) -> bool:
    """A verdict on a change smaller than its hypothesis's own `detectable_change` (a slowdown
    share, so a speedup is set against it in log terms): a claim at 80 % power beside a smaller
    change that was caught reads as a contradiction unless said."""
    judged = [*comparison.outcome.rows, *comparison.outcome.bands]
    return any(  # in log terms: a claim of +50 % is a speedup of 1 - 1/1.5 = 33 %
        j.state in (REGRESSED, IMPROVED) and abs(math.log1p(j.change)) < math.log1p(j.detectable)
        for j in judged
        if math.isfinite(j.change) and j.change > -1 and math.isfinite(j.detectable)
    )


SEVERAL = (
    "(each primitive is judged beyond the rest of the run: a slowdown of half the primitives or "
    "more at once is seen only by the whole run; docs/gate.md#several-primitives-at-once)"
)
"""Relative mode's blind spot, measured (docs/gate.md#several-primitives-at-once): 5 to 7 of the
nightly's 7 primitives 25 % slower passed on 86 % of the held-out g11's nights, their own
primitives claiming they would catch less. 3 or 4 are named (96 %) since the box rule asks how
the primitives split (box.mixed); under the share alone they were named on 1-2 %."""


def noise_line(comparison: Comparison) -> str:
    """Where the noise figures come from: launches and nights per side, the prior, learning."""
    outcome = comparison.outcome
    base, cur = comparison.baseline, comparison.current
    sources = sorted({j.shift.prior_source for j in outcome.rows if j.shift is not None})
    what = "window" if base.window else "run"
    line = (
        f"noise: baseline {what} of {outcome.nights[0]} night(s), {len(base.launches)} launch(es); "
        f"current {outcome.nights[1]} night(s), {len(cur.launches)} launch(es); the launch is "
        f"the unit; prior: {prior_text(sources)}"
    )
    if outcome.learning:
        line += f"; {CANNOT_TELL} where nothing is past the default spread ({outcome.learning})"
    return line


def prior_text(sources: list[str]) -> str:
    """The priors' sources, each named where they are few; where many groups of similar rows
    (a primitive and size band each) estimated their own, one phrase for them all (the line ran
    to a thousand characters), each row's source left to the JSON's `prior`."""
    if len(sources) <= 3:
        return "; ".join(sources) or "none"
    estimated = [s for s in sources if s.startswith("estimated from ")]
    rows = [int(s.split()[2]) for s in estimated if s.split()[2].isdigit()]
    if len(rows) != len(estimated) or len(estimated) < 2:
        return "; ".join(sources)
    others = [s for s in sources if s not in estimated]
    grouped = (
        f"estimated in each of {len(estimated)} groups of similar rows (a primitive and size band; "
        f"{min(rows)}-{max(rows)} rows a group; each row's source: the JSON's prior)"
    )
    return "; ".join([grouped, *others])


def parts_line(comparison: Comparison) -> str:
    """The median row's noise by part, as sds of a launch value: which lever narrows it (more
    trials shrink the trial part; more launches a night the launch part; more nights the
    night part)."""
    shifts = [j.shift for j in comparison.outcome.rows if j.shift is not None]
    if not shifts:
        return "noise by part: none"

    def median_sd(values: list[float]) -> str:
        finite = sorted(v for v in values if math.isfinite(v))
        return f"{math.sqrt(max(0.0, finite[len(finite) // 2])) * 100:.1f} %" if finite else "-"

    assumed = all(s.data_df == 0 for s in shifts)  # no launch part measured: the prior alone
    launches = median_sd([s.between for s in shifts])
    if assumed:
        launches += " (assumed: the stated default spread, nothing measured)"
    one_night = all(s.nights_base <= 1 and s.nights_current <= 1 for s in shifts)
    nights = (
        "not measured (one night a side)" if one_night else median_sd([s.night for s in shifts])
    )
    if nights == "0.0 %":  # a moment estimate below zero, read as none: say so, not a floor
        nights += " (estimated: the nights lay no further apart than their launches)"
    return (
        "noise by part (median row, sd of a launch value): trials "
        f"{median_sd([s.within for s in shifts])}, launches beyond them {launches}, "
        f"nights {nights}"
    )


def relative_line(comparison: Comparison) -> str | None:
    """In relative mode: that the rows' changes are beyond the rest of the run, and the whole
    run's own change beside them (a box 100x slower tonight reads +0 % on every row)."""
    if not comparison.outcome.relative:
        primitives = {j.hypothesis.primitive for j in comparison.outcome.rows}
        if comparison.settings.relative and 1 < len(primitives) < MIN_RELATIVE:
            return (
                f"changes are each row's on its own level: judging a primitive beyond the rest of "
                f"the run needs {MIN_RELATIVE} primitives or more, and this comparison has "
                f"{len(primitives)}"
            )
        return None
    whole = [j for j in comparison.outcome.bands if j.hypothesis.primitive == WHOLE_RUN]
    own = f"; the whole run's own change: {describe_change(whole[0])}" if whole else ""
    return (
        "changes are each primitive's beyond the rest of the run (the median of the other "
        f"primitives' levels, launch by launch){own}"
    )


def family_line(comparison: Comparison) -> str:
    outcome = comparison.outcome
    rows = len(outcome.rows)
    whole = 1 if outcome.relative else 0
    return (
        f"tested: {outcome.family_size} hypotheses ({rows} rows, {len(outcome.bands) - whole} "
        f"bands{', the whole run' if whole else ''}), Benjamini-Hochberg at q <= "
        f"{comparison.settings.alpha:g} over them: when nothing changed, the chance of any false "
        "alarm is at most that, if launches are independent draws of one noise (docs/gate.md "
        "measures how far that holds)"
    )


def split_line(ways: dict[str, list[str]]) -> str:
    """A night judged as a change of code that moved several primitives (box.split): which read
    slower and which faster, and that the data does not say which of them changed (measured on
    g11: 3 or 4 primitives 25 % faster fail the night naming the others on 96-97 % of nights,
    docs/gate.md#several-primitives-at-once)."""
    slower, faster = ways["slower"], ways["faster"]
    return (
        f"{len(slower)} primitives read slower ({', '.join(slower)}) and {len(faster)} faster "
        f"({', '.join(faster)}) beyond the rest of the run, each one way: a change that slowed "
        f"the {len(slower)} reads so, and so does one that sped up the {len(faster)} (each "
        "primitive is judged against the median of the others); check which before bisecting "
        "(docs/gate.md#several-primitives-at-once)"
    )
