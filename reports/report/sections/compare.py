"""The report's comparison: the headline (headline.py) and the "Runs compared"
section, every speedup with its 95 % interval and compare's verdict (reports/report/verdicts.py),
and fig-compare (figures/compare.py). Tables cover every matched row (all-pairs rows too); the
figure draws the lines only.
"""

# ruff: noqa: RUF001  (en dashes on purpose)

from __future__ import annotations

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.reports.compare.checks import Metric
from distbench.reports.keydiff import explain_no_common_rows, key_differences
from distbench.reports.load import Loaded
from distbench.reports.render import FigureOut, Section, TableOut, size_cells
from distbench.reports.report import speedups as sp
from distbench.reports.report.figures.compare import plot_ratios
from distbench.reports.report.figures.drawing import later
from distbench.reports.report.headline import write_headline
from distbench.reports.report.pairs import split_matrix_rows
from distbench.reports.report.sections.collectives import (
    CASE_NAMES,
    FOLDED,
    display,
    figure_out,
    titled,
)
from distbench.reports.report.shown import Panel, of_dtype
from distbench.reports.report.sources import argument_names
from distbench.reports.report.uncertainty import speedup_cells, speedup_text
from distbench.reports.report.verdicts import (
    COMPARE,
    SourceVerdict,
    annotate,
    report_verdicts,
)
from distbench.reports.report.versions import drop_changed_meaning

HOW = (
    "Each time is the geometric mean over its side's launches. verdict: what `distbench compare "
    "BASELINE OTHER --metric METRIC` says of the row with its other defaults (5 % threshold; "
    "Benjamini-Hochberg over rows and bands): regressed (slower), improved (faster), no change "
    "seen (with the smallest slowdown it would have caught), or cannot tell (with why). [low, "
    "high]: the 95 % interval of the speedup with the launch as the unit: its variance holds the "
    "spread between launches, measured from the launches, or, while too few nights show it, the "
    "stated default; with one launch a side a cluster and a launch cannot be told apart, and only"
    " that assumed spread separates them. The default is the 90th percentile of a shared 2-core "
    "box's spread over its rows, so its intervals are wider than 95 % needs there (they held the "
    "truth in 99.8 % of simulated comparisons of one launch a side) and may be too narrow on a "
    "noisier machine. Beside a verdict (slower, faster) the interval is at the level of the test "
    "that chose it, printed beside it ('at 98.7 %'): wider than 95 % in a large comparison, "
    "narrower in a small one, and it always leaves out no change (docs/gate.md#the-interval-"
    "beside-a-verdict). With rows of several primitives compare judges each beyond the rest of the"
    " run: that speedup is shown beside. Method: docs/gate.md#how-sure-a-reports-comparison-is."
)
BEYOND = "beyond the rest of the run [interval]"
ONE_SOURCE = ("source", *FOLDED)
"""A comparison's tables fold the source too where one source is compared with the baseline:
its name goes into the note, as the columns that tell no row apart (collectives.display)."""
VERDICTS = ("verdict", "every size: verdict")
"""The columns of compare's verdicts, whose cells wrap on the page (render.TableOut.wrapped)."""


def beyond_cells(rows: pd.DataFrame) -> pd.Series:
    """The speedup beyond the rest of the run with its interval; empty where not judged so."""
    text = speedup_cells(
        rows["beyond"], rows["beyond_low"], rows["beyond_high"], rows.get("beyond_level")
    )
    return text.where(rows["beyond"].notna(), "")


