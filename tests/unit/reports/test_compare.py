"""distbench compare / baseline: checks and thresholds, verdicts on fixture runs written with the
real sinks (launches, nights, baseline windows), exit codes and formats. The statistical core's
own numbers: tests/unit/stats/. ci/nightly.sh: tests/integration/test_nightly.py."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from distbench.cli.app import run_cli
from distbench.collectors.manifest import (
    cpu_times,
    load_average,
    read_manifest,
    steal_share,
    write_manifest,
)
from distbench.collectors.schema import (
    MANIFEST_JSON,
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
    DdpRow,
    ResultRow,
    SampleRow,
)
from distbench.collectors.sink import CsvSink
from distbench.parse import UsageError
from distbench.reports.compare.checks import (
    METRICS,
    Threshold,
    Thresholds,
    parse_check,
    parse_metric,
    parse_threshold,
    read_rules,
)
from distbench.reports.compare.judge import ONLY_BASELINE, ONLY_CURRENT, compare_sides
from distbench.reports.compare.render import render_json
from distbench.reports.compare.sides import load_side
from distbench.reports.compare.window import save_night
from distbench.reports.compare.words import SEVERAL
from distbench.stats import Stats, algbw_gbps, box
from distbench.stats.engine import Settings
from distbench.stats.verdict import BLIND, CANNOT_TELL, IMPROVED, REGRESSED

SIZES = (1024, 65536, 1 << 20)


# ---- fixture runs -----------------------------------------------------------------------------


def comm_row(size: int, samples: list[float], index: int, **changes: object) -> ResultRow:
    stats = Stats(tuple(samples))
    algbw = algbw_gbps(size, stats.p50)
    row = ResultRow(
        run_id="run", label="", host="h", measurement=f"ws2/i{index}", primitive="all_reduce",
        backend="gloo", device="cpu", world_size=2, nnodes=1, ranks="0-1", dtype="float32",
        op="sum", size_bytes=size, requested_bytes=size, count=size // 4, root="", src="",
        dst="", pattern="", mode="throughput", timer="perf_counter", iters=20, warmup=5,
        trials=len(samples), samples=len(samples), **stats.as_columns(), algbw_GBps=algbw,
        busbw_GBps=algbw, busbw_factor=1.0, wrong=-1,
    )  # fmt: skip
    return replace(row, **changes)


def ddp_row(strategy: str, samples: list[float], index: int) -> DdpRow:
    """A DDP row whose samples are windows (schema v2); columns the schema lacks are left out."""
    stats = Stats(tuple(samples))
    values: dict[str, object] = dict(
        run_id="run", label="", host="h", measurement=f"ws2/d{index}", primitive="ddp",
        strategy=strategy, backend="gloo", device="cpu", world_size=2, nnodes=1, ranks="0-1",
        model="mlp", params=1000, dtype="float32", batch_size=32, bucket_mb="25",
        gradient_as_bucket_view="False", static_graph="False", avg_every="", steps=20, warmup=5,
        window_steps=2, timer="perf_counter", samples=len(samples),
        **{f"step_{k}": v for k, v in stats.as_columns().items()},
        samples_per_s=64 / (stats.p50 * 1e-6), scaling_efficiency=float("nan"),
        comm_bytes_per_step=4000, comm_busbw_GBps=1.0, comm_share=0.5, overlap=0.5,
        comm_hidden_share=0.5, max_param_diff=0.0, windows=len(samples),
    )  # fmt: skip
    names = {f.name for f in fields(DdpRow)}
    return DdpRow(**{k: v for k, v in values.items() if k in names})


def write_run(
    path: Path, rows: list[tuple[ResultRow | DdpRow, list[float]]], schema: int = SCHEMA_VERSION
) -> Path:
    """A run directory as distbench writes it: results.csv, samples.csv (rank -1 rows and one
    rank's own samples, which compare must ignore), manifest.json."""
    path.mkdir(parents=True)
    row_type = type(rows[0][0])
    with (
        CsvSink(path / RESULTS_CSV, row_type) as results,
        CsvSink(path / SAMPLES_CSV, SampleRow) as samples,
    ):
        for row, times in rows:
            results.write([row])
            samples.write(
                SampleRow(row.measurement, MAX_OVER_RANKS, trial, -1, t)
                for trial, t in enumerate(times)
            )
            samples.write(SampleRow(row.measurement, 0, t, -1, 1.0) for t in range(len(times)))
    manifest = {
        "schema_version": schema,
        "run_id": path.name,
        "host": "h",
        "torch": "2.13.0",
        "status": "completed",
    }
    write_manifest(path, manifest)
    return path


def launch(
    path: Path, levels: dict[tuple[str, int], float], rng: random.Random, spread: float = 0.02,
    trials: int = 8, **changes: object,
) -> Path:  # fmt: skip
    """One launch of rows (primitive, size) -> level in us: the launch moves every row by a
    lognormal factor of sd `spread` (between launches), each trial by one of 1 %."""
    shift = math.exp(rng.gauss(0.0, spread))
    rows = []
    for index, ((primitive, size), level) in enumerate(sorted(levels.items())):
        times = [level * shift * math.exp(rng.gauss(0.0, 0.01)) for _ in range(trials)]
        rows.append((comm_row(size, times, index, primitive=primitive, **changes), times))
    return write_run(path, rows)


def night(path: Path, levels: dict[tuple[str, int], float], rng: random.Random, launches: int = 2,
          **kwargs: object) -> Path:  # fmt: skip
    """A night as ci/nightly.sh writes it: NIGHT/launch-1 ... launch-N."""
    for n in range(1, launches + 1):
        launch(path / f"launch-{n}", levels, rng, **kwargs)
    return path


def levels(*primitives: str, scale: float = 1.0) -> dict[tuple[str, int], float]:
    return {(p, s): (50.0 + s / 1000) * scale for p in primitives for s in SIZES}


def window(tmp_path: Path, rng: random.Random, nights: int, table: dict[tuple[str, int], float],
           name: str = "nightly", **kwargs: object) -> Path:  # fmt: skip
    store = tmp_path / "store"
    for n in range(nights):
        save_night(night(tmp_path / f"n{n:02d}", table, rng, **kwargs), name, store)
    return store / name


def judge(base: Path, current: Path, metric: str = "time_us_p50", threshold: str = "5%",
          **settings: Any) -> Any:  # fmt: skip
    return compare_sides(
        load_side(base), load_side(current), parse_metric(metric),
        Thresholds(parse_threshold(threshold)), Settings(**settings),
    )  # fmt: skip


def states(comparison: Any) -> list[str]:
    return [j.state for j in comparison.outcome.rows]


# ---- checks and thresholds --------------------------------------------------------------------


def test_parse_threshold_and_check() -> None:
    assert parse_threshold("5%") == Threshold(5.0, True)
    assert parse_threshold(" 2.5 % ") == Threshold(2.5, True)
    assert parse_threshold("20us") == Threshold(20.0, False, "us")
    assert parse_threshold("2 GB/s") == Threshold(2.0, False, "GB/s")
    assert parse_threshold("2GBps") == Threshold(2.0, False, "GB/s")
    with pytest.raises(
        UsageError, match=r"'10' has no unit: write 10% .* or add the metric's unit"
    ):
        parse_threshold("10")
    check = parse_check("median:10%")
    assert check.metric is METRICS["time_us_p50"]
    assert check.threshold == Threshold(10.0, True)
    assert parse_check("5%").metric is None
    assert parse_check("busbw:3%").metric is METRICS["busbw_GBps"]
    for bad in ("5x", "-5%", "", "five%", "median:", "5 furlongs"):
        with pytest.raises(UsageError):
            parse_threshold(bad) if ":" not in bad else parse_check(bad)
    with pytest.raises(UsageError, match="unknown metric"):
        parse_check("speed:5%")


def test_worse_by_is_direction_aware() -> None:
    time, busbw = METRICS["time_us_p50"], METRICS["busbw_GBps"]
    assert Threshold(5, True).worse_by(100.0, 120.0, time) == pytest.approx(20.0)
    assert Threshold(5, True).worse_by(100.0, 80.0, time) == pytest.approx(-20.0)
    assert Threshold(5, True).worse_by(10.0, 8.0, busbw) == pytest.approx(20.0)
    assert Threshold(5, True).worse_by(10.0, 12.0, busbw) == pytest.approx(-20.0)
    assert Threshold(5, False, "us").worse_by(100.0, 130.0, time) == pytest.approx(30.0)
    assert Threshold(5, True).worse_by(0.0, 0.0, busbw) == 0.0


def test_thresholds_file_first_match_wins(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'default = "4%"\n'
        '[[rules]]\nprimitive = "all_reduce"\nmax_size = "64K"\nthreshold = "20%"\n'
        '[[rules]]\nmin_size = "1K"\nthreshold = "7%"\n'
    )
    thresholds = read_rules(path).thresholds(Threshold(5, True))
    small = {"primitive": "all_reduce", "size_bytes": "65536"}
    large = {"primitive": "all_reduce", "size_bytes": "1048576"}
    ddp = {"primitive": "ddp", "strategy": "ddp"}
    assert thresholds.for_row(small) == Threshold(20, True)
    assert thresholds.for_row(large) == Threshold(7, True)
    assert thresholds.for_row(ddp) == Threshold(4, True)  # a size band never matches DDP rows


def test_a_rule_takes_a_commands_name_and_refuses_a_name_no_row_has(tmp_path: Path) -> None:
    """A rule spelled as sweep files and the command line spell primitives (allreduce) matched
    no row (results.csv says all_reduce), silently."""
    path = tmp_path / "t.toml"
    path.write_text('[[rules]]\nprimitive = "allreduce"\nthreshold = "20%"\n')
    thresholds = read_rules(path).thresholds(Threshold(5, True))
    assert thresholds.for_row({"primitive": "all_reduce"}) == Threshold(20, True)
    path.write_text('[[rules]]\nprimitive = "allreduse"\nthreshold = "20%"\n')
    with pytest.raises(UsageError, match="primitive 'allreduse' is no primitive's name"):
        read_rules(path)


@pytest.mark.parametrize(
    "text",
    ['threshold = "5%"\n[[rules]]\nprimitive = "x"\n', "[[rules]]\nprimitive = 'x'\n", "= bad"],
)
def test_bad_thresholds_file_is_a_usage_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(UsageError):
        read_rules(path).thresholds(Threshold(5, True))


# ---- verdicts: one launch a side ----------------------------------------------------------------


def test_one_launch_a_side_cannot_tell_a_small_change_and_says_what_it_could_see(
    tmp_path: Path,
) -> None:
    rng = random.Random(1)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, spread=0.0)
    b = launch(tmp_path / "b", levels("all_reduce", scale=1.2), rng, spread=0.0)
    comparison = judge(a, b)
    assert states(comparison) == [CANNOT_TELL] * 3
    assert comparison.outcome.learning == "learning the noise: 1 of 5 nights"
    assert {j.reason for j in comparison.outcome.rows} == {"learning the noise: 1 of 5 nights"}
    assert all(j.detectable > 0.2 for j in comparison.outcome.rows)  # 20 % was out of sight
    assert comparison.exit_code == 0
    assert render_text_lines(comparison)[0] == (  # a pass that saw nothing says so
        "distbench compare: pass (3 cannot tell): nothing judged yet, no row could be told from "
        "the noise"
    )


