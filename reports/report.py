"""`distbench report RUN_DIR [RUN_DIR ...]`: figures and tables from run directories.

    distbench report results/cluster-a results/cluster-b --out report-ab

Writes OUT/report.html (one self-contained page), OUT/report.md (GitHub-flavoured Markdown) and
OUT/fig-*.png. OUT defaults to RUN_DIR/report for one argument and ./report for several.
"""

# ruff: noqa: RUF001  (labels use Greek letters, the multiplication sign and en dashes on purpose)

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from distbench import __version__
from distbench.collectors.manifest import utc_now
from distbench.parse import UsageError, format_size
from distbench.reports import analysis as an
from distbench.reports import figures as fg
from distbench.reports.load import Loaded, RunData, load_runs
from distbench.reports.render import (
    FigureOut,
    Section,
    TableOut,
    format_number,
    render_html,
    render_markdown,
)

SOURCES = ("auto", "label", "host", "run")
HTML_ROW_LIMIT = 5000
"""The full results table in report.html stops here (report.md never lists every row)."""
COMPARED_FIELDS = {"host", "platform", "CPU", "memory", "GPUs", "python", "torch", "CUDA", "NCCL"}
COMPARED_FIELDS |= {"distbench", "environment"}


@dataclass(frozen=True)
class ReportFiles:
    out: Path
    html: Path
    markdown: Path
    figures: list[Path]
    rows: int


def default_out(paths: list[str]) -> Path:
    """RUN_DIR/report for one argument (a file argument: next to it), ./report for several."""
    if len(paths) == 1:
        first = Path(paths[0])
        return (first.parent if first.is_file() else first) / "report"
    return Path("report")


