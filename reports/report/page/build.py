"""`distbench report RUN_DIR [RUN_DIR ...]`: figures and tables from run directories.

    distbench report results/cluster-a results/cluster-b --out report-ab

Writes OUT/report.html (one self-contained page), OUT/report.md (GitHub-flavoured Markdown, the
figures embedded), OUT/fig-*.png and OUT/.distbench-report.json, the list of what it wrote (the next
report into OUT replaces those files and no others). OUT defaults to RUN_DIR-report next to one
argument and ./report for several, never inside an input folder (reports/outputs.py).
"""

# ruff: noqa: RUF001  (labels use Greek letters, the multiplication sign and en dashes on purpose)

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from distbench import __version__
from distbench.collectors.manifest import utc_now
from distbench.options.envsweep import inert_env_note
from distbench.parse import UsageError
from distbench.reports.compare.checks import Metric, parse_metric
from distbench.reports.kinds import OWN_SECTION_PRIMITIVES
from distbench.reports.load import Loaded, RunData, load_runs
from distbench.reports.outputs import check_out, default_out, prepare_out, record_outputs
from distbench.reports.render import (
    Section,
    TableOut,
    render_html,
    render_markdown,
)
from distbench.reports.repeats import keep_one_row_per_case
from distbench.reports.report import analysis as an
from distbench.reports.report.differs import section_differs
from distbench.reports.report.figures import collectives as fg
from distbench.reports.report.figures.drawing import drawing_session
from distbench.reports.report.launch_frames import pool_launches
from distbench.reports.report.pairs import split_matrix_rows
from distbench.reports.report.reference import Reference, read_references
from distbench.reports.report.sections.api import section_api
from distbench.reports.report.sections.collectives import section_collectives
from distbench.reports.report.sections.compare import section_compare
from distbench.reports.report.sections.ddp import section_ddp
from distbench.reports.report.sections.init import INIT
from distbench.reports.report.sections.overlap import OVERLAP
from distbench.reports.report.sections.pairs import section_pairs
from distbench.reports.report.sections.pipeline import section_pipeline
from distbench.reports.report.sections.ranks import section_rank_spread
from distbench.reports.report.sections.reference import section_reference
from distbench.reports.report.sections.rpc import RPC
from distbench.reports.report.shown import figure_dtypes, left_out
from distbench.reports.report.sources import SOURCES, assign_sources
from distbench.reports.report.verdicts import COMPARE
from distbench.reports.report.versions import older_meanings

COMPARED_FIELDS = {"host", "platform", "CPU", "memory", "GPUs", "python", "torch", "CUDA", "NCCL"}
COMPARED_FIELDS |= {"distbench", "environment", "worker environment"}
LAUNCH_PLUMBING = frozenset({"MASTER_ADDR", "MASTER_PORT"})
"""Worker variables torchrun sets anew for every launch (a free port): not a difference between
two clusters, so the report leaves them out of the worker environment (manifest.json keeps them)."""


@dataclass(frozen=True)
class ReportFiles:
    out: Path
    html: Path
    markdown: Path
    figures: list[Path]
    rows: int


def manifest_fields(run: RunData) -> dict[str, str]:
    m = run.manifest or {}
    labels = sorted(set(run.rows["label"])) if len(run.rows) else []
    memory = m.get("memory_bytes")
    gpus = m.get("gpus") or []
    sha = str(m.get("distbench_git_sha") or "")[:10]
    sha += " (uncommitted changes)" if m.get("distbench_git_dirty") else ""
    worker_env = {k: v for k, v in (m.get("worker_env") or {}).items() if k not in LAUNCH_PLUMBING}
    return {
        "run": run.name,
        "directory": str(run.path),
        "label": ", ".join(label for label in labels if label),
        "status": launches_text(run, "status") or str(m.get("status", "unknown (no manifest)")),
        "started (UTC)": launches_text(run, "started_utc") or str(m.get("started_utc") or ""),
        "host": str(m.get("host") or ", ".join(sorted(set(run.rows.get("host", []))))),
        "platform": str(m.get("platform") or ""),
        "CPU": cpu_text(m) if m else "",
        "memory": f"{memory / 2**30:.1f} GiB" if isinstance(memory, int | float) else "",
        "GPUs": f"{len(gpus)} × {', '.join(sorted(set(gpus)))}" if gpus else ("none" if m else ""),
        "python": str(m.get("python") or ""),
        "torch": str(m.get("torch") or ""),
        "CUDA": str(m.get("cuda") or "—"),
        "NCCL": str(m.get("nccl") or "—"),
        "distbench": f"{m.get('distbench_version', '')} {sha}".strip(),
        "command": launches_text(run, "command") or command_text(m),
        "environment": "; ".join(f"{k}={v}" for k, v in (m.get("env") or {}).items()) or "—",
        "worker environment": "; ".join(f"{k}={v}" for k, v in worker_env.items()) or "—",
        "rows": str(len(run.rows)),
    }


