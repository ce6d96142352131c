"""`distbench acceptance` end to end, through the launch path every command takes (torchrun's own
rendezvous, one `distbench` per node): pairs, then the nightly matrix at the full world size, then
on the node of global rank 0 the verdict (acceptance.json) and `distbench report` on both runs
with the reference values and "What differs".

    OUT/pairs/        the pairs run (node K > 0: OUT/pairs/node<K>/)
    OUT/sweep/        the nightly matrix at the full world size
    OUT/matrix.toml   that matrix, a `distbench sweep --config` file (node K: OUT/node<K>/)
    OUT/report/       distbench report OUT/pairs OUT/sweep [--reference FILE]
    OUT/acceptance.json
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from distbench.acceptance.plan import Plan, base_plan, describe, fit_budget
from distbench.acceptance.verdict import Verdict, judge
from distbench.collectors.manifest import read_manifest
from distbench.collectors.rundir import node_dir
from distbench.collectors.schema import MANIFEST_JSON, RANKS_CSV, RESULTS_CSV
from distbench.collectors.sink import read_rows
from distbench.launch.run import EXIT_INTERRUPTED, default_run_dir
from distbench.options.launch import LaunchArgs, Machine, ResolvedLaunch, resolve_launch
from distbench.parse import UsageError

if TYPE_CHECKING:
    from distbench.reports.render import Section

EXIT_PASS, EXIT_NODE_FAILS, EXIT_BENCHMARK_FAILED = 0, 1, 3
VERDICT_JSON = "acceptance.json"
VERDICT_VERSION = 1


Launched = tuple[int, Path]
"""A launch's exit code and its run directory."""


@dataclass(frozen=True)
class Stages:
    """The launches, as the CLI runs every command's (cli/acceptance.py: distbench.cli is the
    roof, which this package does not import)."""

    check_matrix: Callable[[Path, ResolvedLaunch], None]
    """Read the matrix file as the sweep will and build its workload: a matrix the sweep would
    refuse (one line, exit 2) must not cost the pairs run first."""
    pairs: Callable[[Plan, LaunchArgs, Path], Launched]
    sweep: Callable[[Path, LaunchArgs, Path], Launched]


@dataclass(frozen=True)
class Acceptance:
    """The command's own choices, parsed."""

    budget_min: float | None
    quick: bool
    reference: str | None
    share: float


def say(text: str) -> None:
    print(f"acceptance: {text}", flush=True)


def refuse_launch_options(launch: LaunchArgs) -> None:
    """Options of the launch group acceptance chooses itself."""
    full_world = "it measures the full world (--nnodes x --nproc-per-node) in its own runs"
    given = {
        "--world-sizes": (launch.world_sizes is not None, full_world),
        "--separate-launches": (launch.separate_launches, full_world),
        "--resume": (
            launch.resume is not None,
            "an acceptance is not resumed: its verdict needs every stage of one go; run it "
            "again with a new --out",
        ),
        "--env": (
            bool(launch.env),
            "it judges the environment the nodes have (node facts); set variables in the "
            "nodes' own environment",
        ),
    }
    for flag, (set_, why) in given.items():
        if set_:
            raise UsageError(f"{flag} does not apply to acceptance: {why}; drop it")


def matrix_toml(matrix: dict[str, Any]) -> str:
    """The matrix as a sweep --config file (its values are strings, numbers, booleans and lists
    of strings, which JSON spells as TOML does)."""
    head = "# distbench acceptance: the nightly matrix it ran (distbench sweep --config FILE)\n"
    return head + "".join(f"{k} = {json.dumps(v)}\n" for k, v in matrix.items())


