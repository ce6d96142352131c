"""Per-row thresholds from the measured spread between launches, and the TOML file compare
--thresholds reads (ci/bench_gate.py --write-thresholds; ci/thresholds-*.toml were written so)."""

from __future__ import annotations

from pathlib import Path

from gate_launches import STATISTICS, Key, Launch

from distbench.reports.checks import Rule, Threshold, Thresholds


def size_bands(keys: list[Key]) -> dict[Key, tuple[int | None, int | None]]:
    """Per row with a size: the band of sizes it stands for, up to the geometric midpoints with
    the neighbouring sizes of its case (1K, 64K, 1M: <= 8K, 8K-256K, >= 256K), so a rule still
    matches when a release rounds sizes differently (1020 B -> 1008 B)."""
    cases: dict[Key, list[tuple[int, Key]]] = {}
    for key in keys:
        values = dict(key)
        if "size_bytes" in values:
            case = tuple(kv for kv in key if kv[0] != "size_bytes")
            cases.setdefault(case, []).append((int(values["size_bytes"]), key))
    bands = {}
    for members in cases.values():
        members.sort()
        sizes = [size for size, _key in members]
        for i, (_size, key) in enumerate(members):
            low = int((sizes[i - 1] * sizes[i]) ** 0.5) + 1 if i else None
            high = int((sizes[i] * sizes[i + 1]) ** 0.5) if i + 1 < len(sizes) else None
            bands[key] = (low, high)
    return bands


def row_rule(key: Key, percent: float, band: tuple[int | None, int | None] | None) -> Rule:
    """A thresholds-file rule for one row of the sweep (its size band, when it has a size)."""
    values = dict(key)
    threshold = Threshold(round(percent, 1), True)
    if band is None:  # a DDP row: one per strategy and world size in a sweep
        return Rule(
            threshold, primitive=values["primitive"], backend=values["backend"],
            strategy=values["strategy"], world_size=int(values["world_size"]),
        )  # fmt: skip
    return Rule(
        threshold, primitive=values["primitive"], backend=values["backend"],
        mode=values["mode"], dtype=values["dtype"], pattern=values["pattern"],
        world_size=int(values["world_size"]), min_size=band[0], max_size=band[1],
    )  # fmt: skip


def spread_thresholds(
    launches: dict[str, Launch], names: list[str], metric: str, margin: float, floor: float
) -> Thresholds:
    """Per row: the largest slowdown between any two of `names` (ratio r), as r ** margin - 1
    in percent, at least `floor`: what --write-thresholds ships for this box."""
    statistic = STATISTICS[metric]
    keys = sorted(next(iter(launches.values())))
    bands = size_bands(keys)
    rules = []
    for key in keys:
        level = [statistic(list(launches[n][key])) for n in names]
        worst = max(level) / min(level)
        rules.append(row_rule(key, max(floor, (worst**margin - 1) * 100), bands.get(key)))
    return Thresholds(Threshold(floor, True), tuple(rules))


def write_thresholds(thresholds: Thresholds, path: Path, about: str) -> None:
    """A thresholds TOML file that compare --thresholds reads: one rule per row."""
    lines = [f"# {line}" for line in about.splitlines()]
    lines += ["", f'default = "{thresholds.default}"']
    for rule in thresholds.rules:
        lines += ["", "[[rules]]"]
        for name in ("primitive", "backend", "mode", "dtype", "pattern", "strategy", "world_size"):
            value = getattr(rule, name)
            if value is not None:
                lines.append(f"{name} = {value}" if name == "world_size" else f'{name} = "{value}"')
        for name in ("min_size", "max_size"):
            if getattr(rule, name) is not None:
                lines.append(f'{name} = "{getattr(rule, name)}"')
        lines.append(f'threshold = "{rule.threshold}"')
    path.write_text("\n".join(lines) + "\n")
