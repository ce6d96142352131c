"""The GPU smoke's runner (ci/gpu-smoke.sh installs the carried wheels, then runs this): plan the
steps for the GPUs present within the time cap, run each with its own timeout, check its rows,
and write summary.tsv, which fills docs/verified-on.md (ci/gpu_smoke_docs.py).

    python3 ci/gpu_smoke.py --plan --gpus 1          # the plan and its times, nothing run
    python3 ci/gpu_smoke.py                          # every step for this node's GPUs
    python3 ci/gpu_smoke.py --only graph-nccl,pytest-gpu-graph
    python3 ci/gpu_smoke.py --only pytest-gpu-examples   # the manual's gpu examples (on request)
    python3 ci/gpu_smoke.py --cli-only               # the CLI side only (no GPU, no torch)

A step starts only when its planned time is left under the cap ("skipped: no time" otherwise,
never "failed"); it runs under its own timeout (twice its plan, at least its plan + 30 s, never
past the cap; SIGTERM, then SIGKILL 15 s later: distbench keeps the rows it finished). A step
that needs more GPUs than the node has is "skipped: needs N GPUs". Exit 0 when no step failed,
timed out or found no time; 1 otherwise; 2 on bad arguments. Torch-free: torch is imported by the
preflight's child process and by distbench's ranks only.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from gpu_smoke_steps import CLI, Step, steps

ROOT = Path(__file__).resolve().parents[1]
CAP_S = {1: 300.0}
"""The whole smoke's cap with 1 GPU, install included: one device call of 5 minutes."""
CAP_MANY_S = 600.0
"""With 2 GPUs or more (world sizes up to 8: bigger launches, more steps): 10 minutes."""
INSTALL_PLAN_S = 15.0
"""Unpacking the carried wheels (~35 MB, duckdb most of it) with pip --no-index --target."""
PREFLIGHT_PLAN_S = 10.0
SOURCE_DIRS = ("bench", "collectors", "reports")


def source_hash(root: Path = ROOT) -> str:
    """sha256 of distbench's sources (every .py under bench, collectors, reports, and
    pyproject.toml): the carried wheel's stamp, so a stale wheel is caught before it runs."""
    digest = hashlib.sha256()
    files = sorted(p for d in SOURCE_DIRS for p in (root / d).rglob("*.py"))
    for path in [*files, root / "pyproject.toml"]:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


PREFLIGHT = r"""
import importlib, inspect, json, subprocess, sys
missing = []
for name in sys.argv[1].split(","):
    try:
        importlib.import_module(name)
    except Exception as error:  # one line per missing import, the reason after it
        missing.append(f"missing: {name} ({type(error).__name__}: {str(error).splitlines()[0]})")
env = {}
if "torch" in sys.argv[1].split(","):
    import torch
    env = {"torch": torch.__version__, "cuda": str(torch.version.cuda), "gpus": 0}
    if torch.cuda.is_available():
        env["gpus"] = torch.cuda.device_count()
        env["gpu"] = torch.cuda.get_device_name(0)
        env["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    apis = {  # what distbench's CUDA paths call (docs/apis.md: checked against 2.11's sources)
        "torch.cuda.graph(capture_error_mode=)": lambda: "capture_error_mode"
        in inspect.signature(torch.cuda.graph.__init__).parameters,
        "torch.cuda.get_device_properties().uuid": lambda: not env.get("gpus")
        or hasattr(torch.cuda.get_device_properties(0), "uuid"),
        "torch.distributed._symmetric_memory.empty/rendezvous/set_backend/get_backend": lambda: all(
            hasattr(importlib.import_module("torch.distributed._symmetric_memory"), f)
            for f in ("empty", "rendezvous", "set_backend", "get_backend")),
        "torch.distributed.fsdp.fully_shard": lambda: hasattr(
            importlib.import_module("torch.distributed.fsdp"), "fully_shard"),
        "torch.distributed.pipelining.Schedule1F1B": lambda: hasattr(
            importlib.import_module("torch.distributed.pipelining"), "Schedule1F1B"),
        "init_process_group(device_id=)": lambda: "device_id"
        in inspect.signature(torch.distributed.init_process_group).parameters,
    }
    for name, present in apis.items():
        try:
            ok = present()
        except Exception:
            ok = False
        if not ok:
            missing.append(f"missing: {name} in torch {torch.__version__}")
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=15).stdout.split()
    env["driver"] = smi[0] if smi else "-"
except (OSError, subprocess.SubprocessError):
    env["driver"] = "-"
print(json.dumps({"missing": missing, "env": env}))
"""


