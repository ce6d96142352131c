"""A night the box changed under the baseline window: most primitives moved at once, each its
own way, so no primitive's own change can be told from the box's.

In relative mode each primitive is judged beyond the rest of the run: what moves every primitive
alike (the box's load, its clock) is taken out, and is the whole run's hypothesis of its own. A
change of the box itself does not move them alike. On the development box a busy afternoon (g9:
the hypervisor took a median 4.5 % of the CPU, against 0.1 % the half hour before) ran every
row a median 15 % slower, all_gather 8 % and broadcast 24 %; judged against windows of the
other afternoons, 6 or 7 of the 7 primitives were named (regressed or improved) on every night,
and the other way round too. Unchanged nights against windows of the same state of the box name
0 to 4 primitives, and one primitive slowed by 25 % 1 to 3 (docs/gate.md#the-box-changed).

So when more than BOX_SHARE of the primitives compared are named, and they did not split as a
change of code splits them (below), the night is `cannot tell: the box changed`: every
hypothesis of a primitive becomes cannot tell (the window's noise no longer says what tonight's
could be), and the whole run keeps its own verdict (its change is measured either way: the box,
or a change that touched every primitive).

A code change that slows several primitives at once also names most of them: judged beyond the
rest of the run, the others then read faster (the leave-one-out median of the others moves once
about half of them slowed). Under the share alone (held out on g10) 3 or 4 of the 7 primitives
25 % slower exited 5 on 83 % of g10's nights against g9's windows, naming a slowed primitive on
2.3 %. Such a change splits the primitives in two coherent groups: each primitive one way, and
at least MINORITY + 1 each way (3 slower and 4 faster, or 4 and 3). A change of the box did
not, on the development groups: in 94 % of nights against windows of another state some
primitive was named both ways (a band slower, another faster: the box's change depends on the
size), and on each of the rest (15 of 259) one or two primitives went against all the others
(docs/gate.md#the-box-changed). The rule asks for either (`mixed`). Chosen on g5, g7, g8, g9
and g10, and written down before g11 was recorded (commit 867b54c). Held out on g11: 3 or 4
primitives slowed were named on 95-96 % of nights (against g11's and g10's windows; 0.4-1.4 %
under the share alone), no unchanged night failed confirmed against any window group, and every
unchanged night against windows of the box as it was (g8's, g7's) still exited 5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from distbench.stats.arrays import WHOLE_RUN
from distbench.stats.verdict import CANNOT_TELL, CONFIDENCE, IMPROVED, REGRESSED, Judged

BOX_SHARE = 2 / 3
"""More than this share of the primitives compared named at once: the box changed (5 of 7).
Chosen on the recorded groups g5, g7, g8 and g9 and written down before g10 was recorded."""
MINORITY = 2
"""A change of the box, not of code, when no more primitives than this went the minority way
(slower or faster) and none went both ways (`mixed`): with 1, 2 of g7's 30 nights against g9's
windows failed confirmed (5 slower, 2 faster); with 2, none did, and 3 or 4 primitives slowed
were named on 93-100 % of g10's nights (g9's and g10's windows)."""
TWO_SIDED = True
"""Whether `mixed` is asked for (False: the share alone, the rule held out on g10; the replays'
--share-only)."""


def moved(judged: Sequence[Judged]) -> dict[str, str]:
    """Each primitive named tonight (any hypothesis of it regressed or improved), with the
    direction of its broadest named hypothesis: 'slower', 'faster' or 'both'."""
    found: dict[str, set[str]] = {}
    for j in judged:
        if j.state in (REGRESSED, IMPROVED) and j.hypothesis.primitive != WHOLE_RUN:
            found.setdefault(j.hypothesis.primitive, set()).add(j.state)
    return {
        p: "both" if len(states) > 1 else "slower" if REGRESSED in states else "faster"
        for p, states in found.items()
    }


def mixed(named: dict[str, str]) -> bool:
    """Whether the primitives named moved as a change of the box moves them, not as a change of
    code: some primitive both ways, or at most MINORITY primitives the minority way."""
    ways = list(named.values())
    if "both" in ways:
        return True
    return min(ways.count("slower"), ways.count("faster")) <= MINORITY


def most_named(judged: Sequence[Judged], primitives: int) -> dict[str, str]:
    """`moved` when more than BOX_SHARE of the `primitives` compared were named, else {}."""
    named = moved(judged)
    return named if primitives >= 1 and len(named) > BOX_SHARE * primitives else {}


def names(named: dict[str, str], way: str) -> list[str]:
    """The primitives of `named` that moved `way`, by name, without the kind."""
    return sorted(p.split(":", 1)[-1] for p, w in named.items() if w == way)


def split(judged: Sequence[Judged], primitives: int) -> dict[str, list[str]]:
    """The primitives named slower and faster on a night on which more than BOX_SHARE of them
    were named as a change of code names them (each one way, more than MINORITY each way: not
    `mixed`), judged as usual; {} on any other night. Which side changed is not in the data: 3
    slowed or 4 sped up read alike beyond the rest of the run."""
    named = most_named(judged, primitives)
    if not named or mixed(named):
        return {}
    return {way: names(named, way) for way in ("slower", "faster")}


def box_changed(judged: Sequence[Judged], primitives: int) -> str:
    """'' for a night judged as usual; else why it cannot tell ('the box changed: 6 of 7
    primitives moved beyond the window at once (broadcast, reduce slower; all_gather faster)')."""
    named = most_named(judged, primitives)
    if not named or (TWO_SIDED and not mixed(named)):
        return ""
    ways = [
        f"{', '.join(names(named, way))} {'both ways' if way == 'both' else way}"
        for way in ("slower", "faster", "both")
        if names(named, way)
    ]
    return (
        f"the box changed: {len(named)} of {primitives} primitives moved beyond the window at "
        f"once ({'; '.join(ways)})"
    )


BOX_REASON = "the box changed"
"""A hypothesis's reason on such a night (the night's own reason, box_changed's, says which
primitives moved)."""


def unjudged(judged: Sequence[Judged]) -> list[Judged]:
    """Every hypothesis of a primitive as cannot tell (BOX_REASON), its detectable change unknown
    (inf: nothing vouched for); the whole run as judged."""
    return [
        j if j.hypothesis.primitive == WHOLE_RUN
        else replace(j, state=CANNOT_TELL, reason=BOX_REASON, detectable=math.inf,
                     level=CONFIDENCE)  # no verdict: its interval is the row's own 95 %
        for j in judged
    ]  # fmt: skip
