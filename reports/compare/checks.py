"""Regression checks as tiny objects parsed from strings, pytest-benchmark style: `5%`,
`median:5%`, `busbw:10%`, `time_us_p50:20us` (absolute, in the metric's unit), and per-primitive or
size-band thresholds from a TOML file. A bare number is refused: `10` could mean 10 % or 10 GB/s.

Metrics know their direction: time up is worse, bandwidth and samples/s down are worse.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.parse import UsageError, format_size, missing_file_hint, parse_size
from distbench.primitives.facts import COMMANDS, FACTS
from distbench.reports.kinds import OWN_SECTION_PRIMITIVES, WINDOWED


@dataclass(frozen=True)
class Metric:
    """A compared quantity: its column in communication and DDP rows, and its direction."""

    name: str
    comm_column: str | None
    ddp_column: str | None
    higher_is_better: bool
    unit: str

    def column(self, kind: str) -> str | None:
        return self.comm_column if kind == "comm" else self.ddp_column  # ddp, pipeline


def _time_metric(stat: str) -> Metric:
    return Metric(f"time_us_{stat}", f"time_us_{stat}", f"step_time_us_{stat}", False, "us")


METRICS: dict[str, Metric] = {
    **{f"time_us_{s}": _time_metric(s) for s in ("p50", "mean", "min", "max", "p95", "p99")},
    "algbw_GBps": Metric("algbw_GBps", "algbw_GBps", None, True, "GB/s"),
    "busbw_GBps": Metric("busbw_GBps", "busbw_GBps", "comm_busbw_GBps", True, "GB/s"),
    "samples_per_s": Metric("samples_per_s", None, "samples_per_s", True, "samples/s"),
}
"""--metric names. time_us_* reads step_time_us_* in DDP rows, busbw_GBps comm_busbw_GBps."""

METRIC_ALIASES = {
    "median": "time_us_p50",
    "p50": "time_us_p50",
    "mean": "time_us_mean",
    "min": "time_us_min",
    "max": "time_us_max",
    "p95": "time_us_p95",
    "p99": "time_us_p99",
    "busbw": "busbw_GBps",
    "algbw": "algbw_GBps",
    "throughput": "samples_per_s",
    **{f"step_time_us_{s}": f"time_us_{s}" for s in ("p50", "mean", "min", "max", "p95", "p99")},
    "comm_busbw_GBps": "busbw_GBps",
}


def parse_metric(text: str) -> Metric:
    """'median' -> time_us_p50; any METRICS name or alias (case-insensitive)."""
    value = text.strip()
    by_lower = {name.lower(): name for name in METRICS}
    name = METRIC_ALIASES.get(value.lower(), by_lower.get(value.lower(), value))
    if name not in METRICS:
        raise UsageError(
            f"unknown metric '{text}': choose one of {', '.join(METRICS)} "
            f"(or {', '.join(a for a in METRIC_ALIASES if a.isalnum())})"
        )
    return METRICS[name]


UNITS = {"us": "us", "gb/s": "GB/s", "gbps": "GB/s", "samples/s": "samples/s"}
"""Units an absolute threshold may carry (lower-case spelling -> the metric's unit)."""


@dataclass(frozen=True)
class Threshold:
    """How much worse a metric may get: a percentage of the baseline, or an absolute amount."""

    value: float
    percent: bool
    unit: str = ""
    """The unit of an absolute amount (us, GB/s, samples/s); empty for a percentage."""

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else f"{self.value:g}{self.unit}"

    def check_unit(self, metric: Metric, where: str = "--threshold") -> None:
        """An absolute amount must be in the metric's unit."""
        if not self.percent and self.unit != metric.unit:
            raise UsageError(
                f"{where} {self} is in {self.unit} but {metric.name} is in {metric.unit}: "
                f"give a percentage (5%) or an amount in {metric.unit}"
            )

    def worse_by(self, baseline: float, current: float, metric: Metric) -> float:
        """How much worse current is than baseline, in this threshold's terms (negative:
        better). Percent of |baseline|; infinite when the baseline is 0 and current differs."""
        delta = baseline - current if metric.higher_is_better else current - baseline
        if not self.percent:
            return delta
        if baseline == 0:
            return 0.0 if delta == 0 else (float("inf") if delta > 0 else float("-inf"))
        return delta / abs(baseline) * 100.0


_THRESHOLD_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%|[A-Za-z/]*)\s*$")