def command_text(manifest: dict) -> str:
    return " ".join(str(part) for part in manifest.get("command") or [])


def launches_text(run: RunData, field: str) -> str:
    """A night's launches drawn as one run: its `field` over them ('' for a run of its own, or
    where no launch recorded it). started_utc: the first to the last launch's start; command:
    one line with launch-N for the folder where the launches' commands differ only there, else
    each launch's; status: one value, else each launch's."""
    manifests = run.launch_manifests
    if len(manifests) < 2:
        return ""
    if field == "started_utc":
        starts = sorted(str(m["started_utc"]) for m in manifests if m.get("started_utc"))
        return f"{starts[0]} to {starts[-1]} ({len(manifests)} launches)" if starts else ""
    numbers = run.launch_numbers or tuple(range(1, len(manifests) + 1))
    values = [command_text(m) if field == "command" else str(m.get(field, "")) for m in manifests]
    if field == "command":
        masked = {LAUNCH_FOLDER.sub("launch-N", v) for v in values}
        if len(masked) == 1:
            return f"{masked.pop()} (N = {numbers_text(numbers)})"
    if len(set(values)) == 1:
        return values[0]
    return "; ".join(f"launch-{n}: {v}" for n, v in zip(numbers, values, strict=True))


def numbers_text(numbers: tuple[int, ...]) -> str:
    """'1 to 3' where they run without a gap, else '1, 2, 4'."""
    if list(numbers) == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{numbers[0]} to {numbers[-1]}"
    return ", ".join(str(n) for n in numbers)


LAUNCH_FOLDER = re.compile(r"launch-\d+")


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


def cpu_text(manifest: dict) -> str:
    """The CPU model and its logical CPUs (hardware threads), and how many the run could use
    where its affinity allowed fewer (v4's cpu_usable)."""
    logical, usable = manifest.get("cpu_cores", "?"), manifest.get("cpu_usable")
    text = f"{manifest.get('cpu_model', '')} × {logical} logical CPUs"
    return text + (f" ({usable} usable)" if usable is not None and usable != logical else "")


def section_what_ran(loaded: Loaded) -> Section:
    return Section(
        "What ran, on what",
        "From each run's manifest.json: hardware, software and the exact command.",
        tables=[manifests_table(loaded.runs)],
    )


def inert_env_notes(comm: pd.DataFrame) -> list[str]:
    """A note per backend whose rows swept NCCL_* variables with --env that it never reads
    (gloo): their combinations' differences are noise (envsweep.inert_env_note)."""
    if not len(comm) or "env" not in comm or "backend" not in comm:
        return []
    notes = []
    for backend, rows in comm.groupby(comm["backend"].astype(str), observed=True):
        names = sorted({n for e in rows["env"].astype(str) for n in re.findall(r"\bNCCL_\w+", e)})
        note = inert_env_note(names, str(backend))
        if note:
            notes.append(note.removeprefix("note: "))
    return notes


def row_counts(loaded: Loaded) -> str:
    """'37 communication rows, 6 overlap rows, 22 DDP rows and 10 pipeline rows': each kind of
    row the report read, named as its section is (communication: the collectives, send/recv and
    pairs; init, rpc and overlap rows have sections of their own)."""
    comm = loaded.comm
    primitive = comm["primitive"] if "primitive" in comm else pd.Series([], dtype=str)
    counts = [(int((~primitive.isin(OWN_SECTION_PRIMITIVES)).sum()), "communication")]
    counts += [(int((primitive == own).sum()), own) for own in OWN_SECTION_PRIMITIVES]
    counts += [(len(loaded.ddp), "DDP"), (len(loaded.pipeline), "pipeline")]
    parts = [f"{n} {name} row{'s' * (n != 1)}" for n, name in counts if n]
    if not parts:
        return "no rows"
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def report_metric(text: str) -> Metric:
    """--metric: a time compare takes (time_us_p50, p50, min ...); a bandwidth or a rate is
    refused (the report's speedups are time ratios)."""
    try:
        metric = parse_metric(text)
    except UsageError:
        metric = None
    if metric is None or metric.higher_is_better:
        raise UsageError(
            f"report --metric '{text}' is not a time: give p50 (the default), mean, min, max, p95 "
            "or p99 (the report's speedups are ratios of times)"
        )
    return metric


