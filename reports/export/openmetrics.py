"""OpenMetrics text (the Prometheus exposition format's successor, which prometheus-client and
Prometheus read): one gauge sample per row and metric, labelled with what identifies the row
(COMM_MATCH_KEY: primitive, size_bytes, dtype, world_size, nnodes, backend, op, placement, api
... and the run's --label). No run-id label: a new run would be a new series, without bound.

When the run was made is `distbench_run_end_timestamp_seconds` (the run's end, manifest
ended_utc; a folder of runs: the last one's), the way a batch job reports its last run:
node_exporter's textfile collector skips a file whose samples carry their own timestamps, and
the Pushgateway refuses them. With `--sample-timestamps` every sample carries that time instead
(for `promtool tsdb create-blocks-from openmetrics`, which needs one).

    # TYPE distbench_busbw_bytes_per_second gauge
    # UNIT distbench_busbw_bytes_per_second bytes_per_second
    distbench_busbw_bytes_per_second{primitive="all_reduce",size_bytes="1024",...} 485420.4
    # EOF
"""

from __future__ import annotations

from collections.abc import Callable

from distbench.collectors.schema import COMM_MATCH_KEY
from distbench.reports.export.rows import ExportRun, number
from distbench.reports.runs import Row

PREFIX = "distbench_"
LABELS = (*COMM_MATCH_KEY, "label")
"""A row's labels: its case and size (compare's match key) and the run's --label."""


def scaled(column: str, factor: float) -> Callable[[Row], float | None]:
    def value(row: Row) -> float | None:
        found = number(row, column)
        return found * factor if found is not None else None

    return value


def checked_wrong(row: Row) -> float | None:
    wrong = number(row, "wrong")
    return wrong if wrong is not None and wrong >= 0 else None


METRICS: tuple[tuple[str, str, str, Callable[[Row], float | None]], ...] = (
    (
        "time_p50_seconds",
        "seconds",
        "Median time per op of the slowest rank (results.csv time_us_p50).",
        scaled("time_us_p50", 1e-6),
    ),
    (
        "time_mean_seconds",
        "seconds",
        "Mean time per op of the slowest rank over the trials (results.csv time_us_mean).",
        scaled("time_us_mean", 1e-6),
    ),
    (
        "algbw_bytes_per_second",
        "bytes_per_second",
        "size_bytes / the p50 time (results.csv algbw_GBps x 1e9); absent at world size 1.",
        scaled("algbw_GBps", 1e9),
    ),
    (
        "busbw_bytes_per_second",
        "bytes_per_second",
        "algbw x nccl-tests' bus factor (results.csv busbw_GBps x 1e9); absent at world size 1.",
        scaled("busbw_GBps", 1e9),
    ),
    (
        "wrong_elements",
        "",
        "Wrong elements that --check found; absent where the row was not checked.",
        checked_wrong,
    ),
)
"""(name after the prefix, OpenMetrics unit, HELP, the row's value or None: no sample)."""


def render_openmetrics(run: ExportRun, sample_timestamps: bool = False) -> str:
    """The run's rows as an OpenMetrics exposition, ending in `# EOF`."""
    ended = run.ended
    stamp = f" {ended.timestamp():.3f}" if ended and sample_timestamps else ""
    lines: list[str] = []
    for name, unit, help_text, value_of in METRICS:
        samples = [(row, value_of(row)) for row in run.rows]
        family = [f"{PREFIX}{name}{labels_of(row)} {value!r}{stamp}" for row, value in samples
                  if value is not None]  # fmt: skip
        if family:
            lines += header(PREFIX + name, unit, help_text) + family
    if ended is not None:
        name = f"{PREFIX}run_end_timestamp_seconds"
        runs = sorted({(r.values.get("backend", ""), r.values.get("label", "")) for r in run.rows})
        lines += header(name, "seconds", "When the run ended (manifest ended_utc), Unix time.")
        lines += [
            f'{name}{{backend="{escape(b)}",label="{escape(lb)}"}} {ended.timestamp()!r}{stamp}'
            for b, lb in runs
        ]
    return "\n".join([*lines, "# EOF"]) + "\n"


def header(name: str, unit: str, help_text: str) -> list[str]:
    lines = [f"# TYPE {name} gauge"]
    lines += [f"# UNIT {name} {unit}"] if unit else []
    return [*lines, f"# HELP {name} {escape(help_text)}"]


def labels_of(row: Row) -> str:
    pairs = ",".join(f'{label}="{escape(row.values.get(label, ""))}"' for label in LABELS)
    return "{" + pairs + "}"


def escape(text: str) -> str:
    """OpenMetrics' escapes in label values and HELP: backslash, double quote, line feed."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