def parse_threshold(text: str) -> Threshold:
    """'5%' -> 5 percent; '20us' -> 20 microseconds, '2GB/s' -> 2 GB/s (absolute amounts must
    name their unit: a bare '10' is refused)."""
    match = _THRESHOLD_RE.match(text)
    if match is not None and match.group(2) == "":
        raise UsageError(
            f"threshold '{text}' has no unit: write {text.strip()}% (of the baseline) or add the "
            "metric's unit (us, GB/s, samples/s)"
        )
    unit = match.group(2) if match else ""
    if match is None or (unit != "%" and unit.lower() not in UNITS):
        raise UsageError(
            f"'{text}' is not a threshold: use a percentage like 5% or an amount with its unit "
            "like 20us or 2GB/s, optionally after a metric: median:5%"
        )
    if unit == "%":
        return Threshold(float(match.group(1)), True)
    return Threshold(float(match.group(1)), False, UNITS[unit.lower()])


@dataclass(frozen=True)
class Check:
    """A regression check, e.g. `median:5%`: the metric (None: --metric) and its threshold."""

    metric: Metric | None
    threshold: Threshold


def parse_check(text: str) -> Check:
    """'5%', 'median:5%', 'busbw_GBps:10%', 'time_us_p50:20us' (a bare number is refused)."""
    metric_text, sep, threshold_text = text.rpartition(":")
    metric = parse_metric(metric_text) if sep else None
    return Check(metric, parse_threshold(threshold_text))


TEXT_KEYS = ("primitive", "backend", "mode", "dtype", "strategy", "pattern")
"""Rule keys matched as text against the row's cell."""


@dataclass(frozen=True)
class Rule:
    """One `[[rules]]` table of a thresholds file: which rows, and their threshold."""

    threshold: Threshold
    primitive: str | None = None
    backend: str | None = None
    mode: str | None = None
    dtype: str | None = None
    strategy: str | None = None
    pattern: str | None = None
    """send_recv's pattern (pingpong, window, ring)."""
    world_size: int | None = None
    min_size: int | None = None
    """Size band, bytes inclusive."""
    max_size: int | None = None

    def matches(self, values: dict[str, str]) -> bool:
        for column in TEXT_KEYS:
            wanted = getattr(self, column)
            if wanted is not None and values.get(column, "") != wanted:
                return False
        if self.world_size is not None and values.get("world_size") != str(self.world_size):
            return False
        if self.min_size is not None or self.max_size is not None:
            try:
                size = int(values.get("size_bytes", ""))
            except ValueError:
                return False  # DDP rows have no size: a size band never matches them
            if self.min_size is not None and size < self.min_size:
                return False
            if self.max_size is not None and size > self.max_size:
                return False
        return True

    def describe(self) -> str:
        parts = [
            f"{c}={getattr(self, c)}"
            for c in (*TEXT_KEYS, "world_size")
            if getattr(self, c) is not None
        ]
        if self.min_size is not None:
            parts.append(f"size>={format_size(self.min_size)}")
        if self.max_size is not None:
            parts.append(f"size<={format_size(self.max_size)}")
        return " ".join(parts) or "every row"


@dataclass(frozen=True)
class Thresholds:
    """The threshold of each row: the first matching rule, else the default."""

    default: Threshold
    rules: tuple[Rule, ...] = ()

    def check_units(self, metric: Metric) -> None:
        """Every absolute threshold must be in the metric's unit."""
        self.default.check_unit(metric)
        for rule in self.rules:
            rule.threshold.check_unit(metric, f"the rule for {rule.describe()}:")

    def for_row(self, values: dict[str, str]) -> Threshold:
        for rule in self.rules:
            if rule.matches(values):
                return rule.threshold
        return self.default


