"""The hypotheses one comparison tests, declared before it looks at any number, and the error
control over them.

The regressions users get are rarely "every row 25 % slower": a protocol change slows large
messages, a topology change one world size, a kernel one dtype. A row-by-row test sees each of
those rows alone, with a single row's noise; a band of rows averages their independent noise
and sees the band. So, per primitive (kind + primitive), the family holds:

- every row alone;
- bands: sizes from some size up (every size of the primitive from s on, for each s), crossed
  with one world size or all, one dtype or all, and one variant or all (a variant is what else
  sets a row apart: send/recv's pattern, mode, op, api, ...). A band with the same rows as
  another is declared once; a band of one row is that row.

  The cuts are the sizes asked for, not their roundings: a gather-type primitive at world size 3
  measures 64K as 65,520 bytes (whole elements per rank), so a size less than SAME_SIZE below
  the largest size of its class is that size (rounding is always down; size_classes), and the
  band is named by it: "all_gather >= 64K" holds both world sizes' 64K rows. Cutting at every
  measured size declared near-copies ("sizes >= 65520", "sizes >= 64K"), each one more
  hypothesis for BH to pay for. The report reads the asked size from `requested_bytes`; the
  family infers it, because its keys (the match keys) and the replay's recorded launches hold
  `size_bytes` alone.

All of them, for every primitive of the comparison, form one family, and Benjamini-Hochberg at
q = alpha runs over it. Its statistics are one-sided and positively correlated (a band shares
rows with its sub-bands), where BH keeps the false discovery rate at alpha (Benjamini and
Yekutieli 2001, PRDS); when nothing changed every discovery is false, so the chance of any false
alarm is at most alpha too.

Weights. Not every hypothesis is as likely: most code changes slow a whole primitive. The family
gives half of its alpha to the broad hypotheses (each primitive's every row, and the whole run)
and half to the hundreds of narrow ones, by weighted BH (weights of mean 1, Genovese, Roeder and
Wasserman 2006), which keeps the same guarantee. A hypothesis's own level, for its
detectable_change, is alpha x weight / m: the level at which BH rejects it alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from distbench.parse import ROUNDED_DOWN

SAME_SIZE = ROUNDED_DOWN
"""Sizes less than 5 % below the largest size of their class (size_classes) are that size,
rounded down to whole elements (distbench.parse.ROUNDED_DOWN, which the labels' asked_size
uses too)."""

AXES = ("size_bytes", "world_size", "dtype")
"""The key columns bands are cut along; every other key column makes a row's variant."""
NOT_VARIANT = frozenset({"kind", "primitive", *AXES})


@dataclass(frozen=True)
class Hypothesis:
    """One declared hypothesis: a row, or a band of rows of one primitive."""

    primitive: str
    """kind:primitive, e.g. 'comm:all_reduce'."""
    members: tuple[int, ...]
    """Indices of its rows in the comparison's row list, ascending."""
    band: tuple[tuple[str, str], ...]
    """What selects it: (('size_from', '1048576'), ('world_size', '3')); () for every row of
    the primitive; a row's full key for a row."""

    @property
    def is_row(self) -> bool:
        return len(self.members) == 1


def primitive_of(key: Mapping[str, str]) -> str:
    return f"{key.get('kind', '')}:{key.get('primitive', '')}"


def variant_of(key: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in key.items() if k not in NOT_VARIANT and v != "")


def _size(key: Mapping[str, str]) -> int | None:
    text = key.get("size_bytes", "")
    return int(text) if text.isdigit() else None