def summary_table(
    ratios: pd.DataFrame, baseline: str, verdicts: dict[str, SourceVerdict]
) -> TableOut:
    summary = sp.ratio_summary(ratios, verdicts)
    summary["geomean"] = speedup_cells(
        summary["speedup_geomean"],
        summary["geomean_low"],
        summary["geomean_high"],
        summary["geomean_level"],
    )
    summary["speedup_largest"] = summary["speedup_largest"].map(speedup_text)
    summary["range"] = (
        summary["speedup_min"]
        .map(speedup_text)
        .str.cat(summary["speedup_max"].map(speedup_text), sep="–")
    )
    summary["called"] = summary["improved"].astype(str) + " / " + summary["regressed"].astype(str)
    table = display(
        summary,
        {
            **CASE_NAMES,
            "sizes": "sizes matched",
            "largest": "largest",
            "speedup_largest": "speedup (largest)",
            "geomean": "every size: geo. mean [interval]",
            "case_verdict": "every size: verdict",
            "called": "sizes improved / regressed",
            "range": "min–max",
        },
        ("speedup_largest", "geomean", "range"),
        folded=ONE_SOURCE,
    )
    note = (
        "every size: the geometric mean of the speedup over all sizes of the case, with its "
        "interval and compare's verdict on them together (the band of these rows); sizes "
        "improved (faster) / regressed (slower): how many sizes compare called so; min–max: the "
        "speedups' range over every size. An interval beside a verdict (slower, faster) is at "
        "the level printed beside it (docs: gate.md, the interval beside a verdict)."
    )
    return titled(table, f"Speedup over {baseline}", note=note, wrapped=VERDICTS)


def per_size_table(ratios: pd.DataFrame, baseline: str, metric: Metric) -> TableOut:
    ordered = ratios.sort_values(["source", "primitive", "world_size", "mode", "size_bytes"])
    column, stat = str(metric.comm_column), statistic(metric)
    shown = ordered.assign(
        size=size_cells(ordered),
        speedup=speedup_cells(
            ordered["speedup"], ordered["low"], ordered["high"], ordered.get("level")
        ),
        beyond=beyond_cells(ordered),
    )
    table = display(
        shown,
        {
            **CASE_NAMES,
            "size": "size",
            f"{column}_base": f"{baseline} {stat} µs",
            column: f"{stat} µs",
            "speedup": "speedup [interval]",
            "beyond": BEYOND,
            "verdict": "verdict",
        },
        (f"{column}_base", column, "speedup", "beyond"),
        folded=ONE_SOURCE,
    )
    return titled(table, "Speedup per size", markdown=False, collapsed=True, wrapped=VERDICTS)


def ddp_table(judged: pd.DataFrame, baseline: str, metric: Metric) -> TableOut:
    ordered = judged.sort_values(["source", "world_size", "strategy"])
    column, stat = str(metric.ddp_column), statistic(metric)
    shown = ordered.assign(
        speedup=speedup_cells(
            ordered["speedup"], ordered["low"], ordered["high"], ordered.get("level")
        ),
        beyond=beyond_cells(ordered),
    )
    table = display(
        shown,
        {
            **{k: v for k, v in CASE_NAMES.items() if k != "primitive"},  # always ddp
            "model": "model",
            f"{column}_base": f"{baseline} step {stat} µs",
            column: f"step {stat} µs",
            "speedup": "speedup [interval]",
            "beyond": BEYOND,
            "verdict": "verdict",
        },
        (f"{column}_base", column, "speedup", "beyond"),
        folded=ONE_SOURCE,
    )
    return titled(table, f"DDP step-time speedup over {baseline}", wrapped=VERDICTS)


def unmatched_sentences(loaded: Loaded) -> list[str]:
    """A sentence for each argument none of whose rows matches a row of the first argument for
    a reason one column of the case names (reports/keydiff.py: --env on one side, --api ...):
    without it such a report compares nothing and says nothing (#26 item 8)."""
    arguments = argument_names(loaded.arguments) if loaded.arguments else []
    sentences = []
    for frame, key in ((loaded.comm, COMM_MATCH_KEY), (loaded.ddp, DDP_MATCH_KEY)):
        if not len(frame) or frame["argument"].nunique() < 2:
            continue
        groups = dict(list(frame.groupby("argument", sort=True)))
        first, *others = groups
        for other in others:
            # each side's distinct keys: key_differences compares sets of keys, and a frame
            # of 5,000 rows made a dict per row (0.5 s of a 10,000-row report)
            base = groups[first][list(key)].drop_duplicates()
            current = groups[other][list(key)].drop_duplicates()
            if not key_differences(base, current, key):
                continue  # they share rows, or measured other things altogether
            names = (str(first), str(other))
            if arguments:
                names = (arguments[int(first)], arguments[int(other)])
            cause = explain_no_common_rows(base, current, key, names)
            sentences.append(
                f"Nothing of {names[1]} was compared with {names[0]}: none of its rows matches "
                f"one of {names[0]}, because {cause}."
            )
    return sentences


