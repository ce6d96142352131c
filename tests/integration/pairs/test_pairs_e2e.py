"""`distbench pairs` on real gloo groups: a rank slowed by a test-side wrapper (tests/inject/
slow_rank, loaded through PYTHONPATH only here) is named, alone, at 4 and 6 ranks, and so are two
of 4 slowed at once; --fail-on-outlier exits 1; without the wrapper nobody is flagged.

The delay is strong (the slowed rank sleeps SLOW_DELAY, 5 ms, per 64K message posted, STEADY
below: a healthy message takes 0.1 to 2 ms here, loaded), so noise on this 2-core box (6 ranks
oversubscribe it) cannot move a healthy rank by the 30 % below the faster half that the default
threshold needs at least (pairs/spec.py EFFECT_FLOOR), while the slow rank's pairs are several
times slower. (At 2 ms, a loaded box once left the slow rank at z = -2.45, unflagged.)
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.paths import ROOT

if TYPE_CHECKING:
    from tests.conftest import CliRun

SLOW_RANK = ROOT / "tests" / "inject" / "slow_rank"
SLOW_FIRST = ROOT / "tests" / "inject" / "slow_first"
QUICK = ["--backend", "gloo", "--sizes", "4K", "--iters", "2", "--trials", "3", "--warmup", "1"]
QUICK += ["--quiet"]
WINDOW = ["--window", "8"]
STEADY = ["--sizes", "64K", "--iters", "5", "--trials", "5"]  # after QUICK: the last one wins
SLOW_DELAY = 0.005
"""Seconds the slowed rank sleeps before each message it posts (module docstring)."""
"""Where a test names the flagged ranks exactly: 4K messages of ~100 us on ranks sharing 2
cores let one preemption make a healthy rank look 3x slow (a second rank flagged beside the
slowed one, now and then under load); windows of 64K messages, 5 per trial, 5 trials do not."""


def run_pairs(
    out: Path, world_size: int, slow: str | None, *extra: str, first: int = 0
) -> subprocess.CompletedProcess[str]:
    """`slow`: `RANKS:DELAY` slowed by tests/inject/slow_rank, or with `first` the one rank
    slowed for its first `first` posts only (tests/inject/slow_first)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    if slow is not None:
        wrapper = SLOW_FIRST if first else SLOW_RANK
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(wrapper), env.get("PYTHONPATH")]))
        if first:
            env["DISTBENCH_TEST_SLOW_FIRST"] = f"{slow}:{first}"
        else:
            env["DISTBENCH_TEST_SLOW_RANK"] = slow
    argv = ["pairs", *QUICK, "--world-sizes", str(world_size), "--out", str(out), *extra]
    return subprocess.run(
        [sys.executable, "-m", "distbench", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def outliers(run_dir: Path) -> list[str]:
    return [row["rank"] for row in read(run_dir / "ranks.csv") if row["outlier"] == "true"]


@pytest.mark.parametrize(("world_size", "slow_ranks"), [(4, [2]), (6, [5]), (4, [1, 3])])
def test_slow_ranks_are_named_alone_and_fail_the_run(
    tmp_path: Path, world_size: int, slow_ranks: list[int], request: pytest.FixtureRequest
) -> None:
    """One slow rank, and half of the ranks slow (2 of 4: 0.2.0's medians over each rank's pairs
    were all slow then, and nobody was named; the decomposition of the pair matrix names both).
    The 6-rank run is the session's `six_ranks_one_slow` (conftest.py; the report test reads it)."""
    named = ",".join(map(str, slow_ranks))
    if world_size == 6:
        shared = request.getfixturevalue("six_ranks_one_slow")
        run_dir, done = shared.out, shared.done
    else:
        run_dir = tmp_path / "run"
        done = run_pairs(
            run_dir, world_size, f"{named}:{SLOW_DELAY}", *WINDOW, *STEADY, "--fail-on-outlier"
        )
    assert done.returncode == 1, done.stderr
    assert outliers(run_dir) == [str(r) for r in slow_ranks]
    flagged = [r for r in read(run_dir / "ranks.csv") if r["outlier"] == "true"]
    assert all(float(r["first_z"]) <= -3.5 for r in flagged)  # flagged twice: confirmed
    assert f"outliers (ranks): {', '.join(map(str, slow_ranks))}\n" in done.stdout
    assert "--fail-on-outlier" in done.stderr
    rows = read(run_dir / "results.csv")
    pairs = {(int(r["src"]), int(r["dst"])) for r in rows}
    assert pairs == {(a, b) for a in range(world_size) for b in range(a + 1, world_size)}
    plan = len(pairs)
    again = [r for r in rows if int(r["measurement"].rsplit("/i", 1)[1]) >= plan]
    assert {(int(r["src"]), int(r["dst"])) for r in again} == {
        p for p in pairs if set(p) & set(slow_ranks)
    }  # the confirmation: the slow ranks' pairs, once more
    with_slow = [r for r in rows if {int(r["src"]), int(r["dst"])} & set(slow_ranks)]
    slow = [float(r["busbw_GBps"]) for r in with_slow]
    fast = [float(r["busbw_GBps"]) for r in rows if r not in with_slow]
    assert max(slow) < min(fast)  # every pair with a slow rank, and only those, is slow


def test_a_rank_slow_only_while_its_pairs_are_first_measured_is_not_named(tmp_path: Path) -> None:
    """4 ranks, rank 1 slowed (tests/inject/slow_first) for the posts of the first measurement
    only: 3 rounds x (1 warm-up + 5 trials x 5 iters) exchanges x 2 x 8 messages. The first
    standings flag it; the confirmation measures its 3 pairs again, at full speed, and clears
    it: no outlier, --fail-on-outlier exits 0, and its pairs' new rows are in results.csv
    (numbered past the plan's 6). A rank slowed throughout is still named (above)."""
    run_dir = tmp_path / "run"
    first_posts = 3 * (1 + 5 * 5) * 2 * 8
    done = run_pairs(
        run_dir, 4, f"1:{SLOW_DELAY}", *WINDOW, *STEADY, "--fail-on-outlier", first=first_posts
    )
    assert done.returncode == 0, done.stderr
    assert outliers(run_dir) == []
    assert "outliers (ranks): none" in done.stdout
    one = next(r for r in read(run_dir / "ranks.csv") if r["rank"] == "1")
    assert float(one["first_z"]) <= -3.5 < float(one["robust_z"])  # flagged once, cleared
    rows = read(run_dir / "results.csv")
    assert [r["measurement"] for r in rows[:6]] == [f"ws4/i{k}" for k in range(6)]
    # The confirmation's ids: the plan (6) + the pair's place in the rounds
    # [(0,3),(1,2)], [(0,2),(1,3)], [(0,1),(2,3)]; its rows come after the first ones.
    again = [(r["measurement"], int(r["src"]), int(r["dst"])) for r in rows[6:]]
    assert again == [("ws4/i7", 1, 2), ("ws4/i9", 1, 3), ("ws4/i10", 0, 1)]
    log = "\n".join(path.read_text() for path in (run_dir / "logs").glob("*.log"))
    assert "pairs confirmation round 1/3 of ranks 1 throughput size=65536" in log


def test_without_the_wrapper_nobody_is_flagged(tmp_path: Path) -> None:
    """3 ranks: each round runs one pair, two processes on the box's 2 cores. At 4 ranks (two
    pairs at once, 4 processes on 2 cores) a rank that lost its core for a moment was flagged
    now and then (3 times in a day of runs, with 3 or 9 trials): the box, not the rank. 9
    trials of 10 messages of 256K (not 2 of 4K, ~100 us, which one preemption of a few ms made
    a rank look 3x slow) steady the medians. The slowed rank above is flagged at 4 and 6 ranks.
    """
    control = ["--sizes", "256K", "--iters", "10", "--trials", "9"]  # the last one wins
    control += ["--fail-on-outlier"]
    done = run_pairs(tmp_path / "run", 3, None, *WINDOW, *control)
    assert done.returncode == 0, done.stderr
    assert outliers(tmp_path / "run") == []
    assert "outliers (ranks): none" in done.stdout
    standings = read(tmp_path / "run" / "ranks.csv")
    assert [row["rank"] for row in standings] == ["0", "1", "2"]
    assert all(row["pairs"] == "2" for row in standings)


def test_allreduce_on_each_pairs_subgroup_at_odd_world_size(pairs_allreduce_3: CliRun) -> None:
    """3 ranks: the circle method's dummy rank gives 3 rounds of one pair; all_reduce rows carry
    nccl-tests' busbw factor of a 2-rank group (1). A healthy rank that one unlucky round flags
    gets its pairs measured again (rows past the plan of 3, docs/pairs.md#confirmation): the
    planned rows are the 3 pairs, and any further row is a flagged rank's pair measured again."""
    run_dir, done = pairs_allreduce_3.out, pairs_allreduce_3.done
    assert done.returncode == 0, done.stderr
    rows = read(run_dir / "results.csv")
    planned = [r for r in rows if int(r["measurement"].rsplit("/i", 1)[1]) < 3]
    assert sorted((r["src"], r["dst"]) for r in planned) == [("0", "1"), ("0", "2"), ("1", "2")]
    flagged = {r["rank"] for r in read(run_dir / "ranks.csv") if float(r["first_z"]) <= -3.5}
    again = [r for r in rows if r not in planned]
    assert all({r["src"], r["dst"]} & flagged for r in again), (again, flagged)
    assert {r["primitive"] for r in rows} == {"all_reduce"}
    assert {r["busbw_factor"] for r in rows} == {"1.0"}
    assert len(read(run_dir / "ranks.csv")) == 3


def test_a_run_stopped_during_its_confirmation_keeps_its_rows_and_resumes_it(
    tmp_path: Path,
) -> None:
    """4 ranks, rank 1 slowed throughout: Ctrl-C as the confirmation's second round begins. The
    size's first rows and the confirmation's first row are kept (written as each round ended),
    ranks.csv has no standings yet, and the run is not taken for finished although every planned
    row is there: --resume ranks the size, measures what the confirmation had left, names rank
    1, and writes no row twice."""
    import re
    import signal
    import time

    run_dir = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1", DISTBENCH_TEST_SLOW_RANK=f"1:{SLOW_DELAY}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SLOW_RANK), env.get("PYTHONPATH")]))
    argv = ["pairs", *QUICK, *WINDOW, *STEADY, "--world-sizes", "4", "--out", str(run_dir)]
    proc = subprocess.Popen([sys.executable, "-m", "distbench", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    log = run_dir / "logs" / "ws4-progress.log"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and re.search(r"confirmation round 2/", log.read_text()):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    kept = [r["measurement"] for r in read(run_dir / "results.csv")]
    assert kept[:6] == [f"ws4/i{k}" for k in range(6)] and "ws4/i7" in kept, kept
    assert not read(run_dir / "ranks.csv")
    assert "6 of 6 measurements are kept" in err, err
    resumed = subprocess.run([sys.executable, "-m", "distbench", "pairs", "--resume", str(run_dir),
                              "--quiet"], env=env, capture_output=True, text=True, timeout=600,
                             check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    rows = [r["measurement"] for r in read(run_dir / "results.csv")]
    assert len(rows) == len(set(rows)), rows  # nothing measured twice
    assert set(rows) >= {"ws4/i7", "ws4/i9", "ws4/i10"}  # rank 1's pairs, confirmed
    assert outliers(run_dir) == ["1"]