def build_report(
    paths: list[str],
    out: str | None = None,
    by: str = "auto",
    reference: str | None = None,
    opening: Section | None = None,
    metric: str = "time_us_p50",
) -> ReportFiles:
    """Load the runs, draw and tabulate, write OUT/report.html, OUT/report.md and the PNGs.
    `opening`: a section of the caller's put first (acceptance's verdict). `metric`: the time
    the runs are compared and judged on (--metric: p50, mean, min ...)."""
    if by not in SOURCES:
        raise UsageError(f"unknown --by '{by}': choose one of {', '.join(SOURCES)}")
    judged = report_metric(metric)
    target = Path(out) if out else default_out(paths)
    check_out(target)  # refused before minutes of drawing, not after
    references = read_references(Path(reference)) if reference else None  # before drawing
    with drawing_session():  # a child still drawing when the report fails is stopped
        return write_report(paths, target, by, references, opening, judged)


def write_report(
    paths: list[str],
    target: Path,
    by: str,
    references: list[Reference] | None,
    opening: Section | None = None,
    metric: Metric = COMPARE.chosen_metric,
) -> ReportFiles:
    """build_report's work once its arguments are checked."""
    loaded = load_runs([Path(p) for p in paths])
    pool_launches(loaded)  # a nightly's launch-N folders, as compare pools them
    by = assign_sources(loaded, by)
    keep_one_row_per_case(loaded)  # compare's rule for a case measured twice
    notes = list(loaded.notes) + inert_env_notes(loaded.comm)
    lines, pairs = split_matrix_rows(loaded.comm)
    lines = lines[~lines["primitive"].isin(OWN_SECTION_PRIMITIVES)].copy()  # init, rpc: below
    several = bool(len(lines)) and lines["source"].nunique() > 1
    lines["series"] = an.series_names(lines, with_source=several) if len(lines) else []

    dtypes = figure_dtypes(lines)  # a crowded panel's one dtype (shown.py)
    collective_notes: list[str] = []  # made first, so its figures draw while compare judges
    collectives = section_collectives(loaded, lines, collective_notes, dtypes)
    headline, compared = section_compare(loaded, notes, dtypes, metric)
    sections = [*([opening] if opening else []), section_what_ran(loaded), *compared]
    sections += section_differs(loaded, notes)  # next to the comparison (#12 §3)
    sections += section_reference(lines, references, notes)  # is my number OK? (#12 §5)
    sections += collectives
    notes += collective_notes
    sections += section_rank_spread(loaded, notes)  # --rank-samples: which rank was slow
    sections += section_api(lines, notes)  # --api: functional/compiled next to c10d (#15 §2)
    sections += section_pairs(pairs, notes, loaded)
    sections += section_ddp(loaded.ddp, notes)
    for own in (INIT, RPC, OVERLAP):  # distbench init, rpc (#13), overlap (#15 §1)
        sections += own.render(loaded.comm, notes)
    sections += section_pipeline(loaded.pipeline, notes)
    notes += left_out(lines, pairs, loaded.ddp, fg.MAX_SCALING_SIZES, dtypes)
    notes += older_meanings({"comm": loaded.comm, "ddp": loaded.ddp})
    prepare_out(target)
    figure_paths = []
    for section in sections:
        for figure in section.figures:
            path = target / figure.name
            path.write_bytes(figure.png)
            figure_paths.append(path)
    rows = len(loaded.comm) + len(loaded.ddp) + len(loaded.pipeline)
    sources = sorted({str(s) for f in (loaded.comm, loaded.ddp) for s in f.get("source", [])})
    compared = f"compared by {by}: {', '.join(sources)}"
    if len(sources) == 1:  # nothing to compare: say so, and by what a second source would come
        compared = f"one {by}, {sources[0]}: nothing compared (a second {by} would be)"
    lead = f"{len(loaded.runs)} run(s), {row_counts(loaded)}, {compared}."
    lead = "\n\n".join([*headline, lead])  # the headline opens the page (headline.py)
    footer = f"distbench {__version__} report, {utc_now()}, from {' '.join(paths)}"
    title = "distbench report"
    html_path, md_path = target / "report.html", target / "report.md"
    html_path.write_text(render_html(title, lead, sections, notes, footer), encoding="utf-8")
    md_path.write_text(render_markdown(title, lead, sections, notes, footer), encoding="utf-8")
    record_outputs(target, [html_path.name, md_path.name, *(p.name for p in figure_paths)])
    return ReportFiles(target, html_path, md_path, figure_paths, rows)