def statistic(metric: Metric) -> str:
    """The time's statistic as the tables name it: p50, min, mean ..."""
    return metric.name.removeprefix("time_us_")


def section_compare(
    loaded: Loaded,
    notes: list[str],
    dtypes: dict[Panel, str] | None = None,
    metric: Metric = COMPARE.chosen_metric,
) -> tuple[list[str], list[Section]]:
    """(the headline, the "Runs compared" section): both empty with a single source, but for
    the sentences that say why a run given was compared with nothing (unmatched_sentences).
    `dtypes`: the crowded panels' one dtype in fig-compare (shown.figure_dtypes). `metric`: the
    time compared and judged (report --metric; compare's default, the p50)."""
    comm, ddp = loaded.comm, loaded.ddp
    sources = [str(s) for s in (comm if len(comm) else ddp)["source"].cat.categories]
    unmatched = unmatched_sentences(loaded)
    notes += unmatched
    if len(sources) < 2:
        return unmatched, []
    baseline = sources[0]
    column, ddp_column, stat = str(metric.comm_column), str(metric.ddp_column), statistic(metric)
    ratios = sp.comm_ratios(comm, column) if len(comm) else pd.DataFrame()
    ratios, changed = drop_changed_meaning(ratios, "comm", column)
    notes += changed
    tables: list[TableOut] = []
    figures: list[FigureOut] = []
    judged = []
    ddp_ratios = sp.ddp_ratios(ddp, ddp_column) if len(ddp) else pd.DataFrame()
    ddp_ratios, changed = drop_changed_meaning(ddp_ratios, "ddp", ddp_column)
    notes += changed
    verdicts = report_verdicts(loaded, notes, metric) if len(ratios) or len(ddp_ratios) else {}
    if len(ratios):
        ratios = annotate(ratios, "comm", verdicts, metric)
        judged.append(ratios)
        drawn = of_dtype(split_matrix_rows(ratios)[0], dtypes or {})
        figures = figure_out(
            later(not drawn.empty, plot_ratios, drawn, baseline),
            "fig-compare.png",
            f"speedup = {baseline}'s {stat} time / this run's {stat} time (geometric means over "
            "each side's launches), per matched size; band: 95 % interval (beside a verdict its "
            "level, wider), the launch as the unit; "
            "points: compare's verdict of the row",
            notes,
            "runs compared: nothing matched",
        )
        tables += [
            summary_table(ratios, baseline, verdicts),
            per_size_table(ratios, baseline, metric),
        ]
    elif len(comm):
        notes.append(
            f"runs compared: no measurement of {baseline} (same case and size) is in another run"
        )
    if len(ddp_ratios):
        ddp_ratios = annotate(ddp_ratios, "ddp", verdicts, metric)
        judged.append(ddp_ratios)
        tables.append(ddp_table(ddp_ratios, baseline, metric))
    if not tables:
        return unmatched, []
    every = pd.concat([j[["source", "state", "detectable"]] for j in judged], ignore_index=True)
    return [write_headline(verdicts, baseline, every)], [
        Section(
            "Runs compared",
            f"Baseline: {baseline}. speedup = baseline {stat} time / {stat} time: above 1 is "
            f"faster (METRIC: {metric.name}, report --metric). "
            "Rows match on primitive, backend, device, world size, nodes, dtype, op, mode, "
            "root, src/dst, pattern and size (DDP: strategy and its configuration). " + HOW,
            figures=figures,
            tables=tables,
        )
    ]