def test_one_launch_a_side_calls_a_change_far_past_the_default_spread(tmp_path: Path) -> None:
    rng = random.Random(2)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, spread=0.0)
    b = launch(tmp_path / "b", levels("all_reduce", scale=8.0), rng, spread=0.0)
    comparison = judge(a, b)
    assert REGRESSED in states(comparison) and comparison.exit_code == 1
    faster = judge(b, a)
    assert IMPROVED in states(faster) and REGRESSED not in states(faster)
    assert faster.exit_code == 0


def render_text_lines(comparison: Any) -> list[str]:
    from distbench.reports.compare.render import render_text

    return render_text(comparison).splitlines()


def test_rows_only_in_one_run_are_reported(tmp_path: Path) -> None:
    rng = random.Random(8)
    a = launch(tmp_path / "a", {("all_reduce", 1024): 50.0, ("all_reduce", 65536): 60.0}, rng)
    b = launch(tmp_path / "b", {("all_reduce", 65536): 60.0, ("all_reduce", 1 << 20): 70.0}, rng)
    comparison = judge(a, b)
    assert [u.outcome for u in comparison.unmatched] == [ONLY_BASELINE, ONLY_CURRENT]
    assert len(comparison.outcome.rows) == 1 and comparison.exit_code == 4


def test_rows_match_on_mode_and_dtype(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(9)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, mode="latency")
    b = launch(tmp_path / "b", levels("all_reduce"), rng, dtype="bfloat16")
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and "no row in common" in err and err.count("\n") == 1