def check_out(out: Path) -> None:
    """--out must be a new or an acceptance directory: not a file, not another run's directory,
    not one that holds a verdict already (runs are never overwritten)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: give a new directory for the acceptance run")
    if (out / VERDICT_JSON).exists():
        raise UsageError(f"--out {out} holds an acceptance verdict: give a new directory")
    held = [name for name in (RESULTS_CSV, MANIFEST_JSON) if (out / name).exists()]
    if held:
        raise UsageError(
            f"--out {out} holds another run ({held[0]}): give a new directory (runs are never "
            "overwritten)"
        )


def write_matrix(plan: Plan, out: Path, node_rank: int) -> Path:
    """OUT/matrix.toml (node K: OUT/node<K>/)."""
    home = node_dir(out, node_rank) if node_rank > 0 else out
    try:
        home.mkdir(parents=True, exist_ok=True)
        path = home / "matrix.toml"
        path.write_text(matrix_toml({"backends": [plan.backend], **plan.matrix}))
    except OSError as error:
        raise UsageError(
            f"cannot write the acceptance directory {home}: {error.strerror}"
        ) from None
    return path


def hosts_of(manifest: dict[str, Any]) -> dict[int, str]:
    nodes = manifest.get("nodes") or {}
    hosts = {int(n): str(f.get("host", "?")) for n, f in nodes.items()}
    return hosts or {0: str(manifest.get("host", "?"))}


def write_verdict(out: Path, body: dict[str, Any]) -> Path:
    path = out / VERDICT_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(body, indent=2) + "\n")
    tmp.replace(path)
    return path


def make_report(
    out: Path, pairs_dir: Path, sweep_dir: Path, reference: str | None, verdict: Verdict
) -> str | None:
    """distbench report on both runs, the verdict its first section; a report that fails loses
    no verdict (acceptance.json is written before)."""
    from distbench.reports.report.page.build import build_report

    try:
        runs = [str(pairs_dir), str(sweep_dir)]
        opening = verdict_section(verdict)
        files = build_report(runs, str(out / "report"), "auto", reference, opening)
    except (UsageError, OSError, ValueError) as error:
        print(f"acceptance: warning: the report failed: {error}", file=sys.stderr, flush=True)
        return None
    html = Path(files.html).resolve()
    return str(html.relative_to(out.resolve())) if html.is_relative_to(out.resolve()) else str(html)


def verdict_section(verdict: Verdict) -> Section:
    """The report's first section: the verdict as the terminal prints it, a row a node."""
    import pandas as pd

    from distbench.reports.render import Section, TableOut

    nodes = pd.DataFrame(
        {
            "node": [n.node for n in verdict.nodes],
            "host": [n.host for n in verdict.nodes],
            "verdict": ["PASS" if n.passed else "FAIL" for n in verdict.nodes],
            "reasons": ["; ".join(n.reasons) or "—" for n in verdict.nodes],
        }
    )
    text = (
        f"{verdict.summary}. Checked: {'; '.join(verdict.checked)}. "
        f"Not seen: {'; '.join(verdict.not_seen) or 'nothing'}."
    )
    table = TableOut("Each node", nodes.astype(str), numeric=("node",), wrap=True)
    return Section("Acceptance verdict", text, tables=[table])


