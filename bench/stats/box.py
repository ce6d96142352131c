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

So when more than BOX_SHARE of the primitives compared are named, the night is `cannot tell:
the box changed`: every hypothesis of a primitive becomes cannot tell (the window's noise no
longer says what tonight's could be), and the whole run keeps its own verdict (its change is
measured either way: the box, or a change that touched every primitive). A code change that
slows several primitives at once reads the same: judged beyond the rest of the run, the others
then read faster (the leave-one-out median of the others moves once about half of them slowed).
Measured on g10's nights against windows of its own state (docs/gate.md#several-primitives-at-once):
3 or 4 of the 7 primitives 25 % slower exit 5 on 19-89 % of nights and 1 otherwise (the whole
run), naming the primitives on 0-2 %; 1 or 2 are named on 99-100 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from distbench.stats.arrays import WHOLE_RUN
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, REGRESSED, Judged

BOX_SHARE = 2 / 3
"""More than this share of the primitives compared named at once: the box changed (5 of 7).
Chosen on the recorded groups g5, g7, g8 and g9 and written down before g10 was recorded."""


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


def box_changed(judged: Sequence[Judged], primitives: int) -> str:
    """'' for a night judged as usual; else why it cannot tell ('the box changed: 6 of 7
    primitives moved beyond the window at once (broadcast, reduce slower; all_gather faster)')."""
    named = moved(judged)
    if primitives < 1 or len(named) <= BOX_SHARE * primitives:
        return ""
    ways = []
    for way in ("slower", "faster", "both"):
        names = sorted(p.split(":", 1)[-1] for p, w in named.items() if w == way)
        if names:
            ways.append(f"{', '.join(names)} {'both ways' if way == 'both' else way}")
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
        else replace(j, state=CANNOT_TELL, reason=BOX_REASON, detectable=math.inf)
        for j in judged
    ]  # fmt: skip