def build_family(keys: Sequence[Mapping[str, str]]) -> list[Hypothesis]:
    """Every row, then every distinct band of two or more rows of each primitive (module
    docstring), in a fixed order: the same rows always give the same family."""
    family = [Hypothesis(primitive_of(k), (i,), tuple(k.items())) for i, k in enumerate(keys)]
    by_primitive: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        by_primitive.setdefault(primitive_of(key), []).append(i)
    sizes = [_size(k) for k in keys]
    worlds = [k.get("world_size", "") for k in keys]
    dtypes = [k.get("dtype", "") for k in keys]
    variants = [variant_of(k) for k in keys]
    for primitive, rows in by_primitive.items():
        seen: set[tuple[int, ...]] = set()
        asked = size_classes({s for i in rows if (s := sizes[i]) is not None})
        ladder = sorted(set(asked.values()))
        world_set = sorted({worlds[i] for i in rows} - {""}, key=_number)
        dtype_set = sorted({dtypes[i] for i in rows} - {""})
        variant_set = sorted({variants[i] for i in rows})
        for size_from in [None, *ladder[1:]]:  # each axis filters the rows the previous kept
            by_size = [
                i for i in rows if size_from is None or asked.get(sizes[i] or 0, 0) >= size_from
            ]
            for world in [None, *world_set] if len(world_set) > 1 else [None]:
                by_world = [i for i in by_size if world is None or worlds[i] == world]
                for dtype in [None, *dtype_set] if len(dtype_set) > 1 else [None]:
                    by_dtype = [i for i in by_world if dtype is None or dtypes[i] == dtype]
                    for variant in [None, *variant_set] if len(variant_set) > 1 else [None]:
                        members = tuple(
                            i for i in by_dtype if variant is None or variants[i] == variant
                        )
                        if len(members) < 2 or members in seen:
                            continue
                        seen.add(members)
                        band = (
                            *((("size_from", str(size_from)),) if size_from is not None else ()),
                            *((("world_size", world),) if world is not None else ()),
                            *((("dtype", dtype),) if dtype is not None else ()),
                            *(variant or ()),
                        )
                        family.append(Hypothesis(primitive, members, band))
    return family


def size_classes(sizes: set[int]) -> dict[int, int]:
    """Each size -> the size it was asked as (module docstring): from the largest down, a size
    less than SAME_SIZE below the current class's size joins it, any other starts a class. No
    chains: `--sizes 1000,1040,1080,1120` gives two classes (1120 and 1040), not one."""
    asked: dict[int, int] = {}
    anchor = 0
    for size in sorted(sizes, reverse=True):
        if not anchor or size * (1 + SAME_SIZE) < anchor:
            anchor = size
        asked[size] = anchor
    return asked


def _number(text: str) -> tuple[int, str]:
    return (int(text), text) if text.isdigit() else (1 << 62, text)


def is_broad(hypothesis: Hypothesis) -> bool:
    """A primitive's every row (its band of no cut), or the whole run: what a code change most
    often slows, and what the family gives `Settings.broad_share` of its alpha to."""
    return not hypothesis.band or hypothesis.band == (("whole", "run"),)


def weights(family: Sequence[Hypothesis], broad_share: float) -> list[float]:
    """Each hypothesis's weight for weighted BH (mean 1): `broad_share` of the alpha spread over
    the broad hypotheses, the rest over the others; equal weights when either kind is absent."""
    broad = [is_broad(h) and not h.is_row for h in family]
    count, wide = len(family), sum(broad)
    if not wide or wide == count or not 0 < broad_share < 1:
        return [1.0] * count
    heavy, light = broad_share * count / wide, (1 - broad_share) * count / (count - wide)
    return [heavy if b else light for b in broad]


def bh_adjust(p_values: Sequence[float], weight: Sequence[float] | None = None) -> list[float]:
    """Benjamini-Hochberg q-values, in the order given: a hypothesis whose q <= alpha is a
    discovery with the false discovery rate of the family kept at alpha. With weights (mean 1),
    the weighted procedure of Genovese, Roeder and Wasserman (2006): BH on p / w."""
    count = len(p_values)
    scaled = [
        p / w if weight else p for p, w in zip(p_values, weight or [1.0] * count, strict=True)
    ]
    order = sorted(range(count), key=lambda i: scaled[i])
    q = [1.0] * count
    smallest = 1.0
    for position in range(count - 1, -1, -1):  # step up: from the largest p down
        i = order[position]
        smallest = min(smallest, scaled[i] * count / (position + 1))
        q[i] = min(1.0, smallest)
    return q