def run_acceptance(choice: Acceptance, launch: LaunchArgs, stages: Stages) -> int:
    """The whole command; the exit code (0 pass, 1 a node fails, 3 a benchmark failed)."""
    refuse_launch_options(launch)
    resolved = resolve_launch(launch, Machine.probe())
    references = None
    if choice.reference is not None:
        from distbench.reports.report.reference import read_references

        references = read_references(Path(choice.reference))
    if resolved.nnodes > 1 and resolved.node_rank < 0:
        raise UsageError(
            "acceptance on several nodes needs fixed node ranks (--node-rank K on node K, or "
            "Slurm's): node 0 then holds every stage's results and gives the verdict"
        )
    world = max(resolved.world_sizes)
    plan = base_plan(resolved.backend, world, resolved.nnodes, choice.quick)
    plan = fit_budget(plan, resolved.nnodes, choice.budget_min)
    say(describe(plan, resolved.nnodes))
    budget = "no --budget" if choice.budget_min is None else f"--budget {choice.budget_min:g} min"
    say(f"{budget}; cut: {', '.join(plan.cuts) or 'nothing'}")
    if launch.dry_run:
        return 0
    default = default_run_dir(Path("results"), "acceptance", launch.label)
    out = Path(launch.out) if launch.out else default
    check_out(out)
    started = time.monotonic()
    body: dict[str, Any] = {
        "version": VERDICT_VERSION,
        "plan": {
            "backend": plan.backend,
            "world_size": world,
            "nnodes": resolved.nnodes,
            "pairs": {
                "level": plan.pairs_level,
                "size": plan.pairs_size,
                "trials": plan.pairs_trials,
                "iters": plan.pairs_iters,
            },
            "matrix": plan.matrix,
            "estimate_s": round(plan.estimate_s(resolved.nnodes), 1),
        },
        "budget": {"minutes": choice.budget_min, "cut": list(plan.cuts)},
        "runs": {"pairs": "pairs", "sweep": "sweep", "matrix": "matrix.toml"},
    }
    matrix_path = write_matrix(plan, out, resolved.node_rank)
    stages.check_matrix(matrix_path, resolved)
    code, pairs_dir = stages.pairs(plan, launch, out)
    sweep_dir = None
    if code == 0:
        code, sweep_dir = stages.sweep(matrix_path, launch, out)
    if code == EXIT_INTERRUPTED:
        say(
            f"interrupted: no verdict; what finished is kept under {out}; run acceptance again "
            "with a new --out"
        )
        return code
    writer = (pairs_dir / RESULTS_CSV).exists()
    manifest = read_manifest(sweep_dir) if sweep_dir is not None else None
    wrong = manifest is not None and manifest.get("status") == "wrong_results"
    if code != 0 and not wrong:
        stage = "pairs" if sweep_dir is None else "sweep"
        say(
            f"ERROR: the {stage} run failed (its exit code {code}): no verdict (exit "
            f"{EXIT_BENCHMARK_FAILED}); its logs under {out} say why"
        )
        if writer:
            body |= {"passed": False, "status": f"{stage} failed", "exit_code": 3}
            write_verdict(out, body)
        return EXIT_BENCHMARK_FAILED
    elapsed = time.monotonic() - started
    if not writer or sweep_dir is None or manifest is None:
        say(
            f"node {resolved.node_rank} ran its part in {elapsed / 60:.1f} min; the verdict is "
            "given by node 0 (global rank 0), in its --out's acceptance.json"
        )
        return EXIT_PASS
    verdict = judge(
        hosts_of(manifest),
        read_rows(pairs_dir / RANKS_CSV),
        read_rows(sweep_dir / RESULTS_CSV),
        references,
        choice.share,
        manifest.get("nodes") or {},
    )
    finish(out, body, verdict, elapsed, choice)
    body["runs"]["report"] = make_report(out, pairs_dir, sweep_dir, choice.reference, verdict)
    elapsed = time.monotonic() - started
    body["elapsed_s"] = round(elapsed, 1)
    body["budget"]["over"] = choice.budget_min is not None and elapsed > choice.budget_min * 60
    write_verdict(out, body)
    for node in verdict.nodes:
        say(node.line())
    for gap in verdict.not_seen:
        say(f"not seen: {gap}")
    if body["budget"]["over"]:
        say(f"took longer than --budget {choice.budget_min:g} min: the plan's estimate is a model")
    report = body["runs"].get("report")
    shown = f"; figures and tables: {out / report}" if report else ""
    say(f"{verdict.summary}; verdict: {out / VERDICT_JSON}{shown}; took {elapsed / 60:.1f} min")
    return EXIT_PASS if verdict.passed else EXIT_NODE_FAILS


def finish(
    out: Path, body: dict[str, Any], verdict: Verdict, elapsed: float, choice: Acceptance
) -> None:
    """The verdict into the body, written before the report is drawn."""
    body |= verdict.as_json()
    body |= {
        "status": "judged",
        "exit_code": EXIT_PASS if verdict.passed else EXIT_NODE_FAILS,
        "reference": {"file": choice.reference, "share": choice.share},
        "elapsed_s": round(elapsed, 1),
    }
    write_verdict(out, body)