def preflight(needs: list[str], log: Path) -> tuple[list[str], dict[str, str]]:
    """(one line per missing import or torch API, the environment's facts)."""
    done = subprocess.run(
        [sys.executable, "-c", PREFLIGHT, ",".join(needs)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    log.write_text(done.stdout + done.stderr)
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [f"preflight could not run: {done.stderr.strip()[-300:]}"], {}
    return found["missing"], {k: str(v) for k, v in found["env"].items()}


def run_command(argv: list[str], log: Path, timeout_s: float) -> int | str:
    """Its exit code, or 'timed-out' (SIGTERM at the timeout, SIGKILL 15 s later); output to
    `log`."""
    with open(log, "a") as handle:
        handle.write(f"$ {' '.join(argv)}\n")
        handle.flush()
        proc = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            return proc.wait(timeout=max(1.0, timeout_s))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            return "timed-out"


def command_line(step: Step, args: tuple[str, ...], run_dir: Path) -> list[str]:
    if args[0] == "pytest":
        return [sys.executable, "-m", *args]
    out = ["--out", str(run_dir)] if step.out else ["--dry-run"]
    return [sys.executable, "-m", "distbench", *args, *out]


def run_dirs(step: Step, work: Path) -> list[Path]:
    """One run directory per command: STEP, or STEP-1, STEP-2 ... for several."""
    if len(step.commands) == 1:
        return [work / step.name]
    return [work / f"{step.name}-{i + 1}" for i in range(len(step.commands))]


def run_step(step: Step, work: Path, timeout_s: float) -> tuple[str, str]:
    """(status, exit) of one step: passed, failed (with the reason in its log), timed-out."""
    log = work / f"{step.name}.log"
    deadline = time.time() + timeout_s
    dirs = run_dirs(step, work)
    for args, run_dir in zip(step.commands, dirs, strict=True):
        code = run_command(command_line(step, args, run_dir), log, deadline - time.time())
        if code == "timed-out":
            return "timed-out", "-"
        text = log.read_text(errors="replace")
        unsupported = step.notes.get("unsupported")
        if code != 0 and unsupported and unsupported in text:
            return "skipped: not supported here", str(code)
        if code != step.expect_exit:
            return "failed", str(code)
        if step.expect_exit == 2 and not refused_in_one_line(text):
            return "failed", "2 (not one line)"
    errors = [e for d in dirs if step.check and (e := step.check(d)) is not None]
    if errors:
        with open(log, "a") as handle:
            handle.write(f"check failed: {errors[0]}\n")
        return "failed", "check"
    return "passed", "0"


def refused_in_one_line(text: str) -> bool:
    """The last command's output: exactly one 'distbench: error:' line."""
    last = text.rsplit("$ ", 1)[-1].splitlines()[1:]
    return len([line for line in last if line.startswith("distbench: error: ")]) == 1


def plan(selected: list[Step], gpus: int, cap: float, install_s: float) -> list[str]:
    lines = [f"{'step':<22}{'planned s':>10}{'timeout s':>10}  status if run now"]
    used = install_s + PREFLIGHT_PLAN_S
    lines.append(f"{'install':<22}{install_s:>10.0f}{'-':>10}")
    lines.append(f"{'preflight':<22}{PREFLIGHT_PLAN_S:>10.0f}{'120':>10}")
    for step in selected:
        planned = step.planned_s()
        if step.min_gpus > gpus:
            lines.append(f"{step.name:<22}{0:>10}{'-':>10}  skipped: needs {step.min_gpus} GPUs")
            continue
        fits = used + planned <= cap
        note = "runs" if fits else "skipped: no time"
        timeout = min(max(2 * planned, planned + 30), max(0.0, cap - used))
        lines.append(f"{step.name:<22}{planned:>10.0f}{timeout:>10.0f}  {note}")
        used += planned if fits else 0
    lines.append(f"{'total planned':<22}{used:>10.0f}   cap {cap:.0f} s, {gpus} GPU(s)")
    return lines


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true", help="print the plan and stop")
    parser.add_argument("--only", default="", help="comma list of step names to run")
    parser.add_argument("--gpus", type=int, default=None, help="plan for this many GPUs")
    parser.add_argument("--time-cap", type=float, default=None, help="seconds for everything")
    parser.add_argument("--cli-only", action="store_true", help="the CLI side only, no GPU")
    parser.add_argument("--source-hash", action="store_true", help="print the sources' stamp")
    parser.add_argument("--out", default=os.environ.get("SMOKE_DIR", "/tmp/distbench-gpu-smoke"))
    args = parser.parse_args(argv)
    if args.gpus is not None and args.gpus < 0:
        parser.error("--gpus must be 0 or more")
    return args


def count_gpus() -> int:
    if shutil.which("nvidia-smi") is None:
        return 0
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    return sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))