def test_ddp_rows_compare_step_time_and_samples_per_s(tmp_path: Path) -> None:
    times = [100.0, 101.0, 100.5, 99.5, 100.2]
    a = write_run(tmp_path / "a", [(ddp_row("ddp", times, 0), times)])
    slow = [t * 8 for t in times]
    b = write_run(tmp_path / "b", [(ddp_row("ddp", slow, 0), slow)])
    assert states(judge(a, b)) == [REGRESSED]
    assert states(judge(a, b, metric="samples_per_s")) == [REGRESSED]
    comparison = judge(a, b, metric="algbw_GBps")
    assert (
        not comparison.outcome.rows
        and "does not exist for ddp rows" in comparison.unmatched[0].reason
    )


def test_a_sweep_directory_is_one_launch(tmp_path: Path) -> None:
    rng = random.Random(10)
    launch(tmp_path / "a" / "all_reduce", levels("all_reduce"), rng)
    launch(tmp_path / "b" / "all_reduce", levels("all_reduce"), rng)
    side = load_side(tmp_path / "a")
    assert len(side.launches) == 1 and side.nights == ["a"]
    assert len(judge(tmp_path / "a", tmp_path / "b").outcome.rows) == 3


def test_a_window_keeps_rank_minus_one_samples_only(tmp_path: Path) -> None:
    run = launch(tmp_path / "a", levels("all_reduce"), random.Random(12))
    target, _ = save_night(run, "w", tmp_path / "store")
    ranks = {
        line.split(",")[1]
        for line in (target / "nights" / "a" / SAMPLES_CSV).read_text().splitlines()[1:]
    }
    assert ranks == {"-1"}
    assert len(load_side(target).launches[0].run.rows) == 3


def test_a_cut_or_resumed_night_never_enters_the_window(tmp_path: Path) -> None:
    rng = random.Random(13)
    cut = launch(tmp_path / "cut", levels("all_reduce"), rng)
    manifest = json.loads((cut / MANIFEST_JSON).read_text())
    (cut / MANIFEST_JSON).write_text(json.dumps({**manifest, "status": "interrupted"}))
    with pytest.raises(UsageError, match="is interrupted, not completed"):
        save_night(cut, "w", tmp_path / "store")
    resumed = launch(tmp_path / "resumed", levels("all_reduce"), rng)
    (resumed / MANIFEST_JSON).write_text(json.dumps({**manifest, "resumes": [{"at": "x"}]}))
    with pytest.raises(UsageError, match="was resumed"):
        save_night(resumed, "w", tmp_path / "store")
    assert not (tmp_path / "store" / "w" / "nights").exists() or not list(
        (tmp_path / "store" / "w" / "nights").iterdir()
    )
    # compare judges such a night, and says it was cut; or that --check found wrong elements
    wrong = launch(tmp_path / "wrong", levels("all_reduce"), rng)
    (wrong / MANIFEST_JSON).write_text(json.dumps({**manifest, "status": "wrong_results"}))
    assert f"{wrong}: --check found wrong elements in its rows: they are judged" in (
        judge(tmp_path / "resumed", wrong).notes
    )
    partial = night(tmp_path / "partial", levels("all_reduce"), rng)
    second = partial / "launch-2" / MANIFEST_JSON
    second.write_text(json.dumps({**json.loads(second.read_text()), "status": "interrupted"}))
    notes = judge(tmp_path / "resumed", partial).notes
    assert f"{partial / 'launch-2'} is interrupted, not completed: its finished rows" in " ".join(
        notes
    )
    # a launch cut before its first row: a manifest and no results.csv (a new user's Ctrl-C
    # during launch-2 of a nightly); the night passed with no word of it
    (partial / "launch-2" / "results.csv").unlink()
    (partial / "launch-2" / "samples.csv").unlink(missing_ok=True)
    notes = judge(tmp_path / "resumed", partial).notes
    assert f"{partial / 'launch-2'}: no rows (interrupted): this night is judged without" in (
        " ".join(notes)
    ), notes


