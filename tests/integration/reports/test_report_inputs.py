"""distbench report builds its report from what the user gave (#21 §4), on real gloo runs made here
with the real CLI. The half that launches or runs for seconds; the in-process half, and the file's
whole story: tests/unit/reports/test_report_inputs.py."""

# ruff: noqa: RUF001  (titles use the middle dot and en dashes on purpose)

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from distbench.cli.app import run_cli as run_in_process
from distbench.reports.load import Loaded, load_runs
from distbench.reports.outputs import REPORT_LIST
from distbench.reports.repeats import keep_one_row_per_case
from distbench.reports.report import analysis as an
from distbench.reports.report.figures import collectives as fg
from distbench.reports.report.figures import ddp as fd
from distbench.reports.report.pairs import split_matrix_rows
from distbench.reports.report.shown import left_out
from distbench.reports.report.sources import assign_sources
from tests.conftest import run_cli, usage_error_line
from tests.paths import DATA
from tests.unit.reports.test_report_inputs import notes_of, report_md

QUICK = ("--backend", "gloo", "--iters", "2", "--warmup", "1", "--trials", "3")
DDP = ("ddp", "--backend", "gloo", "--strategies", "ddp,ddp-nocomm", "--params", "100K")
DDP_QUICK = ("--steps", "4", "--warmup", "1")
BOX = {  # one box's runs, no --label (as the README's examples)
    "allreduce": (
        "allreduce", "--world-sizes", "2,3", "--sizes", "1K,64K", "--dtype", "float32,bfloat16",
        "--mode", "both", *QUICK,
    ),
    "broadcast": ("broadcast", "--world-sizes", "2", "--sizes", "1K,64K", *QUICK),
    "sendrecv": (
        "sendrecv", "--world-sizes", "2", "--pairs", "all", "--pattern", "pingpong",
        "--sizes", "1K,64K", *QUICK,
    ),
    "ddp": (*DDP, "--world-sizes", "1,2", *DDP_QUICK),
}  # fmt: skip
OTHER = {  # a second "cluster": the cases in common with BOX, measured again
    "allreduce": ("allreduce", "--world-sizes", "2", "--sizes", "1K,64K", *QUICK),
    "ddp": (*DDP, "--world-sizes", "2", *DDP_QUICK),
}


def make_runs(folder: Path, commands: Mapping[str, tuple[str, ...]]) -> Path:
    for name, args in commands.items():
        done = run_cli(*args, "--out", str(folder / name))
        assert done.returncode == 0, done.stderr[-2000:]
    return folder


@pytest.fixture(scope="module")
def fold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fold/cluster-a: an all_reduce, a broadcast, a send/recv and a ddp run; fold/cluster-b: an
    all_reduce and a ddp run sharing cases with them. About two minutes on the shared 2-core box."""
    root = tmp_path_factory.mktemp("fold")
    make_runs(root / "cluster-a", BOX)
    make_runs(root / "cluster-b", OTHER)
    return root


def without_footer(text: str) -> str:
    """report.md less its last line (the footer names the arguments and the time)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("_distbench "))


def loaded_of(*paths: Path, by: str = "auto") -> Loaded:
    loaded = load_runs(list(paths))
    assign_sources(loaded, by)
    keep_one_row_per_case(loaded)
    return loaded


def line_rows(loaded: Loaded) -> pd.DataFrame:
    lines = split_matrix_rows(loaded.comm)[0].copy()
    lines["series"] = an.series_names(lines, with_source=lines["source"].nunique() > 1)
    return lines


def test_the_runs_one_by_one_give_the_report_of_their_parent(fold: Path, tmp_path: Path) -> None:
    box = fold / "cluster-a"
    runs = sorted(box.iterdir())  # the order in which the folder scan finds them
    assert run_in_process(["report", *map(str, runs), "--out", str(tmp_path / "each")]) == 0
    assert run_in_process(["report", str(box), "--out", str(tmp_path / "parent")]) == 0
    each, parent = report_md(tmp_path / "each"), report_md(tmp_path / "parent")
    assert without_footer(each) == without_footer(parent)
    assert "4 run(s), " in each and "one host, vm: nothing compared" in each  # one source: merged
    for primitive in ("all_reduce", "broadcast"):
        assert f"| vm | {primitive} |" in each  # many primitives in one report
    assert "**algbw GB/s: vm · 2 ranks · 64K float32**" in each  # send/recv, every pair
    assert "**DDP strategies**" in each
    figures = sorted(p.name for p in (tmp_path / "each").glob("fig-*.png"))
    assert figures == sorted(p.name for p in (tmp_path / "parent").glob("fig-*.png"))
    assert "fig-scaling.png" in figures and "fig-ddp-strategies.png" in figures
    for name in figures:  # drawn from the same rows: the same pixels
        assert (tmp_path / "each" / name).read_bytes() == (tmp_path / "parent" / name).read_bytes()