def select(gpus: int, only: str) -> list[Step]:
    every = steps(max(gpus, 1))
    if not only:
        return [s for s in every if not s.on_request]
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in {s.name for s in every}]
    if unknown:
        known = ", ".join(s.name for s in every)
        print(f"gpu-smoke: unknown step {unknown[0]!r}; steps: {known}", file=sys.stderr)
        sys.exit(2)
    return [s for s in every if s.name in names]


def cli_only(work: Path) -> int:
    """The rehearsal's part: the CLI's imports and --help of every command, no GPU, no torch."""
    missing, _ = preflight(list(CLI), work / "preflight.log")
    for line in missing:
        print(line)
    commands = ["allreduce", "sweep", "sendrecv", "ddp", "pipeline", "overlap", "report"]
    failed = 0
    for cmd in [[], *([c] for c in commands)]:
        help_log = work / "cli-help.log"
        code = run_command([sys.executable, "-m", "distbench", *cmd, "--help"], help_log, 60)
        print(f"distbench {' '.join(cmd)} --help: exit {code}")
        failed += code != 0
    return 1 if missing or failed else 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.source_hash:
        print(source_hash())
        return 0
    t0 = float(os.environ.get("SMOKE_T0", time.time()))
    install_s = float(os.environ.get("SMOKE_INSTALL_S", INSTALL_PLAN_S))
    gpus = count_gpus() if args.gpus is None else args.gpus
    cap = args.time_cap or (CAP_S.get(gpus, CAP_MANY_S) if gpus else CAP_S[1])
    work = Path(args.out)
    if args.cli_only:
        work.mkdir(parents=True, exist_ok=True)
        return cli_only(work)
    selected = select(gpus, args.only)
    print("\n".join(plan(selected, max(gpus, 1), cap, install_s)))
    if args.plan:
        return 0
    from gpu_smoke_report import finish

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    needs = sorted({n for s in selected if s.min_gpus <= gpus for n in s.needs})
    missing, env = preflight(needs, work / "preflight.log")
    env["date"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    env["gpu"] = f"{env.get('gpu', 'no GPU')} x{env.get('gpus', 0)}"
    results = [("install", "passed", "0", install_s, INSTALL_PLAN_S, "")]
    status = "failed" if missing else "passed"
    for line in missing:
        print(line)
    results.append(("preflight", status, "-", time.time() - t0 - install_s, PREFLIGHT_PLAN_S, ""))
    for step in selected:
        left = cap - (time.time() - t0)
        planned = step.planned_s()
        began = time.time()
        if step.min_gpus > gpus:
            status, code = f"skipped: needs {step.min_gpus} GPUs", "-"
        elif missing:
            status, code = "skipped: preflight failed", "-"
        elif left < planned:
            status, code = "skipped: no time", "-"
        else:
            print(f"== {step.name} (planned {planned:.0f} s, {left:.0f} s left)", flush=True)
            status, code = run_step(step, work, min(max(2 * planned, planned + 30), left))
        seconds = time.time() - began
        print(f"   {step.name}: {status} ({seconds:.0f} s)", flush=True)
        results.append((step.name, status, code, seconds, planned, "; ".join(step.covers)))
    return finish(results, env, work, time.time() - t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