def test_a_folder_that_is_not_one_night_is_refused_and_a_night_still_saves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new user's `baseline save results --name y` of four ad-hoc runs (two commands, made at
    different times) saved them as one night of one launch, the last run's rows hiding the
    others', and said "1 of 14 nights kept"."""
    rng, store = random.Random(18), tmp_path / "store"
    table = levels("all_reduce")
    folder = tmp_path / "results"
    for n, changes in enumerate(({}, {}, {"world_size": 3}, {"world_size": 3})):
        launch(folder / f"run-{n}", table, rng, **changes)
    code, out, err = cli(["baseline", "save", str(folder), "--name", "y", "--store", str(store)],
                         capsys)  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert f"{folder} is not one night: it holds 4 runs, and run-0, run-1, run-2 and run-3 " in err
    assert "measured the same cases (e.g. all_reduce 1K float32 n=2" in err
    assert "save each run as a night of its own (distbench baseline save RUN_DIR --name y)" in err
    assert not (store / "y").exists()
    # a folder of nights: each night's folder is a night
    for n in range(2):
        night(tmp_path / "nights" / f"nightly-{n}", table, rng)
    with pytest.raises(UsageError, match=r"holds the launch-N folders of 2 nights \(nightly-0 and "
                       r"nightly-1\): save each night's folder as a night of its own"):  # fmt: skip
        save_night(tmp_path / "nights", "y", store)
    # launch-N folders that measured different cases are no night's launches either
    mixed = night(tmp_path / "mixed", table, rng)
    shutil.rmtree(mixed / "launch-2")
    launch(mixed / "launch-2", levels("broadcast"), rng)
    with pytest.raises(UsageError, match=r"launch-2 measured other cases than launch-1 \(6 in one"):
        save_night(mixed, "y", store)
    with pytest.raises(UsageError, match=r"sweep: run the night again, or save a folder of the "):
        save_night(mixed, "y", store)  # not: save each launch apart, nights with no spread
    # one launch of a night is a part of it, not a night
    with pytest.raises(
        UsageError, match=r"launch-1 is one launch of the night .*mixed: a night's "
    ):
        save_night(mixed / "launch-1", "y", store)
    # a night ci/nightly.sh records as partial (cut between launches) or resumed
    for record, why in (("status=partial\nresumed=0", "is a partial night"),
                        ("status=complete\nresumed=1", "was resumed")):  # fmt: skip
        cut = night(tmp_path / f"cut-{why[:3]}", table, rng)
        (cut / "nightly.state").write_text(f"# ci/nightly.sh's record\n{record}\n")
        with pytest.raises(UsageError, match=why):
            save_night(cut, "y", store)
    # nor runs beside a night's launch-N folders, which compare never reads
    beside = night(tmp_path / "beside", table, rng)
    launch(beside / "extra", table, rng)
    with pytest.raises(UsageError, match=r"beside its launch-N folders it holds 1 other run\(s\) "
                       r"\(extra\)"):  # fmt: skip
        save_night(beside, "y", store)
    # a night of launches, a single run, and a sweep of runs that each measured cases of their
    # own are nights; each run of the folder saves as a night of its own
    assert save_night(night(tmp_path / "n1", table, rng, launches=3), "y", store)[1] == (
        "1 of 14 nights kept"
    )
    sweep = tmp_path / "sweep"
    launch(sweep / "all_reduce", table, rng)
    launch(sweep / "broadcast", levels("broadcast"), rng)
    assert save_night(sweep, "y", store)[1] == "2 of 14 nights kept"
    for n in range(4):
        save_night(folder / f"run-{n}", "y", store)
    assert load_side(store / "y").nights[-4:] == [f"run-{n}" for n in range(4)]


def test_a_run_that_is_part_of_a_baseline_night_is_said_to_be(tmp_path: Path) -> None:
    """compare of one run of a folder saved as a night against that window said nothing: the
    night, one launch read from several run directories, was known by all of them at once."""
    rng, store = random.Random(19), tmp_path / "store"
    sweep = tmp_path / "sweep"
    launch(sweep / "all_reduce", levels("all_reduce"), rng)
    launch(sweep / "broadcast", levels("broadcast"), rng)
    save_night(sweep, "w", store)
    notes = judge(store / "w", sweep / "all_reduce").notes
    assert (
        f"{sweep / 'all_reduce'} is part of night sweep of baseline w, the only night(s) it holds: "
        "the runs they share are judged against themselves"
    ) in notes, notes
    assert f"{sweep} is part of {sweep}" not in " ".join(judge(sweep, sweep).notes)
    assert f"{sweep} holds {sweep / 'broadcast'}: " in " ".join(
        judge(sweep / "broadcast", sweep).notes
    )
    # in a window of other nights too, that night is set apart
    for n in range(2):
        save_night(night(tmp_path / f"n{n}", levels("all_reduce", "broadcast"), rng), "w", store)
    comparison = judge(store / "w", sweep / "broadcast")
    assert (
        f"{sweep / 'broadcast'} is part of night sweep of baseline w: judged against its other 2 "
        "night(s)"
    ) in comparison.notes, comparison.notes


def test_a_baseline_of_the_single_run_layout_is_a_window_of_one_night(tmp_path: Path) -> None:
    rng = random.Random(14)
    old = tmp_path / "store" / "nightly"
    launch(old, levels("all_reduce"), rng)
    (old / "baseline.json").write_text(json.dumps({"name": "nightly", "source": "/x/night-0"}))
    side = load_side(old)
    assert not side.window and len(side.launches) == 1  # read as it is
    target, what = save_night(
        night(tmp_path / "n1", levels("all_reduce"), rng), "nightly", tmp_path / "store"
    )
    assert load_side(target).nights == ["night-0", "n1"] and what == "2 of 14 nights kept"