@pytest.mark.parametrize("by", [[], ["--by", "argument"]])
def test_unlabelled_folders_are_sources_named_after_them(
    by: list[str], fold: Path, tmp_path: Path
) -> None:
    clusters = [str(fold / "cluster-a"), str(fold / "cluster-b")]
    assert run_in_process(["report", *clusters, *by, "--out", str(tmp_path / "out")]) == 0
    text = report_md(tmp_path / "out")
    assert "compared by argument: cluster-a, cluster-b." in text
    assert "**Speedup over cluster-a**" in text
    assert "**DDP step-time speedup over cluster-a**" in text  # not dropped in silence
    ddp = text.split("**DDP step-time speedup")[1].split("\n\n## ")[0]
    assert "| ddp-nocomm |" in ddp and "every row: cluster-b" in ddp  # the one compared source


def test_the_same_run_given_twice_is_used_once_with_a_note(fold: Path, tmp_path: Path) -> None:
    run = fold / "cluster-a" / "allreduce"
    assert run_in_process(["report", str(run), str(run), "--out", str(tmp_path / "twice")]) == 0
    text = report_md(tmp_path / "twice")
    assert "1 run(s), 16 communication rows" in text
    assert f"{run} is the run {run}, given twice: it is used once" in notes_of(text)
    parent = fold / "cluster-a"
    assert run_in_process(["report", str(parent), str(run), "--out", str(tmp_path / "in")]) == 0
    text = report_md(tmp_path / "in")
    assert "4 run(s), " in text
    assert f"{run} is the run {run}, given twice: it is used once" in notes_of(text)


def test_a_users_file_in_out_survives(
    fold: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "paper"
    out.mkdir()
    draft = out / "fig-paper-draft.png"
    draft.write_bytes(b"the user's figure")
    box = fold / "cluster-a"
    assert run_in_process(["report", str(box), "--out", str(out)]) == 0
    assert draft.read_bytes() == b"the user's figure"
    listed = json.loads((out / REPORT_LIST).read_text())["files"]
    assert "fig-paper-draft.png" not in listed and "fig-scaling.png" in listed
    assert {"report.html", "report.md"} <= set(listed)
    # a report with fewer figures replaces the previous one: its figures go, the user's stays
    assert run_in_process(["report", str(box / "broadcast"), "--out", str(out)]) == 0
    assert draft.read_bytes() == b"the user's figure"
    assert not (out / "fig-scaling.png").exists()
    written = set(json.loads((out / REPORT_LIST).read_text())["files"])
    assert written == {p.name for p in out.iterdir()} - {"fig-paper-draft.png", REPORT_LIST}
    # pages no report wrote are never overwritten: one line, exit 2, the file as it was
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "report.md").write_text("my notes\n")
    line = usage_error_line(["report", str(box), "--out", str(mine)], capsys)
    assert line == (
        f"distbench: error: --out {mine} holds report.md that no distbench report wrote: "
        "give another --out, or move the file(s)"
    )
    assert (mine / "report.md").read_text() == "my notes\n"
    assert not (mine / "fig-scaling.png").exists()