def prepare_out(out: Path) -> Path:
    """Create OUT (or reuse a previous report's), dropping the previous report's figures."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: give a directory for the report")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("fig-*.png"):
            old.unlink()
    except OSError as error:
        raise UsageError(f"cannot write the report to {out}: {error.strerror}") from None
    return out


def png_bytes(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def display(frame: pd.DataFrame, names: dict[str, str], numeric: tuple[str, ...] = ()) -> TableOut:
    """Rename and format a frame for display; columns that are empty everywhere are dropped."""
    frame = frame[[c for c in names if c in frame.columns]].copy()
    for column in list(frame.columns):
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values) and (values.astype(str) == "").all():
            frame = frame.drop(columns=column)
        elif column in numeric:
            frame[column] = values.map(format_number)
        else:
            frame[column] = values.astype(str)
    shown = [names[c] for c in frame.columns]
    frame.columns = pd.Index(shown)
    return TableOut("", frame, numeric=tuple(names[c] for c in numeric if names[c] in shown))


def titled(table: TableOut, title: str, **extra: Any) -> TableOut:
    return TableOut(title, table.frame, numeric=table.numeric, **extra)


CASE_NAMES = {
    "source": "run",
    "primitive": "primitive",
    "strategy": "strategy",
    "backend": "backend",
    "world_size": "ranks",
    "mode": "mode",
    "dtype": "dtype",
    "op": "op",
    "root": "root",
    "pattern": "pattern",
    "src": "src",
    "dst": "dst",
}


def manifest_fields(run: RunData) -> dict[str, str]:
    m = run.manifest or {}
    labels = sorted(set(run.rows["label"])) if len(run.rows) else []
    memory = m.get("memory_bytes")
    gpus = m.get("gpus") or []
    sha = str(m.get("distbench_git_sha") or "")[:10]
    return {
        "run": run.name,
        "directory": str(run.path),
        "label": ", ".join(label for label in labels if label),
        "status": str(m.get("status", "unknown (no manifest)")),
        "started (UTC)": str(m.get("started_utc") or ""),
        "host": str(m.get("host") or ", ".join(sorted(set(run.rows.get("host", []))))),
        "platform": str(m.get("platform") or ""),
        "CPU": f"{m.get('cpu_model', '')} × {m.get('cpu_cores', '?')} cores" if m else "",
        "memory": f"{memory / 2**30:.1f} GiB" if isinstance(memory, int | float) else "",
        "GPUs": f"{len(gpus)} × {', '.join(sorted(set(gpus)))}" if gpus else ("none" if m else ""),
        "python": str(m.get("python") or ""),
        "torch": str(m.get("torch") or ""),
        "CUDA": str(m.get("cuda") or "—"),
        "NCCL": str(m.get("nccl") or "—"),
        "distbench": f"{m.get('distbench_version', '')} {sha}".strip(),
        "command": " ".join(str(part) for part in m.get("command") or []),
        "environment": "; ".join(f"{k}={v}" for k, v in (m.get("env") or {}).items()) or "—",
        "rows": str(len(run.rows)),
    }


def manifests_table(runs: list[RunData]) -> TableOut:
    """Fields down, runs across; hardware/software rows that differ between runs are marked."""
    columns = {run.name: manifest_fields(run) for run in runs}
    fields = list(next(iter(columns.values())))
    frame = pd.DataFrame({"": fields, **{name: list(f.values()) for name, f in columns.items()}})
    differs = tuple(
        i
        for i, name in enumerate(fields)
        if name in COMPARED_FIELDS and len({f[name] for f in columns.values()}) > 1
    )
    note = "Marked rows differ between runs." if differs else ""
    return TableOut("Runs and what they ran on", frame, note=note, highlight=differs, wrap=True)


def section_what_ran(loaded: Loaded) -> Section:
    return Section(
        "What ran, on what",
        "From each run's manifest.json: hardware, software and the exact command.",
        tables=[manifests_table(loaded.runs)],
    )


def figure_out(
    figure: Figure | None, name: str, caption: str, notes: list[str], why: str
) -> list[FigureOut]:
    if figure is None:
        notes.append(why)
        return []
    return [FigureOut(name, caption, png_bytes(figure))]


def section_collectives(loaded: Loaded, lines: pd.DataFrame, notes: list[str]) -> list[Section]:
    if lines.empty:
        return []
    points = an.sample_points(lines, loaded.samples)
    figures = figure_out(
        fg.plot_vs_size(points, "time_us", "time (µs)", "Time vs size (p50, band p5–p95)"),
        "fig-time-vs-size.png",
        "p50 time of the max-over-ranks samples; band: their p5–p95 (min–max with few samples)",
        notes,
        "time vs size: no rows",
    )
    positive = points[points["busbw_GBps"] > 0]
    figures += figure_out(
        fg.plot_vs_size(positive, "busbw_GBps", "busbw (GB/s)", "Bus bandwidth vs size"),
        "fig-busbw-vs-size.png",
        "busbw = size / time × factor (nccl-tests), GB/s = 1e9 B/s; band from the same samples",
        notes,
        "busbw vs size: every row has busbw 0 (one rank)",
    )
    scaling = an.scaling_rows(lines, fg.MAX_SCALING_SIZES)
    figures += figure_out(
        fg.plot_scaling(scaling),
        "fig-scaling.png",
        "p50 time and busbw at each world size, for a few sizes",
        notes,
        "scaling vs world size: no primitive was measured at two or more world sizes",
    )
    summary = display(
        an.summary_table(lines),
        {
            **CASE_NAMES,
            "sizes": "sizes",
            "small": "smallest",
            "small_p50_us": "p50 µs (smallest)",
            "large": "largest",
            "large_p50_us": "p50 µs (largest)",
            "large_busbw_GBps": "busbw GB/s (largest)",
            "peak_busbw_GBps": "peak busbw GB/s",
        },
        ("small_p50_us", "large_p50_us", "large_busbw_GBps", "peak_busbw_GBps"),
    )
    fit = display(
        an.fit_table(lines),
        {
            **CASE_NAMES,
            "alpha_us": "α µs",
            "beta_GBps": "β GB/s",
            "busbw_beta_GBps": "β × busbw factor GB/s",
            "r2": "R²",
            "rel_rms": "rel. RMS",
            "points": "sizes",
        },
        ("alpha_us", "beta_GBps", "busbw_beta_GBps", "r2", "rel_rms"),
    )
    all_rows = display(
        loaded.comm.sort_values(["source", "primitive", "world_size", "mode", "size_bytes"]).head(
            HTML_ROW_LIMIT
        ),
        {
            **CASE_NAMES,
            "size_bytes": "size B",
            "time_us_p50": "p50 µs",
            "time_us_p95": "p95 µs",
            "time_us_min": "min µs",
            "time_us_max": "max µs",
            "algbw_GBps": "algbw GB/s",
            "busbw_GBps": "busbw GB/s",
            "samples": "samples",
            "wrong": "wrong",
        },
        ("time_us_p50", "time_us_p95", "time_us_min", "time_us_max", "algbw_GBps", "busbw_GBps"),
    )
    total = len(loaded.comm)
    cut = f" (the first {HTML_ROW_LIMIT} of {total})" if total > HTML_ROW_LIMIT else ""
    return [
        Section(
            "Collectives and point-to-point",
            "Times are the p50 over samples of the slowest rank (max over ranks per sample).",
            figures=figures,
            tables=[titled(summary, "Key results")],
        ),
        Section(
            "Model fit: t = α + size / β",
            "Least squares on relative error (weights 1/t²) over every size of a line; α ≥ 0, "
            "β > 0. α is the time of an empty message, β the bandwidth large messages reach "
            "(size as in nccl-tests). R² on the times; rel. RMS = typical relative miss.",
            tables=[titled(fit, "Latency-bandwidth fit")],
        ),
        Section(
            "Every row",
            tables=[
                titled(all_rows, f"All results{cut}", markdown=False, collapsed=True),
            ],
        ),
    ]


def section_pairs(pairs: pd.DataFrame, notes: list[str]) -> list[Section]:
    if pairs.empty:
        return []
    matrices = an.pair_matrices(pairs)
    figures = figure_out(
        fg.plot_pairs(matrices),
        "fig-sendrecv-pairs.png",
        "algbw (GB/s) of each ordered pair, src rank down, dst rank across, at the largest size",
        notes,
        "send/recv pairs: no matrix",
    )
    tables = []
    for title, matrix in matrices:
        frame = matrix.map(format_number).reset_index().rename(columns={"src": "src \\ dst"})
        frame.columns = pd.Index([str(c) for c in frame.columns])
        numeric = tuple(str(c) for c in matrix.columns)
        tables.append(TableOut(f"algbw GB/s: {title}", frame, numeric=numeric))
    return [Section("send/recv: every pair", figures=figures, tables=tables)]


def section_ddp(ddp: pd.DataFrame, notes: list[str]) -> list[Section]:
    if ddp.empty:
        return []
    figures = figure_out(
        fg.plot_ddp_scaling(ddp),
        "fig-ddp-scaling.png",
        "samples/s of the whole job and scaling efficiency (n-rank throughput / n × 1-rank)",
        notes,
        "DDP scaling: the DDP rows hold a single world size",
    )
    figures += figure_out(
        fg.plot_ddp_split(an.ddp_split(ddp)),
        "fig-ddp-strategies.png",
        "step time p50 = compute (the ddp-nocomm strategy's p50) + communication (the rest)",
        notes,
        "DDP strategies split: no ddp-nocomm row at two or more ranks to take compute from",
    )
    table = display(
        ddp.sort_values(["source", "world_size", "strategy"]).assign(
            step_ms=ddp["step_time_us_p50"] / 1e3, step_p95_ms=ddp["step_time_us_p95"] / 1e3
        ),
        {
            **{k: v for k, v in CASE_NAMES.items() if k != "primitive"},
            "model": "model",
            "params": "params",
            "batch_size": "batch/rank",
            "bucket_mb": "bucket MB",
            "step_ms": "step p50 ms",
            "step_p95_ms": "step p95 ms",
            "samples_per_s": "samples/s",
            "scaling_efficiency": "scaling eff.",
            "comm_share": "comm share",
            "overlap": "overlap",
            "max_param_diff": "max param diff",
        },
        (
            "step_ms",
            "step_p95_ms",
            "samples_per_s",
            "scaling_efficiency",
            "comm_share",
            "overlap",
            "max_param_diff",
        ),
    )
    return [
        Section(
            "DDP training steps",
            "grad-avg, grad-avg-flat and param-avg (K = 1, plain SGD) must match ddp to float "
            "rounding: see max param diff.",
            figures=figures,
            tables=[titled(table, "DDP strategies")],
        )
    ]


def section_compare(comm: pd.DataFrame, ddp: pd.DataFrame, notes: list[str]) -> list[Section]:
    """Tables over every matched row (all-pairs rows too); the figure draws the lines only."""
    lines = comm
    sources = [str(s) for s in (lines if len(lines) else ddp)["source"].cat.categories]
    if len(sources) < 2:
        return []
    baseline = sources[0]
    ratios = an.comm_ratios(lines) if len(lines) else pd.DataFrame()
    tables: list[TableOut] = []
    figures: list[FigureOut] = []
    if len(ratios):
        figures = figure_out(
            fg.plot_ratios(an.split_matrix_rows(ratios)[0], baseline),
            "fig-compare.png",
            f"speedup = {baseline}'s p50 time / this run's p50 time, per matched size",
            notes,
            "runs compared: nothing matched",
        )
        summary = display(
            an.ratio_summary(ratios),
            {
                **CASE_NAMES,
                "sizes": "sizes matched",
                "largest": "largest",
                "speedup_largest": "speedup (largest)",
                "speedup_geomean": "speedup (geo. mean)",
                "speedup_min": "min",
                "speedup_max": "max",
            },
            ("speedup_largest", "speedup_geomean", "speedup_min", "speedup_max"),
        )
        tables.append(titled(summary, f"Speedup over {baseline}"))
        per_size = display(
            ratios.sort_values(["source", "primitive", "world_size", "mode", "size_bytes"]).assign(
                size=ratios["size_bytes"].map(format_size)
            ),
            {
                **CASE_NAMES,
                "size": "size",
                "time_us_p50_base": f"{baseline} p50 µs",
                "time_us_p50": "p50 µs",
                "speedup": "speedup",
            },
            ("time_us_p50_base", "time_us_p50", "speedup"),
        )
        tables.append(titled(per_size, "Speedup per size", markdown=False, collapsed=True))
    elif len(lines):
        notes.append(
            f"runs compared: no measurement of {baseline} (same case and size) is in another run"
        )
    ddp_ratios = an.ddp_ratios(ddp) if len(ddp) else pd.DataFrame()
    if len(ddp_ratios):
        ddp_table = display(
            ddp_ratios.sort_values(["source", "world_size", "strategy"]),
            {
                **CASE_NAMES,
                "model": "model",
                "step_time_us_p50_base": f"{baseline} step p50 µs",
                "step_time_us_p50": "step p50 µs",
                "speedup": "speedup",
            },
            ("step_time_us_p50_base", "step_time_us_p50", "speedup"),
        )
        tables.append(titled(ddp_table, f"DDP step-time speedup over {baseline}"))
    if not tables:
        return []
    return [
        Section(
            "Runs compared",
            f"Baseline: {baseline}. speedup = baseline p50 time / p50 time: above 1 is faster. "
            "Rows match on primitive, backend, device, world size, dtype, op, mode, root, "
            "src/dst, pattern and size (DDP: strategy and its configuration).",
            figures=figures,
            tables=tables,
        )
    ]


def build_report(paths: list[str], out: str | None = None, by: str = "auto") -> ReportFiles:
    """Load the runs, draw and tabulate, write OUT/report.html, OUT/report.md and the PNGs."""
    if by not in SOURCES:
        raise UsageError(f"unknown --by '{by}': choose one of {', '.join(SOURCES)}")
    target = Path(out) if out else default_out(paths)
    if target.exists() and not target.is_dir():  # refused before minutes of drawing, not after
        raise UsageError(f"--out {target} is a file: give a directory for the report")
    loaded = load_runs([Path(p) for p in paths])
    an.check_common(loaded, paths)
    by = an.assign_sources(loaded, by)
    notes = list(loaded.notes)
    lines, pairs = an.split_matrix_rows(loaded.comm)
    lines = lines.copy()
    several = bool(len(lines)) and lines["source"].nunique() > 1
    lines["series"] = an.series_names(lines, with_source=several) if len(lines) else []
    sections = [section_what_ran(loaded)]
    sections += section_compare(loaded.comm, loaded.ddp, notes)
    sections += section_collectives(loaded, lines, notes)
    sections += section_pairs(pairs, notes)
    sections += section_ddp(loaded.ddp, notes)
    prepare_out(target)
    figure_paths = []
    for section in sections:
        for figure in section.figures:
            path = target / figure.name
            path.write_bytes(figure.png)
            figure_paths.append(path)
    rows = len(loaded.comm) + len(loaded.ddp)
    sources = sorted({str(s) for f in (loaded.comm, loaded.ddp) for s in f.get("source", [])})
    lead = (
        f"{len(loaded.runs)} run(s), {len(loaded.comm)} communication rows and "
        f"{len(loaded.ddp)} DDP rows, compared by {by}: {', '.join(sources)}."
    )
    footer = f"distbench {__version__} report, {utc_now()}, from {' '.join(paths)}"
    title = "distbench report"
    html_path, md_path = target / "report.html", target / "report.md"
    html_path.write_text(render_html(title, lead, sections, notes, footer), encoding="utf-8")
    md_path.write_text(render_markdown(title, lead, sections, notes, footer), encoding="utf-8")
    return ReportFiles(target, html_path, md_path, figure_paths, rows)
