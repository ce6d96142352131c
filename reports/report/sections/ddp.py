"""The report's DDP section: samples/s and scaling efficiency per strategy, the mean step time
split into compute and communication, and the strategies table (with fsdp's bytes and memory
where an fsdp row is present)."""

# ruff: noqa: RUF001  (labels use the multiplication sign on purpose)

from __future__ import annotations

import pandas as pd

from distbench.reports.render import Section, format_number
from distbench.reports.report import analysis as an
from distbench.reports.report.figures import ddp as fd
from distbench.reports.report.sections.collectives import CASE_NAMES, display, figure_out, titled

SHARDING_NAMES = {
    "gathered_MB": "all-gathered MB/step",
    "scattered_MB": "reduce-scattered MB/step",
    "peak_mem_MB": "peak mem MB",
}
"""fsdp's columns in the DDP table: shown only when some row is an fsdp row (or measured memory)."""


def sharding_columns(ddp: pd.DataFrame) -> dict[str, pd.Series]:
    """MB (1e6 bytes) all-gathered and reduce-scattered per step, and the peak memory with its
    source ("12.3 (rss_hwm)"), where any row has them; absent columns leave the table as before."""
    out: dict[str, pd.Series] = {}
    gathered = pd.to_numeric(ddp.get("allgather_bytes_per_step", pd.Series(dtype=float)))
    if (gathered.fillna(0) > 0).any():
        scattered = pd.to_numeric(ddp["reduce_scatter_bytes_per_step"])
        out["gathered_MB"] = gathered / 1e6
        out["scattered_MB"] = scattered / 1e6
    peak = pd.to_numeric(ddp.get("peak_mem_bytes", pd.Series(dtype=float)))
    if peak.notna().any():
        source = ddp["mem_source"].astype(str).map(lambda s: f" ({s})" if s else "")
        out["peak_mem_MB"] = (peak / 1e6).map(format_number) + source
    return out


def with_period(ddp: pd.DataFrame) -> pd.Series:
    """Each row's strategy, param-avg's with its period as the terminal prints it: 'param-avg
    K=2' (a max param diff that K = 1 would not have is then no failure)."""
    strategy = ddp["strategy"].astype(str)
    if "avg_every" not in ddp:
        return strategy
    period = pd.to_numeric(ddp["avg_every"], errors="coerce")
    return strategy.where(period.isna(), strategy + " K=" + period.astype("Int64").astype(str))


def section_ddp(ddp: pd.DataFrame, notes: list[str]) -> list[Section]:
    if ddp.empty:
        return []
    figures = figure_out(
        fd.plot_ddp_scaling(ddp.assign(line=an.ddp_lines(ddp), strategy=an.strategy_variants(ddp))),
        "fig-ddp-scaling.png",
        "samples/s of the whole job and scaling efficiency (n-rank throughput / n × 1-rank)",
        notes,
        "DDP scaling: the DDP rows hold a single world size",
    )
    figures += figure_out(
        fd.plot_ddp_split(an.ddp_split(ddp)),
        "fig-ddp-strategies.png",
        "mean step time = compute (the mean step of the row's comm_baseline, its own step without "
        "communication: ddp-nocomm for DDP's strategies, local for the manual strategies and FSDP) "
        "+ communication (the rest)",
        notes,
        "DDP strategies split: no row of a strategy's comm_baseline (ddp-nocomm, local) at two or "
        "more ranks to take compute from",
    )
    notes += [note for note in an.missing_baselines(ddp) if note not in notes]
    table = display(
        ddp.sort_values(["source", "world_size", "strategy"]).assign(
            strategy=with_period(ddp),
            step_ms=ddp["step_time_us_p50"] / 1e3,
            step_mean_ms=ddp["step_time_us_mean"] / 1e3,
            step_p95_ms=ddp["step_time_us_p95"] / 1e3,
            **sharding_columns(ddp),
        ),
        {
            **{k: v for k, v in CASE_NAMES.items() if k != "primitive"},
            "model": "model",
            "params": "params",
            "batch_size": "batch/rank",
            "bucket_mb": "bucket MB",
            "step_ms": "step p50 ms",
            "step_mean_ms": "step mean ms",
            "step_p95_ms": "step p95 ms",
            "samples_per_s": "samples/s",
            "scaling_efficiency": "scaling eff.",
            "comm_share": "comm share",
            "comm_baseline": "vs (comm baseline)",
            "comm_hidden_share": "comm hidden share",
            "max_param_diff": "max param diff",
            **SHARDING_NAMES,
        },
        (
            "step_ms",
            "step_mean_ms",
            "step_p95_ms",
            "samples_per_s",
            "scaling_efficiency",
            "comm_share",
            "comm_hidden_share",
            "max_param_diff",
            *SHARDING_NAMES,
        ),
    )
    return [
        Section(
            "DDP training steps",
            "grad-avg, grad-avg-flat and param-avg at K = 1 (plain SGD) must match ddp to float "
            "rounding: see max param diff (param-avg K=2 or more averages the parameters every K "
            "steps, so it drifts from ddp by design). samples/s, scaling and the strategies' bars "
            "use the mean step (a periodic strategy's p50 may be a step that sends nothing). comm "
            "share is the share of the mean step beyond the row's own step without communication, "
            "named under vs: ddp-nocomm for DDP's strategies, local for the manual ones and FSDP, "
            "so two rows' shares compare only where they name the same baseline.",
            figures=figures,
            tables=[titled(table, "DDP strategies")],
        )
    ]