# ---- the command: exit codes, formats, baselines ----------------------------------------------


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_exit_codes_and_the_verdict_first_and_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(15)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, spread=0.0)
    b = launch(tmp_path / "b", levels("all_reduce", scale=8.0), rng, spread=0.0)
    code, out, _ = cli(["compare", str(a), str(b)], capsys)
    assert code == 1
    lines = out.rstrip().splitlines()
    assert lines[0].startswith("distbench compare: REGRESSION (") and lines[-1] == lines[0]
    assert lines[1].startswith("regressed: all_reduce")
    assert "what this comparison could see (80 % power):" in out
    rows = json.loads(cli(["compare", str(a), str(b), "--format", "json"], capsys)[1])["rows"]
    assert {r["scope"] for r in rows} == {"own level"}  # one primitive: judged on its own level
    assert cli(["compare", str(a), str(a)], capsys)[0] == 0
    code, _, err = cli(["compare", str(a), str(tmp_path / "missing")], capsys)
    assert code == 2 and err.count("\n") == 1 and "missing" in err
    for args, message in (
        (["--threshold", "lots"], "not a threshold"),
        (["--format", "html"], "unknown format"),
        (["--alpha", "2"], "alpha"),
        (["--min-nights", "0"], "--min-nights"),
        (["--min-samples", "5"], "--min-samples was removed in 0.3"),
        (["--no-fdr"], "--fdr/--no-fdr was removed in 0.3"),
    ):
        code, _, err = cli(["compare", str(a), str(b), *args], capsys)
        assert code == 2 and message in err and err.count("\n") == 1, (args, err)


def test_compare_markdown_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(16)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, spread=0.0)
    b = launch(tmp_path / "b", levels("all_reduce", scale=8.0), rng, spread=0.0)
    code, out, _ = cli(["compare", str(a), str(b), "--format", "markdown"], capsys)
    assert code == 1 and out.startswith("### distbench compare: REGRESSION (")
    assert "**regressed**" in out
    code, out, _ = cli(["compare", str(a), str(b), "--format", "json", "--metric", "busbw"], capsys)
    body = json.loads(out)
    assert code == 1 and body["version"] == 2 and body["regressed"] is True
    assert (
        body["metric"] == "busbw_GBps" and body["learning"] == "learning the noise: 1 of 5 nights"
    )
    row = body["rows"][0]
    assert row["state"] == REGRESSED and row["size_bytes"] == 1024  # a JSON number
    assert row["detectable_change"] > 0 and row["launches_baseline"] == 1
    assert body["summary"][REGRESSED] == 3
    # a verdict's interval is at its selection's level, which leaves out no change; the text
    # names it beside the interval and in the columns line
    assert 0.5 <= row["level"] < 1 and row["level"] != 0.95 and row["low"] > 0
    code, out, _ = cli(["compare", str(a), str(b)], capsys)
    assert f"at {row['level'] * 100:.1f} %" in out
    assert "beside a verdict, the level of the test that chose it (" in out
    # one launch a side: the launch part is the stated default, the night part unmeasurable
    assert "launches beyond them" in out and "(assumed: the stated default spread" in out
    assert "nights not measured (one night a side)" in out


def test_compare_refuses_another_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = [100.0] * 5
    a = write_run(tmp_path / "a", [(comm_row(1024, times, 0), times)])
    b = write_run(tmp_path / "b", [(comm_row(1024, times, 0), times)], schema=99)
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and "schema v99" in err and err.count("\n") == 1


def test_baseline_save_list_and_compare_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(17)
    monkeypatch.setenv("DISTBENCH_BASELINES", str(tmp_path / "store"))
    a = night(tmp_path / "a", levels("all_reduce"), rng)
    b = night(tmp_path / "b", levels("all_reduce"), rng)
    code, out, _ = cli(["baseline", "save", str(a), "--name", "nightly"], capsys)
    assert code == 0 and "into baseline 'nightly'" in out and "1 of 14 nights kept" in out
    code, out, _ = cli(["baseline", "save", str(b), "--name", "nightly", "--keep", "5"], capsys)
    assert code == 0 and "2 of 5 nights kept" in out
    code, out, _ = cli(["baseline", "list"], capsys)
    assert code == 0 and "nightly" in out and " a " in f" {out} " and "b" in out
    assert cli(["compare", "nightly", str(b)], capsys)[0] == 0
    code, _, err = cli(["compare", "nope", str(b)], capsys)
    assert code == 2 and "baselines: nightly" in err
    code, _, err = cli(["baseline", "save", str(a), "--name", "../x"], capsys)
    assert code == 2 and "not allowed" in err
    code, _, err = cli(["baseline", "save", str(a), "--name", "y", "--keep", "0"], capsys)
    assert code == 2 and "--keep '0'" in err
    (tmp_path / "store" / "junk").mkdir()  # a folder that is no baseline is not listed
    code, out, _ = cli(["baseline", "list"], capsys)
    assert code == 0 and "junk" not in out
    (tmp_path / "afile").write_text("")
    for command in (["list"], ["save", str(a), "--name", "z"]):
        code, _, err = cli(["baseline", *command, "--store", str(tmp_path / "afile")], capsys)
        assert code == 2 and "is a file, not a folder" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[:-7], "is truncated"),
        (lambda text: "a,b\n1,2\n", "is not a distbench results.csv"),
        (lambda text: text.replace("1024,", "1O24,", 1), "not a number"),
    ],
)
def test_compare_refuses_a_damaged_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[str], str],
    message: str,
) -> None:
    """A gate must not pass on a damaged CSV: compare reads through the report's checks."""
    times = [100.0] * 5
    a = write_run(tmp_path / "a", [(comm_row(1024, times, 0), times)])
    b = write_run(tmp_path / "b", [(comm_row(1024, times, 0), times)])
    results = b / "results.csv"
    results.write_text(damage(results.read_text()))
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_no_row_in_common_names_a_lone_differing_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#26 item 8: --env on one side keeps every row apart; the one line says so."""
    rng = random.Random(18)
    a = launch(tmp_path / "a", levels("all_reduce"), rng)
    b = launch(tmp_path / "b", levels("all_reduce"), rng, env="NCCL_ALGO=Ring")
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "they differ only in env: empty (no --env) in the baseline" in err


