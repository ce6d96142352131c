"""The scale benchmark (#27 §3): run directories as a 1,024-rank latency sweep (20 sizes x 500
samples) writes them, and a year of nights (365 x 2 launches of 108 rows, 1,024 ranks); the time
and peak memory of compare, report, baseline save, --resume and history on them, the bytes on
disk, and the bytes each rank sends at the end of a launch (counted). Prints the table of
docs/performance.md.

    python ci/bench_scale.py                 # everything (about 15 min on a loaded 2-core box)
    python ci/bench_scale.py --nights 30     # a shorter history, for a quick look
    python ci/bench_scale.py --only history --nights-dir /tmp/year --warm 3
        # history alone: the nights written once into /tmp/year and read from there again
        # on later calls (their cache beside them); add --no-cold for the warm runs alone

Every command runs as its own process (`python -m distbench ...`; --resume with its launch
replaced by a no-op: its reading and repair of the run, not a 1,024-rank torchrun), timed by the
wall clock and its CPU time (user + system), its peak memory the child's maximum resident set
(os.wait4). The files come from
distbench's own writers (ci/scale_data.py). Numbers vary with the box's load: the table says
the load average it was taken under.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_data as data

SIZES, TRIALS, ITERS = 20, 25, 20  # 500 samples a row: 25 trials of 20 isolated ops
NIGHT_TRIALS = 10
RESUME = """
import sys
import distbench.launch.resume as resume
resume.execute = lambda *args, **kwargs: 0  # the launch itself: a 1,024-rank torchrun elsewhere
sys.exit(resume.resume_run(sys.argv[1]))
"""
SENT = re.compile(r"rank samples \((\w+)\): (\d+) rows, (\d+) bytes sent")


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds (user + system), peak resident MB, exit code) of
    `python ARGV`. On a shared box the CPU time is the figure that the load moves least."""
    begin = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - begin
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: compare's or history's verdict, not a failure
        assert proc.stderr is not None
        print(f"  {' '.join(argv[:4])} ...: exit {code}: {proc.stderr.read().decode()[-400:]}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def interrupted_copy(run: Path, target: Path) -> Path:
    """A copy of `run` cut short: its last row gone (its samples left: orphans) and its
    manifest saying interrupted, as Ctrl-C leaves a run."""
    shutil.copytree(run, target)
    lines = (target / "results.csv").read_text().splitlines(keepends=True)
    (target / "results.csv").write_text("".join(lines[:-1]))
    manifest = json.loads((target / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    return target


def sent_at_the_end(work: Path, env: dict[str, str]) -> dict[int, tuple[int, int]]:
    """A real 3-rank gloo launch with --rank-samples node: global rank -> (its rows, the bytes
    it sent at the end of the launch), as each rank logged them (bench/ranks.py counts them)."""
    out = work / "sent"
    argv = ["-m", "distbench", "allreduce", "--backend", "gloo", "--world-sizes", "3"]
    argv += ["--sizes", "1K,4K", "--iters", "2", "--trials", "5", "--warmup", "1", "--quiet"]
    argv += ["--rank-samples", "node", "--out", str(out)]
    subprocess.run([sys.executable, *argv], env=env, check=True, capture_output=True)
    found = {}
    for log in sorted((out / "logs").glob("ws3-rank*.log")):
        match = SENT.search(log.read_text())
        assert match, f"{log}: no 'rank samples' line"
        found[int(log.stem.rsplit("rank", 1)[1])] = (int(match[2]), int(match[3]))
    return found


def writer_us_per_row() -> tuple[float, float]:
    """CPU microseconds per samples.csv row of CsvSink's cell step, 0.2.0's (astuple +
    replace + format_value) and today's (attrgetter), best of 5 over 100,000 rows."""
    from dataclasses import astuple, replace

    from distbench.collectors.schema import SampleRow, column_names
    from distbench.collectors.sink import row_cells

    def old(row: SampleRow) -> list[object]:
        row = replace(row, run_id="r") if not row.run_id else row
        return [(repr(v) if v == v else "") if isinstance(v, float) else v for v in astuple(row)]

    rows = [SampleRow("ws1024/i3", -1, t, -1, 12.5 + t) for t in range(100_000)]
    times = []
    for cells in (old, row_cells(column_names(SampleRow), "r")):
        best = float("inf")
        for _ in range(5):
            begin = time.process_time()
            for row in rows:
                cells(row)
            best = min(best, time.process_time() - begin)
        times.append(best / len(rows) * 1e6)
    return times[0], times[1]


def node_parquet_bytes(work: Path) -> int:
    """One node's --rank-samples node file of the latency sweep (8 ranks x 20 x 500 samples),
    written by collectors/rank_samples.py."""
    from distbench.collectors.rank_samples import samples_table, write_samples

    count = data.GPUS * SIZES * TRIALS * ITERS
    per = SIZES * TRIALS * ITERS
    measurement = [f"ws{data.RANKS}/i{(i % per) // (TRIALS * ITERS)}" for i in range(count)]
    ranks = [i // per for i in range(count)]
    trial = [(i % (TRIALS * ITERS)) // ITERS for i in range(count)]
    iters = [i % ITERS for i in range(count)]
    import numpy as np

    times = np.random.default_rng(0).lognormal(3.5, 0.05, count).tolist()
    path = work / "node0.parquet"
    table = samples_table(measurement, ranks, trial, iters, times, [float("nan")] * count)
    write_samples(path, table)
    return path.stat().st_size


def history_rows(
    nights: Path, count: int, work: Path, env: dict[str, str], cold: bool, warm: int
) -> list[tuple[str, float, float, float, int]]:
    """`distbench history` over the nights: cold (an empty cache file beside them), then `warm`
    times with that cache filled."""
    cache = nights / "history.duckdb"
    if cold:
        cache.unlink(missing_ok=True)
    elif not cache.is_file():
        print(f"  no cache at {cache}: the first run below fills it (cold)")
    argv = ["-m", "distbench", "history", "--glob", str(nights / "nightly-*")]
    argv += ["--out", str(work / "h"), "--cache", str(cache)]
    labels = ["cold"] * cold + ["warm"] * warm
    return [
        (f"history of {count} nights x 2 launches ({label})", *measure(argv, env))
        for label in labels
    ]


def nights_at(root: Path, count: int) -> tuple[Path, str]:
    """The nights under `root`, written there unless an earlier call wrote the same ones (its
    mark file says how many, of how many trials); and a line saying which."""
    mark = root / "nights.written"
    want = f"{count} nights, {NIGHT_TRIALS} trials\n"
    if mark.is_file() and mark.read_text() == want:
        return root, f"nights reused from {root} ({want.strip()})"
    if mark.is_file():  # this benchmark's nights, of another count: written again
        shutil.rmtree(root)
    elif root.exists() and any(root.iterdir()):
        sys.exit(f"--nights-dir {root} holds files this benchmark did not write: give an empty "
                 "or new folder")  # fmt: skip
    begin = time.perf_counter()
    data.write_nights(root, count, NIGHT_TRIALS)
    mark.write_text(want)
    return root, f"writing {count} nights into {root}: {time.perf_counter() - begin:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365, help="nights of history (2 launches)")
    parser.add_argument("--only", choices=["history"], help="measure this command alone")
    parser.add_argument("--nights-dir", type=Path, help="write the nights here once and reuse "
                        "them (and their history cache) on later calls; default: a fresh temp "
                        "directory")  # fmt: skip
    parser.add_argument("--warm", type=int, default=1, help="warm history runs (default 1)")
    parser.add_argument("--no-cold", action="store_true", help="no cold history run: the cache "
                        "an earlier call left in --nights-dir is used")  # fmt: skip
    args = parser.parse_args()
    if args.no_cold and args.nights_dir is None:
        parser.error("--no-cold needs --nights-dir (a cache an earlier call filled)")
    work = Path(tempfile.mkdtemp(prefix="distbench-scale-"))
    env = {**os.environ, "DISTBENCH_BASELINES": str(work / "baselines")}
    table: list[tuple[str, float, float, float, int]] = []
    lines: list[str] = []
    try:
        if args.only != "history":
            a = latency_rows(work, env, table, lines)
        if args.nights_dir is None:
            nights, line = nights_at(work / "nights", args.nights)
        else:
            nights, line = nights_at(args.nights_dir.resolve(), args.nights)
        lines.append(line)
        table += history_rows(nights, args.nights, work, env, not args.no_cold, args.warm)
        if args.only != "history":
            report_lines(lines, a, nights, args.nights)
            sent = sent_at_the_end(work, env)
            sent_lines(lines, sent, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# {data.RANKS} ranks ({data.NODES} nodes x {data.GPUS}), {SIZES} sizes x "
          f"{TRIALS * ITERS} samples; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")  # fmt: skip
    print("| what | wall | CPU | peak memory | exit |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, took, cpu, peak, code in table:
        print(f"| {name} | {took:.1f} s | {cpu:.1f} s | {peak:.0f} MB | {code} |")
    print()
    print("\n".join(lines))


def latency_rows(
    work: Path, env: dict[str, str], table: list[tuple[str, float, float, float, int]],
    lines: list[str],
) -> Path:  # fmt: skip
    """Two 1,024-rank latency runs written, then compare, report, baseline save and --resume
    of them measured; the first run's directory."""
    a, b = work / "a", work / "b"
    begin = time.perf_counter()
    cases = data.latency_cases(SIZES)
    data.write_run(a, "a", cases, TRIALS, ITERS, 1)
    data.write_run(b, "b", cases, TRIALS, ITERS, 2)
    lines.append(f"writing the two runs: {time.perf_counter() - begin:.1f} s")
    commands = {
        "compare of two 1,024-rank runs": ["compare", str(a), str(b)],
        "report of two 1,024-rank runs": ["report", str(a), str(b), "--out", str(work / "r")],
        "baseline save of one": ["baseline", "save", str(a), "--name", "scale"],
    }
    for name, argv in commands.items():
        table.append((name, *measure(["-m", "distbench", *argv], env)))
    cut = interrupted_copy(a, work / "cut")
    table.append(("--resume of one, cut short", *measure(["-c", RESUME, str(cut)], env)))
    return a


def report_lines(lines: list[str], run: Path, nights: Path, count: int) -> None:
    """Bytes on disk: a run, a night, the manifest; before (0.2.0, schema v3) and now."""
    now = disk_bytes(run)
    v3 = now - (run / "samples.csv").stat().st_size + data.v3_samples_bytes(run, TRIALS * ITERS)
    whole, packed = data.manifest_sizes()
    v3 += whole - (run / "manifest.json").stat().st_size
    lines.append(f"latency run on disk: {now:,} bytes; v3 (every rank's samples): ~{v3:,} "
                 f"({now / v3:.2%})")  # fmt: skip
    night = sorted(nights.glob("nightly-*"))[0]
    now_night = disk_bytes(night)
    samples_v3 = sum(
        data.v3_samples_bytes(launch, NIGHT_TRIALS) - (launch / "samples.csv").stat().st_size
        for launch in sorted(night.iterdir())
    )
    v3_night = now_night + samples_v3 + 2 * (whole - packed)
    lines.append(f"a night (2 launches x 108 rows x {NIGHT_TRIALS} samples): {now_night:,} bytes;"
                 f" v3 ~{v3_night:,} ({now_night / v3_night:.2%}); {count} nights: "
                 f"{sum(map(disk_bytes, nights.glob('nightly-*'))) / 1e9:.2f} GB (a year of v3: "
                 f"~{v3_night * 365 / 1e9:.0f} GB)")  # fmt: skip
    lines.append(f"manifest.json of 128 nodes: {packed:,} bytes; v3 (every node whole): "
                 f"{whole:,}")  # fmt: skip
    old, new = writer_us_per_row()
    lines.append(f"samples.csv writer, CPU per row: {new:.1f} us (0.2.0's astuple + replace: "
                 f"{old:.1f} us)")  # fmt: skip


def sent_lines(lines: list[str], sent: dict[int, tuple[int, int]], work: Path) -> None:
    """Bytes each rank sends at the end of a launch: counted in a real 3-rank launch, and at
    1,024 ranks by the same encoding (8 bytes of count + 6 float64 per sample row)."""
    counted = ", ".join(f"rank {r}: {rows} rows, {b:,} bytes" for r, (rows, b) in sent.items())
    lines.append(f"sent at the end of a real 3-rank launch (--rank-samples node): {counted}")
    for rank, (rows, sent_bytes) in sent.items():
        assert sent_bytes == (0 if rank == 0 else 8 + rows * 6 * 8), (rank, rows, sent_bytes)
    rows = SIZES * TRIALS * ITERS
    member = 8 + rows * 6 * 8
    from distbench.collectors.schema import SampleRow

    pickled = len(pickle.dumps([SampleRow(f"ws{data.RANKS}/i{i % 20}", 5, i, 0, 1.5 + i)
                                for i in range(rows)]))  # fmt: skip
    lines.append(
        f"at {data.RANKS} ranks, {rows:,} samples each: off and all 0 bytes; node "
        f"{member:,} bytes from each rank to its node's first rank (which receives "
        f"{(data.GPUS - 1) * member:,}, nothing across nodes); global rank 0 receives nothing "
        f"else at the end. v3: every rank's pickled rows to rank 0, "
        f"{pickled:,} bytes each, {(data.RANKS - 1) * pickled / 1e6:,.0f} MB at rank 0"
    )
    lines.append(f"--rank-samples node, one node's Parquet file: {node_parquet_bytes(work):,} "
                 f"bytes (x {data.NODES} nodes a run)")  # fmt: skip


if __name__ == "__main__":
    main()
