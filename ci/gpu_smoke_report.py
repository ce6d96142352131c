"""The GPU smoke's output: summary.tsv (one line per step with the node's GPU, driver, torch, CUDA
and NCCL versions), a table of every row measured, and what comes back from a device call ($OUT:
summary.tsv, smoke-runs.tar.gz with every step's log and CSVs). And the other way round:

    python3 ci/gpu_smoke_report.py --fill docs/verified-on.md summary.tsv

writes "DATE, GPU xN, driver D, torch T, NCCL N (step)" into the GPU column of every row of the
docs' table that a passed step covers (its `covers` are those rows' first cells), and "failed on
..." where a covering step failed; rows no step covered keep what they say.
"""

from __future__ import annotations

import csv
import os
import sys
import tarfile
from pathlib import Path

FIELDS = ("step", "status", "exit", "seconds", "planned_s", "covers")
ENV_FIELDS = ("date", "gpu", "driver", "torch", "cuda", "nccl")
TARBALL_LIMIT = 12 << 20
"""Bytes of run files packed for the trip back (the device returns files of 16 MB at most)."""


def write_summary(path: Path, results: list[tuple[object, ...]], env: dict[str, str]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow([*FIELDS, *ENV_FIELDS])
        for name, status, code, seconds, planned, covers in results:
            timing = [f"{float(seconds):.0f}", f"{float(planned):.0f}"]  # type: ignore[arg-type]
            writer.writerow(
                [name, status, code, *timing, covers, *(env.get(k, "-") for k in ENV_FIELDS)]
            )


def rows_table(work: Path) -> list[str]:
    """Every row measured: run, primitive or strategy, world size, dtype, mode, size, p50, busbw,
    timer, wrong, enqueue_us, dispatch_bound."""
    lines = [
        f"{'run':<20}{'primitive':<16}{'ws':>3} {'dtype':<9}{'mode':<11}{'size/strategy':>15}"
        f"{'time_us':>11}{'busbw':>9} {'timer':<17}{'wrong':>6}{'enq_us':>8} {'bound':<5}"
    ]
    for path in sorted(work.glob("*/results.csv")):
        with open(path, newline="") as handle:
            for r in csv.DictReader(handle):
                training = r["primitive"] in ("ddp", "pipeline")
                what = r.get("strategy", "") if training else r.get("size_bytes", "")
                time_us = r.get("step_time_us_p50" if training else "time_us_p50") or "nan"
                lines.append(
                    f"{path.parent.name[:19]:<20}{r['primitive'][:15]:<16}{r['world_size']:>3} "
                    f"{r.get('dtype', '')[:8]:<9}{r.get('mode', 'step')[:10]:<11}{what:>15}"
                    f"{float(time_us):>11.1f}{float(r.get('busbw_GBps') or 'nan'):>9.2f} "
                    f"{r.get('timer', '')[:16]:<17}{r.get('wrong', ''):>6}"
                    f"{float(r.get('enqueue_us') or 'nan'):>8.1f} {r.get('dispatch_bound', '')}"
                )
    return lines


def pack(work: Path, target: Path) -> None:
    """The steps' logs and CSVs (not samples of very long runs) into one tarball."""
    total = 0
    with tarfile.open(target, "w:gz") as tar:
        for path in sorted(work.rglob("*")):
            if path.is_file() and path.suffix in (".log", ".csv", ".json", ".tsv", ".txt"):
                size = path.stat().st_size
                if total + size <= TARBALL_LIMIT:
                    tar.add(path, arcname=str(path.relative_to(work)))
                    total += size


def finish(results: list[tuple[object, ...]], env: dict[str, str], work: Path, took: float) -> int:
    summary = work / "summary.tsv"
    write_summary(summary, results, env)
    print()
    print("\n".join(rows_table(work)))
    print()
    with open(summary) as handle:
        for line in handle:
            cells = line.rstrip("\n").split("\t")
            print(f"{cells[0]:<22}{cells[1]:<28}{cells[2]:>6}{cells[3]:>6}{cells[4]:>6}")
    env_line = ", ".join(f"{k} {env.get(k, '-')}" for k in ENV_FIELDS)
    print(f"node: {env_line}")
    bad = [r for r in results if not (r[1] == "passed" or str(r[1]).startswith("skipped: needs"))]
    bad = [r for r in bad if r[1] != "skipped: not supported here"]
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "summary.tsv").write_text(summary.read_text())
        pack(work, Path(out) / "smoke-runs.tar.gz")
    verdict = "all steps passed" if not bad else f"{len(bad)} steps did not pass"
    print(f"gpu-smoke: {verdict} in {took:.0f} s; summary: {summary}")
    if bad:
        names = ",".join(str(r[0]) for r in bad if r[0] not in ("install", "preflight"))
        print(f"rerun: bash ci/gpu-smoke.sh --only {names}" if names else "")
    return 1 if bad else 0


def fill(doc: Path, summary: Path) -> int:
    """The GPU column of doc's table from summary.tsv (module docstring); lines changed."""
    with open(summary, newline="") as handle:
        steps = list(csv.DictReader(handle, delimiter="\t"))
    verdicts: dict[str, str] = {}
    for s in steps:
        where = (
            f"{s['date']}, {s['gpu']}, driver {s['driver']}, torch {s['torch']}, NCCL {s['nccl']}"
        )
        for feature in filter(None, s["covers"].split("; ")):
            if s["status"] == "passed":
                verdicts.setdefault(feature, f"{where} (`{s['step']}`)")
            elif s["status"] in ("failed", "timed-out"):
                verdicts[feature] = f"failed on {where} (`{s['step']}`)"
    lines = doc.read_text().splitlines()
    changed = 0
    for i, line in enumerate(lines):
        cells = line.split(" | ")
        feature = cells[0].removeprefix("| ").strip()
        if line.startswith("| ") and len(cells) >= 3 and feature in verdicts:
            cells[-1] = verdicts[feature] + " |"
            lines[i] = " | ".join(cells)
            changed += 1
    doc.write_text("\n".join(lines) + "\n")
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--fill":
        print("usage: gpu_smoke_report.py --fill docs/verified-on.md summary.tsv", file=sys.stderr)
        sys.exit(2)
    print(f"{fill(Path(sys.argv[2]), Path(sys.argv[3]))} rows of {sys.argv[2]} filled")