def test_what_it_could_see_reads_as_a_bound_past_the_cap(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's own fixtures (one launch a side: nothing below 10x is detectable) printed
    'every row together >= >10x ... one row alone >= >10x to >10x'; a bound past the cap reads
    '>10x', a finite one '>= 31 %', and a range only where its ends differ."""
    from distbench.reports.compare.words import at_least

    assert (at_least(0.31), at_least(12.0), at_least(math.inf)) == (">= 31 %", ">10x", ">10x")
    data = Path(__file__).resolve().parents[2] / "data"
    code, out, _ = cli(
        ["compare", str(data / "cluster-a" / "allreduce"), str(data / "cluster-b" / "allreduce")],
        capsys,
    )
    seen = out.split("could see (80 % power):\n", 1)[1].splitlines()[0]
    assert code == 0 and ">= >" not in out and ">10x to >10x" not in out
    assert seen.strip().startswith("all_reduce: every row together >10x")
    assert seen.endswith("one row alone >10x")


# ---- the machine's load beside the verdicts ---------------------------------------------------
def with_fact(night_dir: Path, field: str, *values: object) -> Path:
    """Set a manifest field of each launch of a night (launch-1 the first value ...), as a run of
    this version records it."""
    for n, value in enumerate(values, 1):
        run_dir = night_dir / f"launch-{n}"
        manifest = read_manifest(run_dir)
        assert manifest is not None
        write_manifest(run_dir, {**manifest, field: value})
    return night_dir


def loads(*values: float) -> list[list[float]]:
    return [[value] * 3 for value in values]


@pytest.mark.parametrize(
    ("field", "baseline", "current", "shown"),
    [
        (  # the 1-minute load as each launch started
            "load_avg_start",
            [loads(6.0, 9.5), loads(12.9, 7.25)],
            loads(1.0, 1.04),
            "machine load as launches started (1-minute average): baseline 6.0-12.9, current 1.0 (",
        ),
        (  # the hypervisor's share of the CPU time during each launch
            "cpu_steal_share",
            [[0.0, 0.001], [0.002, 0.0]],
            [0.31, 0.42],
            "CPU time stolen by the hypervisor during the launches: baseline 0.0%-0.2%, "
            "current 31.0%-42.0%",
        ),
    ],
)
def test_what_each_side_ran_under_is_shown_where_every_side_recorded_it(
    tmp_path: Path, field: str, baseline: list[list[object]], current: list[object], shown: str
) -> None:
    """A window of two nights against a night, each launch's manifest with `field` set; a night
    of an older version (no such field) shows no line."""
    rng = random.Random(3)
    table = levels("all_reduce")
    store = tmp_path / "store"
    for n, values in enumerate(baseline):
        save_night(with_fact(night(tmp_path / f"n{n}", table, rng), field, *values), "w", store)
    tonight = with_fact(night(tmp_path / "tonight", table, rng), field, *current)
    assert any(text.startswith(shown) for text in render_text_lines(judge(store / "w", tonight)))
    unrecorded = night(tmp_path / "old", table, rng)
    lines = render_text_lines(judge(store / "w", unrecorded))
    assert not any(text.startswith(shown.split(":", 1)[0]) for text in lines)


def test_load_average_is_the_machines_three_averages() -> None:
    load = load_average()
    assert load is not None and len(load) == 3
    assert all(abs(a - b) < 1.0 for a, b in zip(load, os.getloadavg(), strict=True))


def test_steal_share_is_the_hypervisors_part_of_the_cpu_time_between_two_readings() -> None:
    """steal over every counter's growth; None where a reading is missing, of another length, or
    the counters went back (a reboot between a run and its resume)."""
    start = [100, 0, 50, 800, 10, 0, 5, 35]
    end = [400, 0, 150, 900, 10, 0, 15, 335]  # grown: 300 + 100 + 100 + 10 + 300 = 810
    assert steal_share(start, end) == round(300 / 810, 4)
    assert steal_share(start, start) is None  # no time passed
    assert steal_share(None, end) is None and steal_share(start, None) is None
    assert steal_share(start[:7], end) is None
    assert steal_share(end, start) is None
    now = cpu_times()  # Linux: /proc/stat's eight first counters, in ticks
    assert now is not None and len(now) == 8 and all(isinstance(v, int) for v in now)


SEVEN = ("all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all",
         "send_recv")  # fmt: skip
BOX_SCALES = dict(zip(SEVEN, (1.6, 0.6, 1.7, 0.55, 1.5, 0.65, 1.0), strict=True))
"""A change of the box: 6 of 7 primitives moved, 3 slower and 3 faster (send_recv, unmoved, then
reads slower beyond the rest), and reduce's smallest size faster while its others ran slower
(both ways: box.mixed; 3 and 4 each one way alone reads as a change of code)."""


def box_night(table: dict[tuple[str, int], float]) -> dict[tuple[str, int], float]:
    smallest = min(SIZES)
    return {
        (p, s): v * (0.6 if (p, s) == ("reduce", smallest) else BOX_SCALES[p])
        for (p, s), v in table.items()
    }


def test_three_primitives_slower_are_named_with_the_split_they_make_and_what_it_cannot_tell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against a window of 5 nights of 7 primitives, 3 of them 30 % slower at every size: the
    others read faster beyond the rest of the run, each primitive one way, 3 and 4 (a change of
    code, box.mixed: not the box); the 3 are named regressed (exit 1), and a line says that 4 sped
    up would read the same. Under the share alone (as held out on g10) the night exits 5."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    rng = random.Random(21)
    table = levels(*SEVEN)
    store = window(tmp_path, rng, 5, table).parent
    slowed = ("all_gather", "broadcast", "reduce")
    tonight = night(tmp_path / "tonight", {k: v * (1.3 if k[0] in slowed else 1.0)
                                           for k, v in table.items()}, rng)  # fmt: skip
    compare = ["compare", "nightly", str(tonight), "--store", str(store)]
    code, out, _ = cli(compare, capsys)
    assert code == 1 and "the box changed" not in out, out
    regressed = {
        line.split()[1].rstrip(",") for line in out.splitlines() if line.startswith("regressed: ")
    }
    assert regressed == set(slowed), out
    assert (
        "3 primitives read slower (all_gather, broadcast, reduce) and 4 faster (all_reduce, "
        "all_to_all, reduce_scatter, send_recv) beyond the rest of the run, each one way: a change "
        "that slowed the 3 reads so, and so does one that sped up the 4"
    ) in out, out
    assert (  # what each claim is about: not a slowdown of most primitives at once
        "what this comparison could see (80 % power; a primitive's change beyond the rest of the "
        "run, the whole run's on its own level):"
    ) in out, out
    code, out, _ = cli([*compare, "--format", "json"], capsys)
    body = json.loads(out)
    assert {r["scope"] for r in body["rows"]} == {"beyond the rest of the run"}
    scopes = {(b["primitive"], b["scope"]) for b in body["bands"]}
    assert ("whole run", "own level") in scopes and (
        "reduce",
        "beyond the rest of the run",
    ) in scopes
    code, out, _ = cli([*compare, "--format", "markdown"], capsys)
    assert code == 1 and "3 primitives read slower (all_gather, broadcast, reduce)" in out
    assert "What this comparison could see (80 % power; a primitive's change beyond" in out
    monkeypatch.setattr(box, "TWO_SIDED", False)
    code, out, _ = cli(compare, capsys)
    assert code == 5 and "3 primitives read slower" not in out, out


def test_a_night_whose_primitives_moved_each_its_own_way_cannot_tell_and_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against a window of 5 nights of 7 primitives: 6 of them moved tonight, 3 slower and 3
    faster, one of them both ways (the whole run's median unmoved): cannot tell, exit 5, in every
    format; the same window
    against a night with one primitive slower names it, exit 1, and what it could see says that
    a slowdown of half the primitives or more is the whole run's to see."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    rng = random.Random(21)
    table = levels(*SEVEN)
    store = window(tmp_path, rng, 5, table).parent
    tonight = night(tmp_path / "tonight", box_night(table), rng)
    compare = ["compare", "nightly", str(tonight), "--store", str(store)]
    code, out, _ = cli(compare, capsys)
    lines = out.rstrip().splitlines()
    assert code == 5 and lines[0] == lines[-1], out
    assert lines[0].startswith("distbench compare: CANNOT TELL: the box changed (")
    assert lines[1].startswith(
        "cannot tell: the box changed: 7 of 7 primitives moved beyond the window at once "
        "(all_reduce, reduce_scatter, send_recv slower; all_gather, all_to_all, broadcast faster; "
        "reduce both ways)"
    ), lines[1]
    assert "start a new baseline window" in lines[1]
    code, out, _ = cli([*compare, "--format", "json"], capsys)
    body = json.loads(out)
    assert code == 5 and body["exit_code"] == 5 and body["regressed"] is False
    assert body["box"].startswith("the box changed: 7 of 7 primitives")
    assert {(r["state"], r["reason"]) for r in body["rows"]} == {(CANNOT_TELL, "the box changed")}
    code, out, _ = cli([*compare, "--format", "markdown"], capsys)
    assert code == 5 and "- cannot tell: the box changed: 7 of 7" in out
    one = {k: v * (1.6 if k[0] == "broadcast" else 1.0) for k, v in table.items()}
    code, out, _ = cli(["compare", "nightly", str(night(tmp_path / "one", one, rng)), "--store",
                        str(store)], capsys)  # fmt: skip
    assert code == 1 and "\nregressed: broadcast" in out and "the box changed" not in out
    lines = out.splitlines()
    whole = next(i for i, x in enumerate(lines) if "the whole run (every primitive alike): " in x)
    assert lines[whole + 1].strip() == SEVERAL  # what it cannot see per primitive, said below it


def test_the_row_table_says_how_its_cells_read(tmp_path: Path) -> None:
    """A new user read `0.0005714 0.002728 -79.1 %` (busbw rose 4.8x) and an interval that left
    out 0 beside q = 1 as contradictions: a line over the table names the values' unit, the
    change's direction in time terms, and that the interval is the row's own while q is
    adjusted over every hypothesis."""
    rng = random.Random(12)
    a = launch(tmp_path / "a", levels("all_reduce"), rng)
    b = launch(tmp_path / "b", levels("all_reduce", scale=0.5), rng)
    for metric, unit, flipped in (("time_us_p50", "us", False), ("busbw_GBps", "GB/s", True)):
        comparison = judge(a, b, metric=metric)
        lines = render_text_lines(comparison)
        legend = lines[lines.index(f"all rows ({len(comparison.outcome.rows)}):") + 1]
        assert legend.startswith(f"  columns: baseline and current in {unit} ({metric})")
        assert ("a bandwidth or rate that rose reads negative" in legend) is flipped
        assert f"over all {comparison.outcome.family_size} hypotheses" in legend
        base, cur = comparison.values[0]
        assert (cur > base) is flipped  # busbw rose where the time fell
        assert comparison.outcome.rows[0].change < 0  # both read as faster: time terms


def test_the_row_table_names_sizes_as_asked(tmp_path: Path) -> None:
    """A new user's nightly table showed `1K 64K 1M` at world size 2 and `1008 65520 1048560`
    at 3 (whole elements per rank): the table names each size as asked, as report and history
    do; the key (and the JSON) keep the measured bytes."""
    rng = random.Random(13)
    table = {
        ("all_gather", 1008): 50.0,
        ("all_gather", 65520): 60.0,
        ("all_gather", 1008 * 2): 70.0,
    }
    asked = {1008: 1024, 65520: 65536, 2016: 2016}  # 2016 asked as such: its own size
    runs = []
    for name in ("a", "b"):
        rows = []
        for index, ((primitive, size), level) in enumerate(sorted(table.items())):
            times = [level * math.exp(rng.gauss(0.0, 0.01)) for _ in range(8)]
            row = comm_row(size, times, index, primitive=primitive, requested_bytes=asked[size])
            rows.append((row, times))
        runs.append(write_run(tmp_path / name, rows))
    comparison = judge(*runs)
    assert comparison.sizes == ["1K", "2016", "64K"]
    lines = render_text_lines(comparison)
    body = lines[lines.index("all rows (3):") + 4 :][:3]  # under the legend, header and rule
    assert [line.split()[2] for line in body] == ["1K", "2016", "64K"]
    assert [dict(j.hypothesis.band)["size_bytes"] for j in comparison.outcome.rows] == [
        "1008", "2016", "65520",
    ]  # fmt: skip


def test_sides_measured_with_other_settings_are_said_to_be(tmp_path: Path) -> None:
    """A row's min over 40 trials is not its min over 12: compare says how the sides differ."""
    from distbench.reports.compare.measured import settings_lines

    rng = random.Random(21)

    def measured(path: Path, trials: int, iters: int) -> Path:
        run = launch(path, levels("all_reduce"), rng)
        manifest = json.loads((run / MANIFEST_JSON).read_text())
        spec = {"workload": {"trials": trials, "iters": iters, "warmup": 2}}
        (run / MANIFEST_JSON).write_text(json.dumps({**manifest, "spec": spec}))
        return run

    alike = judge(measured(tmp_path / "a", 12, 5), measured(tmp_path / "b", 12, 5))
    assert settings_lines(alike) == []
    other = judge(tmp_path / "a", measured(tmp_path / "c", 40, 20))
    assert settings_lines(other) == [
        "measured differently: trials 12 -> 40, iterations a trial 5 -> 20 (a row's number "
        "depends on them: compare like with like)"
    ]
    assert settings_lines(other)[0] in "\n".join(render_text_lines(other))
    body = json.loads(render_json(other))
    assert body["measured_differently"] == settings_lines(other)  # in JSON too


def test_a_change_caught_below_its_own_claim_is_explained_beside_the_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A verdict on a change smaller than its detectable_change (caught less than 8 times in 10,
    and caught) reads as a contradiction beside "could see >10x" unless a line says so; the line
    is there only then. One launch a side, 8x slower: caught, each claim above 8x."""
    from dataclasses import replace

    from distbench.reports.compare.words import BELOW_CLAIM, seen_lines

    rng = random.Random(15)
    a = launch(tmp_path / "a", levels("all_reduce"), rng, spread=0.0)
    b = launch(tmp_path / "b", levels("all_reduce", scale=8.0), rng, spread=0.0)
    comparison = judge(a, b)
    rows = comparison.outcome.rows
    assert any(r.state == "regressed" and r.detectable > r.change for r in rows)
    assert seen_lines(comparison)[-1] == BELOW_CLAIM
    assert BELOW_CLAIM in cli(["compare", str(a), str(b)], capsys)[1]
    claims = [replace(r, detectable=min(r.detectable, r.change / 2)) for r in rows]
    bands = [
        replace(r, detectable=min(r.detectable, r.change / 2)) for r in comparison.outcome.bands
    ]
    within = replace(comparison.outcome, rows=claims, bands=bands)
    assert BELOW_CLAIM not in seen_lines(replace(comparison, outcome=within))
    # a 40 % speedup is larger than a claim of +50 % (1 - 1/1.5 = 33 %): not below it, though
    # 0.4 < 0.5 as plain shares; a 20 % speedup is below it
    import math

    def faster(r: Any, share: float) -> Any:
        assert r.shift is not None
        return replace(r, state="improved", detectable=0.5,
                       shift=replace(r.shift, effect=math.log(1 - share)))  # fmt: skip

    for share, below in ((0.4, False), (0.2, True)):
        sped = replace(comparison.outcome, rows=[faster(r, share) for r in rows], bands=bands)
        assert (seen_lines(replace(comparison, outcome=sped))[-1] == BELOW_CLAIM) is below, share


def test_fewer_primitives_than_relative_needs_are_said_to_be_judged_on_their_own_level(
    tmp_path: Path,
) -> None:
    """--relative is the default, yet 3 primitives are judged on their own level (the median of
    two others is no level): a new user saw `"relative": false` in the JSON and nothing said."""
    from distbench.reports.compare.words import relative_line

    rng = random.Random(15)
    three = levels("all_reduce", "broadcast", "send_recv")
    a, b = launch(tmp_path / "a", three, rng), launch(tmp_path / "b", three, rng)
    comparison = judge(a, b)
    assert not comparison.outcome.relative
    assert relative_line(comparison) == (
        "changes are each row's on its own level: judging a primitive beyond the rest of the run "
        "needs 4 primitives or more, and this comparison has 3"
    )
    one = judge(launch(tmp_path / "c", levels("all_reduce"), rng), a)
    assert relative_line(one) is None  # one primitive: nothing to judge it beyond


def test_a_window_of_two_nights_judges_without_a_crash(tmp_path: Path) -> None:
    """The nightly's loop reaches a window of two nights on its third night: one degree of
    freedom between nights put a row's critical t near 2,000 and exp overflowed (compare
    crashed, exit 1, and ci/nightly.sh called every later night a confirmed regression).
    Such a window judges: what it cannot see reads `cannot tell`, never `no change seen`."""
    rng = random.Random(2)
    table = levels("all_reduce", "broadcast", "all_gather", "reduce_scatter", "send_recv")
    base = window(tmp_path, rng, 2, table, launches=3, spread=0.3)  # a loud box: few df
    tonight = night(tmp_path / "tonight", table, rng, launches=3, spread=0.3)
    comparison = judge(base, tonight, min_nights=2)
    judged = [*comparison.outcome.rows, *comparison.outcome.bands]
    assert comparison.status() == "pass" and judged
    blind = [j for j in judged if not math.isfinite(j.detectable) or j.detectable > 9]
    assert blind, "one degree of freedom must leave some hypothesis blind"
    assert all(j.state == "cannot tell" and j.reason == BLIND for j in blind)