def test_default_out_is_outside_the_inputs_and_report_folders_are_skipped(
    fold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results"
    shutil.copytree(fold / "cluster-a", results)
    monkeypatch.chdir(tmp_path)
    assert run_in_process(["report", "results"]) == 0
    assert (tmp_path / "results-report" / "report.md").is_file()
    assert [p.name for p in results.iterdir() if not (p / "results.csv").exists()] == []
    assert run_in_process(["report", "results", "--out", "results/report"]) == 0  # by hand
    everything = sorted(str(p.relative_to(tmp_path)) for p in results.iterdir())  # results/*
    assert "results/report" in everything
    assert run_in_process(["report", *everything]) == 0
    text = report_md(tmp_path / "report")
    assert "results/report is a report folder, not a run: skipped" in notes_of(text)
    assert "4 run(s), " in text
    assert run_in_process(["report", "results"]) == 0  # the scan finds no run in results/report
    assert "4 run(s), " in report_md(tmp_path / "results-report")


def test_scaling_shows_every_dtype_and_mode(fold: Path) -> None:
    lines = line_rows(loaded_of(fold / "cluster-a" / "allreduce"))
    rows = an.scaling_rows(lines, fg.MAX_SCALING_SIZES)
    assert sorted(rows["panel"].unique()) == ["all_reduce · latency", "all_reduce · throughput"]
    assert sorted(rows["line"].unique()) == [
        "allreduce · gloo bfloat16",
        "allreduce · gloo float32",
    ]
    assert len(rows) == 2 * 2 * 2 * 2  # modes x dtypes x sizes x world sizes
    figure = fg.plot_scaling(rows)
    assert figure is not None
    titles = sorted({ax.get_title() for ax in figure.axes})
    assert titles == ["all_reduce · latency", "all_reduce · throughput"]
    for ax in figure.axes:  # each panel draws both dtypes at both sizes
        labels = sorted(line.get_label() for line in ax.get_lines())
        assert labels == [
            "1K · allreduce · gloo bfloat16",
            "1K · allreduce · gloo float32",
            "64K · allreduce · gloo bfloat16",
            "64K · allreduce · gloo float32",
        ]


def test_what_the_figures_leave_out_is_listed(fold: Path, tmp_path: Path) -> None:
    box = fold / "cluster-a"
    assert run_in_process(["report", str(box), "--out", str(tmp_path / "out")]) == 0
    notes = notes_of(report_md(tmp_path / "out"))
    assert (
        "fig-sendrecv-pairs draws each ordered pair at its largest size only; the pairs' times "
        "at 1K are not drawn (every measurement is in report.html's table of every row)"
    ) in notes
    one = "fig-scaling leaves out broadcast · throughput: measured at one world size (2 ranks)"
    assert one in notes
    lines = line_rows(loaded_of(box / "allreduce"))
    rows = an.scaling_rows(lines, most_sizes=1)
    assert set(rows["size"]) == {"1K"}
    assert left_out(lines, lines.iloc[0:0], lines.iloc[0:0], 1) == [
        f"fig-scaling draws 1 of the 2 sizes of all_reduce · {mode} (1K); not drawn: 64K "
        "(every measurement is in report.html's table of every row)"
        for mode in ("latency", "throughput")
    ]


def overlapping_titles(figure: Figure) -> list[str]:
    """Titles (the figure's and each panel's) that a figure legend covers, or 'outside'."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    titles = [ax.title for ax in figure.axes if ax.get_visible() and ax.get_title()]
    suptitle = getattr(figure, "_suptitle", None)  # matplotlib keeps it out of figure.texts
    titles += [suptitle] if suptitle is not None else []
    covered = []
    for legend in figure.legends:
        box = legend.get_window_extent(renderer)
        covered += [t.get_text() for t in titles if box.overlaps(t.get_window_extent(renderer))]
        if box.x0 < 0 or box.y0 < 0 or box.x1 > figure.bbox.x1 or box.y1 > figure.bbox.y1:
            covered.append("outside the figure")
    return covered


def legend_colours(figure: Figure) -> list[tuple[float, ...]]:
    (legend,) = figure.legends
    return [to_rgb(h.get_color()) for h in legend.legend_handles]  # type: ignore[union-attr]


def figures_of(loaded: Loaded) -> dict[str, Figure | None]:
    lines = line_rows(loaded)
    points = an.sample_points(lines, loaded.samples)
    ddp = loaded.ddp.assign(line=an.ddp_lines(loaded.ddp))
    return {
        "time": fg.plot_vs_size(points, "time_us", "time (µs)", "Time vs size (p50, p5–p95)"),
        "scaling": fg.plot_scaling(an.scaling_rows(lines, fg.MAX_SCALING_SIZES)),
        "fit": fg.plot_fit(lines, an.fit_table(lines)),
        "ddp": fd.plot_ddp_scaling(ddp),
        "split": fd.plot_ddp_split(an.ddp_split(loaded.ddp)),
    }


def test_legends_never_cover_titles(fold: Path) -> None:
    loaded = loaded_of(fold / "cluster-a", fold / "cluster-b")
    for name, figure in figures_of(loaded).items():
        if figure is not None:
            assert overlapping_titles(figure) == [], name
    # long names (a cluster called by its full site name) make a wide legend, over one panel
    lines = line_rows(loaded)
    lines = lines[(lines["primitive"] == "all_reduce") & (lines["mode"] == "latency")].copy()
    lines["series"] = "site-of-the-long-name-" + lines["series"] + " · with its full description"
    points = an.sample_points(lines, loaded.samples)
    wide = fg.plot_vs_size(points, "time_us", "time (µs)", "Time vs size (p50, p5–p95)")
    assert wide is not None and overlapping_titles(wide) == []


def test_no_two_lines_share_a_colour(fold: Path) -> None:
    loaded = loaded_of(fold / "cluster-a", fold / "cluster-b")
    figures = figures_of(loaded)
    for name in ("time", "scaling", "fit"):
        figure = figures[name]
        assert figure is not None
        colours = legend_colours(figure)
        assert len(colours) == len(set(colours)) >= 4, name
    scaling = figures["scaling"]
    assert scaling is not None
    styles = {line.get_label(): line.get_linestyle() for ax in scaling.axes for line in ax.lines}
    assert styles["1K · cluster-a · gloo bfloat16"] != styles["1K · cluster-a · gloo float32"]
    ddp = figures["ddp"]  # two strategies of two sources (cluster-a at 1 and 2 ranks)
    assert ddp is not None
    (legend,) = ddp.legends
    looks = {  # label: colour, marker, line style
        text.get_text(): (to_rgb(handle.get_color()), handle.get_marker(), handle.get_linestyle())  # type: ignore[union-attr]
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True)
    }
    assert len(looks) == 4 == len(set(looks.values()))  # every line looks its own
    by_strategy: dict[str, set[tuple[float, ...]]] = {}  # its lines' colours (one per source)
    for label, (colour, _marker, _style) in looks.items():
        by_strategy.setdefault(label.split(" · ")[0], set()).add(colour)
    assert all(len(c) == 1 for c in by_strategy.values()), by_strategy  # one colour a strategy
    assert len(set.union(*by_strategy.values())) == len(by_strategy) == 2  # each its own


def test_report_md_embeds_its_figures(fold: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_in_process(["report", str(fold / "cluster-a"), "--out", str(out)]) == 0
    embedded = re.findall(r"!\[[^\]\n]+\]\((fig-[\w.-]+\.png)\)", report_md(out))
    assert sorted(embedded) == sorted(p.name for p in out.glob("fig-*.png"))
    assert len(embedded) >= 5


def test_bad_by_names_every_choice(fold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["report", str(fold / "cluster-a"), "--by", "rack"], capsys)
    assert line == (
        "distbench: error: unknown --by 'rack': choose one of auto, label, argument, host, run"
    )


def test_by_host_says_that_it_merges_labelled_clusters(tmp_path: Path) -> None:
    """The frozen fixtures are real gloo runs labelled cluster-a and cluster-b on one host."""
    runs = [str(DATA / c / "broadcast") for c in ("cluster-a", "cluster-b")]
    assert run_in_process(["report", *runs, "--by", "host", "--out", str(tmp_path / "h")]) == 0
    merged = [n for n in notes_of(report_md(tmp_path / "h")) if n.startswith("--by host merges")]
    assert merged == [
        "--by host merges runs labelled cluster-a, cluster-b into one source, vm: a case they "
        "share is shown once, from the run that started last (--by label compares them)"
    ]
    assert run_in_process(["report", *runs, "--out", str(tmp_path / "auto")]) == 0
    text = report_md(tmp_path / "auto")
    assert "compared by label: cluster-a, cluster-b." in text
    assert not [n for n in notes_of(text) if "merges" in n]