RULE_KEYS = ("threshold", *TEXT_KEYS, "world_size")


RULE_PRIMITIVES = (*FACTS, *WINDOWED, *OWN_SECTION_PRIMITIVES)
"""The primitive column's values (results.csv): torch's names, and the workloads'."""


def rule_primitive(name: str | None, where: str) -> str | None:
    """A rule's primitive as results.csv spells it: a command's name (allreduce, as sweep files
    and the command line spell it) is torch's (all_reduce); any other name matches no row."""
    if name is None or name in RULE_PRIMITIVES:
        return name
    if name in COMMANDS:
        return COMMANDS[name]
    raise UsageError(
        f"{where}: primitive '{name}' is no primitive's name: use one of "
        f"{', '.join(RULE_PRIMITIVES)} (a command's name such as allreduce works too)"
    )


def _rule(table: Any, where: str) -> Rule:
    if not isinstance(table, dict):
        raise UsageError(f'{where} is not a table: write [[rules]] with threshold = "5%"')
    unknown = set(table) - {*RULE_KEYS, "min_size", "max_size"}
    if unknown:
        raise UsageError(
            f"{where} has unknown keys {', '.join(sorted(unknown))}: use "
            f"{', '.join(RULE_KEYS)}, min_size, max_size"
        )
    if "threshold" not in table:
        raise UsageError(f'{where} has no threshold: add threshold = "5%"')

    def text(key: str) -> str | None:
        return str(table[key]) if key in table else None

    def size(key: str) -> int | None:
        return parse_size(str(table[key])) if key in table else None

    world_size = text("world_size")
    if world_size is not None and not world_size.isdigit():
        raise UsageError(f"{where}: world_size '{world_size}' is not a whole number, e.g. 8")
    return Rule(
        threshold=parse_threshold(str(table["threshold"])),
        primitive=rule_primitive(text("primitive"), where),
        backend=text("backend"),
        mode=text("mode"),
        dtype=text("dtype"),
        strategy=text("strategy"),
        pattern=text("pattern"),
        world_size=int(world_size) if world_size is not None else None,
        min_size=size("min_size"),
        max_size=size("max_size"),
    )


@dataclass(frozen=True)
class RuleFile:
    """A thresholds TOML file as read (--thresholds): its default (None: --threshold's), rules."""

    path: Path
    default: Threshold | None
    rules: tuple[Rule, ...]

    def thresholds(self, fallback: Threshold) -> Thresholds:
        return Thresholds(self.default or fallback, self.rules)


def read_rules(path: Path | str) -> RuleFile:
    """Read a thresholds TOML file:

    default = "5%"            # optional, else --threshold
    [[rules]]                 # first match wins
    primitive = "all_reduce"
    max_size = "64K"
    threshold = "20%"
    """
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        hint = missing_file_hint(path)
        raise UsageError(f"cannot read the thresholds file {path}: {hint}") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the name, bytes not UTF-8
        why = error.strerror if isinstance(error, OSError) else error
        raise UsageError(f"cannot read the thresholds file {path}: {why}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path} is not valid TOML: {error}") from None
    unknown = set(data) - {"default", "rules"}
    if unknown:
        raise UsageError(
            f"{path} has unknown keys {', '.join(sorted(unknown))}: use default and [[rules]]"
        )
    base = parse_threshold(str(data["default"])) if "default" in data else None
    rules = data.get("rules", [])
    if not isinstance(rules, list):
        raise UsageError(f"{path}: rules must be an array of tables, written [[rules]]")
    parsed = tuple(_rule(table, f"{path} rule {i + 1}") for i, table in enumerate(rules))
    return RuleFile(Path(path), base, parsed)
