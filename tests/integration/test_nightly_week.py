"""ci/nightly.sh in a new user's first week (a review's findings, each reproduced first): in
GitHub Actions only the night's verdict is annotated and summarised (a regression its re-run did
not confirm left three annotations and two contradictory summaries); the gate's options are
checked before any sweep; a night gated and saved already (a CI retry of
--run-dir RUN --update-baseline) is a no-op for the window and keeps its earlier verdict files.
Real 2-rank gloo nights of the tiny matrix where a run is involved. (The script's nights:
tests/integration/test_nightly.py; its refusal of 0.2's options: test_nightly_args.py.)"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import as_another_night
from tests.integration.test_nightly import (
    NIGHTLY,
    TINY,
    env_for,
    nightly,
    state,
    window_nights,
)
from tests.paths import ROOT

RUN = ROOT / "tests" / "data" / "cluster-a" / "allreduce"
"""A real run (the real sinks wrote it), as a baseline compare can judge against itself."""


def sweep_refused(tmp_path: Path) -> str:
    """DISTBENCH for nightly.sh: distbench itself, except that a sweep is recorded in
    tmp_path/sweeps.log and refused (exit 2) instead of run."""
    wrapper = tmp_path / "no-sweep.sh"
    log = tmp_path / "sweeps.log"
    wrapper.write_text(
        f'if [[ $1 == sweep ]]; then echo "$*" >> {log}; exit 2; fi\n'
        f'exec {sys.executable} -m distbench "$@"\n'
    )
    return f"bash {wrapper}"


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["--metric", "p42"], "Invalid value for '--metric': unknown metric 'p42'"),
        (["--threshold", "5parsecs"], "'5parsecs' is not a threshold"),
        (["--thresholds", "missing.toml"], "cannot read the thresholds file missing.toml"),
        (["--threshold", "busbw:20us"], "--threshold 20us is in us but busbw_GBps is in GB/s"),
    ],
)
def test_the_gates_options_are_checked_before_any_sweep(
    args: list[str], refused: str, tmp_path: Path
) -> None:
    """A bad --metric, --threshold or --thresholds stops the night at once, in one line, exit 2,
    nothing swept: it failed the gate after the night's sweeps, and left a night marked
    complete that was never gated."""
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    night = tmp_path / "night"
    common = ["--config", str(config), "--launches", "1", "--baseline", str(RUN)]
    result = nightly([*common, *args, "--out", str(night)], tmp_path, sweep_refused(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("nightly.sh: error: the gate's options: "), lines[0]
    assert refused in lines[0] and lines[0].endswith("(nothing swept)"), lines[0]
    assert not (tmp_path / "sweeps.log").exists() and not night.exists()


def test_good_options_pass_the_check_to_the_sweep(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    args = ["--config", str(config), "--launches", "1", "--baseline", str(RUN), "--metric", "busbw"]
    good = nightly([*args, "--out", str(tmp_path / "night")], tmp_path, sweep_refused(tmp_path))
    assert good.returncode == 2 and "the sweep refused its configuration" in good.stderr
    assert "the gate's options" not in good.stderr
    assert len((tmp_path / "sweeps.log").read_text().splitlines()) == 1


@pytest.fixture(scope="module")
def one_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real one-launch night of the tiny matrix, swept by nightly.sh (its own store)."""
    root = tmp_path_factory.mktemp("week")
    config = root / "tiny.toml"
    config.write_text(TINY)
    night = root / "night"
    args = ["--config", str(config), "--launches", "1", "--out", str(night), "--bootstrap"]
    first = nightly([*args, "--store", str(root / "store"), "--no-report"], root)
    assert first.returncode == 0, first.stdout + first.stderr
    return night


@pytest.mark.slow
def test_a_night_saved_already_is_a_no_op_and_its_earlier_verdict_is_kept(
    tmp_path: Path, one_night: Path
) -> None:
    """A CI retry of `--run-dir RUN --update-baseline` after the night joined the window: exit 0
    and one line, the window as it was (it failed with exit 2 and advised --force, which
    replaces the whole window), and the first gate's compare.{md,json,txt} kept beside the new
    ones (they were overwritten). Another run of the same folder name is refused, one line."""
    store = tmp_path / "store"
    bootstrap = ["--run-dir", str(one_night), "--store", str(store), "--no-report", "--bootstrap"]
    assert nightly(bootstrap, tmp_path).returncode == 0
    night = tmp_path / "results" / "nightly-2"
    shutil.copytree(one_night, night)
    as_another_night(night)
    update = ["--run-dir", str(night), "--store", str(store), "--no-report", "--update-baseline"]
    first = nightly(update, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert window_nights(store) == 2
    verdict = {ext: (night / f"compare.{ext}").read_text() for ext in ("md", "json", "txt")}

    retry = nightly(update, tmp_path)
    assert retry.returncode == 0, retry.stdout + retry.stderr
    assert window_nights(store) == 2
    kept = f"{night}/compare.earlier-1.{{md,json,txt}}"
    assert f"nightly.sh: note: {night} was gated before: its verdict kept as {kept}" in (
        retry.stderr.splitlines()
    ), retry.stderr
    assert (
        f"nightly.sh: baseline 'nightly' not updated: {night} is in its window already (saved "
        "by an earlier run of this night): nothing to do" in retry.stderr.splitlines()
    ), retry.stderr
    assert "--force" not in retry.stderr
    for ext, text in verdict.items():
        assert (night / f"compare.earlier-1.{ext}").read_text() == text
        assert (night / f"compare.{ext}").exists()

    other = tmp_path / "elsewhere" / "nightly-2"  # another run, the same folder name
    shutil.copytree(one_night, other)
    results = other / "results.csv"
    rows = list(csv.DictReader(results.open()))
    rows[0]["time_us_min"] = str(float(rows[0]["time_us_min"]) * 1.01)
    with results.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    refused = nightly([*update[:1], str(other), *update[2:]], tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        "nightly.sh: error: baseline 'nightly' already holds a night named 'nightly-2' whose "
        f"results are not {other}'s: a night enters once, by its folder's name; give this run a "
        "folder of its own name to add it"
    )
    assert window_nights(store) == 2


def in_github(
    args: list[str], cwd: Path, summary: Path, distbench: str | None = None
) -> subprocess.CompletedProcess[str]:
    """nightly.sh as a GitHub Actions step runs it: GITHUB_ACTIONS=true and a job summary file."""
    env = {**env_for(distbench), "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    return subprocess.run(
        ["bash", str(NIGHTLY), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def first_sweep_slowed(tmp_path: Path) -> str:
    """DISTBENCH for nightly.sh: distbench itself, the night's own sweep with broadcast made 100x
    slower by the test-side wrapper tests/inject/sitecustomize.py (a real slowdown), its re-run
    (--out ...-confirm) not."""
    wrapper = tmp_path / "slowed.sh"
    inject = ROOT / "tests" / "inject"
    wrapper.write_text(
        'if [[ $1 == sweep && "$*" != *-confirm* ]]; then\n'
        f"    export PYTHONPATH={inject} DISTBENCH_TEST_SLOW=broadcast:100\n"
        "fi\n"
        f'exec {sys.executable} -m distbench "$@"\n'
    )
    return f"bash {wrapper}"


def bootstrapped(tmp_path: Path, one_night: Path) -> tuple[Path, Path]:
    """A store whose baseline is `one_night` (nightly.sh --bootstrap), and the tiny matrix's
    config beside it: (store, config)."""
    store = tmp_path / "store"
    bootstrap = ["--run-dir", str(one_night), "--store", str(store), "--no-report", "--bootstrap"]
    assert nightly(bootstrap, tmp_path).returncode == 0
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    return store, config


@pytest.mark.slow
def test_in_github_only_the_nights_verdict_is_annotated_and_summarised(
    tmp_path: Path, one_night: Path
) -> None:
    """A night whose first gate regresses (broadcast 100x slower, far past a 3000 % floor that
    no noise of an unslowed re-run reaches) and whose re-run passes: no annotation, one summary
    (the re-run's pass) and nightly.sh's verdict under it, and the night's compare.md and .txt
    open with what the re-run decided. A night that passes at once (here --resume of a complete
    night: nothing to sweep, confirmation on) is summarised once too, after its quiet gate."""
    store, config = bootstrapped(tmp_path, one_night)
    night = tmp_path / "results" / "nightly-slowed"
    args = ["--config", str(config), "--launches", "1", "--store", str(store), "--no-report"]
    summary = tmp_path / "summary.md"
    slowed = in_github(
        [*args, "--threshold", "3000%", "--out", str(night)],
        tmp_path, summary, first_sweep_slowed(tmp_path),
    )  # fmt: skip
    assert slowed.returncode == 0, slowed.stdout + slowed.stderr
    again = Path(f"{night}-confirm")
    assert state(night)["confirmation"] == f"{again} passed"
    assert "::error" not in slowed.stderr + slowed.stdout, slowed.stderr
    text = summary.read_text()
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert len(headings) == 1 and headings[0].startswith("### distbench compare: pass"), text
    assert str(again) in text.split("**ci/nightly.sh")[0]  # compare's summary is the re-run's
    decided = (
        "regression NOT CONFIRMED against 'nightly' (exit 0): this night regressed, and its "
        f"re-run at once ({again}) passed."
    )
    assert text.rstrip().splitlines()[-1] == (
        f"**ci/nightly.sh: {decided}** Above: the re-run's verdict; this night's own gate: "
        f"{night}/compare.md"
    )
    md = (night / "compare.md").read_text().splitlines()
    assert md[0] == (
        f"> **ci/nightly.sh, after the re-run: {decided}** Below: this night's own gate; the "
        f"re-run's: {again}/compare.md"
    )
    assert md[2].startswith("### distbench compare: REGRESSION"), md[:3]
    txt = (night / "compare.txt").read_text().splitlines()
    assert txt[0].startswith(f"ci/nightly.sh, after the re-run: {decided}") and not txt[1]
    assert txt[2].startswith("distbench compare: REGRESSION"), txt[:3]

    summary.unlink()
    passed = tmp_path / "results" / "nightly-passed"
    shutil.copytree(one_night, passed)
    resumed = in_github(
        ["--resume", str(passed), "--store", str(store), "--no-report"], tmp_path, summary
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "confirming" not in resumed.stderr and "::error" not in resumed.stderr
    text = summary.read_text()
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert len(headings) == 1 and headings[0].startswith("### distbench compare: pass"), text
    assert "**ci/nightly.sh" not in text  # nightly.sh adds no line (compare's may name it)


@pytest.mark.slow
def test_in_github_a_regression_whose_re_run_breaks_off_is_published(
    tmp_path: Path, one_night: Path
) -> None:
    """The first gate is quiet while a re-run may follow; a re-run whose sweep fails (here from
    the test side: the wrapper exits 1 for it) must not take the night's regression with it."""
    store, config = bootstrapped(tmp_path, one_night)
    wrapper = tmp_path / "broken.sh"
    slowed = first_sweep_slowed(tmp_path).split(" ", 1)[1]
    wrapper.write_text(
        'if [[ $1 == sweep && "$*" == *-confirm* ]]; then echo "broken re-run" >&2; exit 1; fi\n'
        f'exec bash {slowed} "$@"\n'
    )
    night = tmp_path / "results" / "nightly-broken"
    summary = tmp_path / "summary.md"
    args = ["--config", str(config), "--launches", "1", "--store", str(store), "--no-report"]
    done = in_github(
        [*args, "--threshold", "3000%", "--out", str(night)], tmp_path, summary,
        f"bash {wrapper}",
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr  # the re-run's benchmark failed
    assert "::error title=distbench compare%3A broadcast" in done.stderr, done.stderr
    headings = [line for line in summary.read_text().splitlines() if line.startswith("### ")]
    assert len(headings) == 1 and headings[0].startswith("### distbench compare: REGRESSION")
    first = (night / "compare.md").read_text().splitlines()[0]
    assert first.startswith("> **ci/nightly.sh: this night regressed, and its re-run at once did")
    assert "the regression stands, unconfirmed" in done.stderr


# ---- a second review: the last line, the order of the input checks, a crash of compare ---------


def young_window(tmp_path: Path, nights: int = 2) -> tuple[Path, Path]:
    """(the store, an unchanged night): a window of `nights` nights of 2 primitives, and the
    night, written by the real sinks (tests/unit/reports/test_compare.py's fixture runs, 2
    launches a night). A window of 2 nights of its 5 --min-nights is learning the noise: the
    unchanged night's rows and bands all cannot tell."""
    import random

    from tests.unit.reports.test_compare import levels, night, window

    rng = random.Random(3)
    table = levels("all_reduce", "broadcast")
    store = window(tmp_path, rng, nights, table).parent
    return store, night(tmp_path / "results" / "tonight", table, rng)


def test_a_night_that_judged_nothing_says_so_in_its_last_line(tmp_path: Path) -> None:
    """compare's 'pass (6 cannot tell): nothing judged yet' ended in 'nightly.sh: no regression
    against ...', which nobody saw: the last line says what compare's JSON says (every row and
    band cannot tell, and why: its 'learning'), and the night still passes. A night that judged
    its rows (--min-nights 1 here: the noise known) still says no regression."""
    store, tonight = young_window(tmp_path)
    args = ["--run-dir", str(tonight), "--store", str(store), "--no-report"]
    result = nightly(args, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("distbench compare: pass (6 cannot tell): nothing judged yet")
    assert result.stderr.strip().splitlines()[-1] == (
        "nightly.sh: nothing judged against 'nightly' yet (every row cannot tell: the window is "
        "learning the noise, 2 of 5 nights); the night passes"
    )
    judged = nightly([*args, "--min-nights", "1"], tmp_path)
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "cannot tell" not in judged.stdout.splitlines()[0], judged.stdout
    assert judged.stderr.strip().splitlines()[-1] == "nightly.sh: no regression against 'nightly'"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--run-dir", "results/nosuch"], "--run-dir results/nosuch does not exist"),
        (["--run-dir", "results/empty"], "--run-dir results/empty holds no results (no "),
        (["--config", "/nonexist.toml"], "no sweep config /nonexist.toml (give --config FILE)"),
        (["--config", "/nonexist.toml", "--bootstrap"], "no sweep config /nonexist.toml"),
    ],
)
def test_the_input_is_checked_before_the_baseline(
    args: list[str], said: str, tmp_path: Path
) -> None:
    """With no baseline yet, a missing run or config was reported as the missing baseline, with
    advice to pin the run that does not exist (`--run-dir results/nosuch --bootstrap`): one line,
    exit 2, about what is missing; nothing swept, no night's folder made."""
    (tmp_path / "results" / "empty").mkdir(parents=True)
    result = nightly(args, tmp_path, sweep_refused(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nightly.sh: error: {said}"), lines
    assert "baseline" not in lines[0], lines[0]
    assert not (tmp_path / "sweeps.log").exists()
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["empty"]


def test_bootstrap_with_a_baseline_says_it_was_ignored(tmp_path: Path) -> None:
    """--bootstrap when the baseline exists gated the night without a word (a user who meant to
    start the baseline over never learnt it was kept): a note, how to start it over, then the
    gate as usual; the window is left as it was."""
    store, tonight = young_window(tmp_path)
    args = ["--run-dir", str(tonight), "--store", str(store), "--no-report", "--bootstrap"]
    result = nightly(args, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.splitlines()[0] == (
        f"nightly.sh: note: --bootstrap ignored: baseline 'nightly' exists in {store}, so tonight "
        f"is gated against it; to start it over from this run instead: distbench baseline save "
        f"{tonight} --name nightly --store {store} --force"
    )
    assert result.stdout.startswith("distbench compare: pass")
    assert (tonight / "compare.json").exists() and window_nights(store) == 2


def compare_crashes(tmp_path: Path, code: int, when: str, also: str = "") -> str:
    """DISTBENCH for nightly.sh: distbench itself, except that `distbench compare` crashes where
    its arguments match the bash pattern `when` (exit `code`, after a traceback and distbench's
    own last line for exit 3; no verdict file written), a test-side shim, never a product flag.
    `also`: bash run first (e.g. to slow a sweep)."""
    wrapper = tmp_path / f"crash-{code}.sh"
    wrapper.write_text(
        f"{also}\n"
        f'if [[ $1 == compare && "$*" == {when} ]]; then\n'
        '    echo "Traceback (most recent call last):" >&2\n'
        '    echo "OverflowError: math range error" >&2\n'
        f'    [[ {code} != 3 ]] || echo "distbench: internal error (exit 3): ..." >&2\n'
        f"    exit {code}\n"
        "fi\n"
        f'exec {sys.executable} -m distbench "$@"\n'
    )
    return f"bash {wrapper}"


@pytest.mark.parametrize("code", [3, 1])
def test_a_crash_of_compare_fails_the_night_and_is_no_regression(code: int, tmp_path: Path) -> None:
    """The gate's compare crashing: exit 3 (distbench's internal error), or exit 1 without its
    verdict file (0.3.0's crash, which a review's nights read as 'REGRESSION, confirmed' three
    nights running): the night fails with exit 2 and says compare failed, no regression; the
    window is left alone."""
    store, tonight = young_window(tmp_path)
    args = ["--run-dir", str(tonight), "--store", str(store), "--no-report", "--update-baseline"]
    result = nightly(args, tmp_path, compare_crashes(tmp_path, code, "*--save*"))
    assert result.returncode == 2, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"nightly.sh: error: distbench compare failed (exit {code}"), last
    assert last.endswith("no verdict, so the night neither passed nor regressed"), last
    assert "REGRESSION" not in result.stderr and window_nights(store) == 2


def test_a_crash_of_compare_in_the_options_check_stops_before_any_sweep(tmp_path: Path) -> None:
    """compare judging the baseline against itself (the options' check) crashed, exit 3: the
    check passed it as if the options were good, and the night swept to a gate that would crash."""
    store, _ = young_window(tmp_path, nights=1)
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    night = tmp_path / "results" / "night"
    args = ["--config", str(config), "--store", str(store), "--out", str(night)]
    result = nightly(args, tmp_path, compare_crashes(tmp_path, 3, "*"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "OverflowError: math range error" in result.stderr  # compare's own error, shown
    assert result.stderr.strip().splitlines()[-1] == (
        "nightly.sh: error: distbench compare failed (exit 3) judging the baseline 'nightly' "
        "against itself: tonight's gate would fail too (nothing swept)"
    )
    assert not night.exists()


@pytest.mark.slow
def test_a_crash_of_the_re_runs_compare_confirms_nothing(tmp_path: Path, one_night: Path) -> None:
    """A real night (broadcast 100x slower from the test side) regresses; the gate of its re-run
    crashes (exit 3): the night fails with exit 2, not 1, its record says the re-run's compare
    failed (never 'regressed'), and its compare.md opens with the same."""
    store, config = bootstrapped(tmp_path, one_night)
    night = tmp_path / "results" / "nightly-crash"
    slowed = first_sweep_slowed(tmp_path).split(" ", 1)[1]
    distbench = compare_crashes(
        tmp_path, 3, "*-confirm*--save*", also=f'[[ $1 != sweep ]] || exec bash {slowed} "$@"'
    )
    args = ["--config", str(config), "--launches", "1", "--store", str(store), "--no-report"]
    result = nightly([*args, "--threshold", "3000%", "--out", str(night)], tmp_path, distbench)
    assert result.returncode == 2, result.stdout + result.stderr
    again = Path(f"{night}-confirm")
    assert "tonight regressed; confirming" in result.stderr  # the first gate did regress
    words = (
        f"this night regressed, and the gate of its re-run at once ({again}) failed (distbench "
        "compare exit 3, no verdict): the regression stands, unconfirmed"
    )
    assert result.stderr.strip().splitlines()[-1] == (
        f"nightly.sh: error: distbench compare failed (its error above): {words}; see "
        f"{night}/compare.md"
    )
    assert state(night)["confirmation"] == f"{again} compare failed"
    assert state(again)["confirms"] == str(night)
    assert (night / "compare.md").read_text().startswith(f"> **ci/nightly.sh: {words}.**")
    assert not (again / "compare.json").exists()
