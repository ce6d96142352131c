"""The steps of ci/gpu-smoke.sh (run by ci/gpu_smoke.py): what each runs, what it needs, what it
verifies (`covers`: first cells of docs/verified-on.md's table), and how long it is planned to
take on a GPU node.

Planned time of a step = its launches x LAUNCH_S (LAUNCH_S + PER_RANK_S for each rank above 3)
+ its own work. LAUNCH_S is a stated figure, not a measurement: a CPU box cannot time a CUDA
context or NCCL's init. It is the start-up of one distbench launch of 1-3 ranks on a GPU node:
the CLI (typer, no torch), torchrun's agent and each worker importing torch 2.11 (CUDA build),
the CUDA context, NCCL's communicator (device_id, eager), the node facts (two nvidia-smi calls)
and the manifest. The issue's desk estimate was 10-20 s; the first GPU run's summary.tsv gives
each step's real seconds to correct it. Torch-free: the checks read the run's CSV and JSON.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from gpu_smoke_checks import (
    Check,
    both,
    check_rows,
    filled,
    manifest_gpu,
    nccl_timed,
    right,
    trace_check,
)

LAUNCH_S = 12.0  # measured 2026-12-04 on one H200: one-launch steps took 9-14 s with their work
"""Start-up of one distbench launch of 1-3 ranks on a GPU node (module docstring)."""
PER_RANK_S = 1.0
"""Added per rank above 3 (each imports torch and makes a CUDA context)."""
CLI_S = 1.0
"""One `python -m distbench` that stops in the CLI process (a refusal, --help): no torch."""

CLI = ("typer", "rich", "pydantic", "shellingham", "distbench.cli.app")
"""What the CLI process imports (a fresh Python 3.12 with only the carried wheels runs it)."""
WORKERS = ("torch", "numpy", "distbench.worker")
REPORT = ("pandas", "matplotlib", "seaborn", "pyarrow")
PYTEST_NEEDS = ("pytest", "hypothesis", "yaml", "pandas", "pyarrow")


@dataclass(frozen=True)
class Step:
    name: str
    covers: tuple[str, ...]
    """First cells of docs/verified-on.md's table that a pass verifies."""
    commands: tuple[tuple[str, ...], ...]
    """distbench argument lists (python -m distbench ...), or ('pytest', ...) ones."""
    launches: int = 1
    ranks: int = 1
    work_s: float = 5.0
    min_gpus: int = 1
    needs: tuple[str, ...] = CLI + WORKERS
    check: Check | None = None
    expect_exit: int = 0
    out: bool = True
    """The last command gets --out RUN_DIR (distbench commands)."""
    on_request: bool = False
    """Run only when --only names it (a whole smoke then stays within its cap)."""
    notes: dict[str, str] = field(default_factory=dict)

    def planned_s(self) -> float:
        if self.launches == 0:
            return self.work_s + CLI_S * len(self.commands)
        start = LAUNCH_S + PER_RANK_S * max(0, self.ranks - 3)
        return self.launches * start + self.work_s


def argv(text: str) -> tuple[str, ...]:
    return tuple(shlex.split(text))


TRAINING = ("`ddp` strategies", "`ddp --strategies fsdp, fsdp-reshard-false`")
GPU_FILES = {
    "pytest-gpu-basics": ("tests/integration/test_gpu.py", "tests/unit/comm/test_checkdata.py"),
    "pytest-gpu-graph": ("tests/integration/comm/test_graph_gpu.py",),
    "pytest-gpu-overlap": ("tests/integration/overlap/test_overlap_gpu.py",),
    "pytest-gpu-training": (
        "tests/integration/ddp/test_ddp.py",
        "tests/integration/ddp/test_fsdp.py",
        "tests/integration/ddp/test_dp_gpu.py",
    ),
    "pytest-gpu-examples": ("tests/integration/test_examples_gpu.py",),
}
"""The gpu test files, run by name (pytest -m gpu FILES: only these files are collected)."""
EXAMPLES = 8
"""Launches of pytest-gpu-examples: the manual's distinct gpu-marked commands that run on one
GPU (the others are refused at once for want of GPUs, or skip)."""
PYTEST_COVERS = {
    "pytest-gpu-examples": ("the manual's gpu-marked examples, as written",),
    "pytest-gpu-training": TRAINING,
    "pytest-gpu-overlap": ("`overlap` (communication while computing)",),
}
COLLECTIVES = (
    "`all_reduce`", "`broadcast`", "`reduce`", "`gather`", "`all_gather`", "`reduce_scatter`",
    "`all_to_all`",
    "`alltoallv` (skewed splits, MoE routing)", "`--placement in,out`",
    "`--check` (bit-exact results)", "throughput and latency modes",
    "CUDA-event timers (`cuda_event`, `cuda_event+dispatch`)",
    "`enqueue_us`, `dispatch_bound` (#30)", "`sweep`",
    "per-node manifest (`nodes`, `ranks`), \"What differs\"",
)  # fmt: skip
GRAPH_PRIMITIVES = "allreduce,broadcast,allgather,reducescatter,alltoall,alltoallv"
APIS = "`--api functional`, `compiled:aot_eager`, `compiled:inductor`"
PYTEST = ("pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider")


def acceptance_check(run_dir: Path) -> str | None:
    """acceptance.json judged every node, and the sweep's rows are right and CUDA-timed."""
    path = run_dir / "acceptance.json"
    if not path.exists():
        return f"no {path}"
    verdict = json.loads(path.read_text())
    if verdict.get("status") != "judged" or not verdict.get("nodes"):
        return f"acceptance.json did not judge the nodes: status {verdict.get('status')!r}"
    return check_rows(right=right, cuda_timer=nccl_timed)(run_dir / "sweep")


def steps(gpus: int) -> list[Step]:
    """Every step for a node of `gpus` GPUs, in order: most important first, the gpu test files
    by name after the smoke's own steps, --api compiled last."""
    sizes = [n for n in (1, 2, 4, 8) if n <= gpus]
    ws, top, two, count = ",".join(map(str, sizes)), min(gpus, 8), gpus >= 2, len(sizes)
    nccl = f"--backend nccl --world-sizes {ws}"
    sym = str(max(top, 2))  # one world size per launch: the largest (gpu_modes.py)
    comm = {"ranks": top}
    return [
        Step(
            "refusals",
            ("what cannot work is refused in one line (#30)",),
            (
                argv("allreduce --backend nccl --buffers symmetric --world-sizes 1"),
                argv("alltoall --backend nccl --placement in --world-sizes 1"),
                argv("allreduce --backend gloo --cuda-graph 2 --world-sizes 1"),
                argv(f"allreduce --backend nccl --world-sizes {gpus + 1}"),
            ),
            launches=0,
            work_s=1.0,
            needs=CLI,
            expect_exit=2,
            out=False,
        ),
        Step(
            "collectives-nccl",
            COLLECTIVES + (("world-size sweeps on subgroups",) if two else ()),
            (
                argv(
                    f"sweep {nccl} --primitives allreduce,broadcast,reduce,gather,allgather,"
                    "reducescatter,alltoall,alltoallv --dtype float32,bfloat16 --mode both "
                    "--sizes 4K,1M,64M --skew zipf:1.2 --check"
                ),
                argv(
                    f"sweep {nccl} --primitives allgather,reducescatter --placement in "
                    "--sizes 1M,64M --check"
                ),
            ),
            launches=2,
            work_s=12.0 * count,
            check=both(
                check_rows(
                    right=right,
                    cuda_timer=nccl_timed,
                    enqueue_us=filled("enqueue_us"),
                    dispatch_bound=lambda r: r.get("dispatch_bound") in ("true", "false"),
                ),
                manifest_gpu,
            ),
            **comm,
        ),
        Step(
            "graph-nccl",
            ("`--cuda-graph N` (graph capture and replay, timer `cuda_event+graph`)",),
            (
                argv(
                    f"sweep {nccl} --primitives {GRAPH_PRIMITIVES} --sizes 4K,1M --iters 20 "
                    "--cuda-graph 10 --check"
                ),
            ),
            work_s=8.0 * count,
            check=check_rows(
                right=right,
                graph=lambda r: (r["graph"], r["timer"]) == ("true", "cuda_event+graph"),
                enqueue_us=filled("enqueue_us"),
            ),
            **comm,
        ),
        Step(
            "gloo-cuda",
            ("gloo on CUDA tensors",),
            (
                argv(
                    "sweep --backend gloo --device cuda --world-sizes 2,3 --primitives "
                    "allreduce,broadcast,allgather,reducescatter,alltoall --sizes 64K,1M --check"
                ),
            ),
            ranks=3,
            work_s=8.0,
            check=check_rows(right=right, cuda=lambda r: r["device"] == "cuda"),
        ),
        Step(
            "trace-nccl",
            ("`--nccl-trace`", "`--precision`, `--iters auto`"),
            (
                argv(
                    f"allreduce {nccl} --sizes 4K,1M --nccl-trace --iters auto --precision 3% "
                    "--budget 2"
                ),
            ),
            work_s=10.0 * count,
            check=both(check_rows(converged=filled("converged")), trace_check),
            **comm,
        ),
        Step(
            "api-functional-nccl",
            (APIS,),
            (
                argv(
                    f"sweep {nccl} --primitives {GRAPH_PRIMITIVES} --sizes 4K,1M --api functional "
                    "--check"
                ),
            ),
            work_s=6.0 * count,
            check=check_rows(right=right, api=lambda r: r["api"] == "functional"),
            **comm,
        ),
        Step(
            "symmetric-nccl",
            ("`--buffers symmetric` (symmetric memory, NCCL's symmetric kernels)",),
            (
                argv(
                    f"sweep --backend nccl --world-sizes {sym} --primitives "
                    "allreduce,allgather,reducescatter --dtype bfloat16 --op sum "
                    "--sizes 4K,1M,64M --buffers symmetric --check"
                ),
            ),
            ranks=top,
            work_s=6.0,
            min_gpus=2,
            check=check_rows(
                right=right,
                symmetric=lambda r: r["buffers"] == "symmetric",
                nccl_symmetric=lambda r: r.get("nccl_symmetric") in ("true", "false"),
            ),
            notes={"unsupported": "--buffers symmetric is not supported here"},
        ),
        Step(
            "sendrecv-nccl",
            (
                "send/recv patterns: pingpong, window, bidir-window, ring",
                "`sendrecv --pattern multipair`",
            ),
            (
                argv(
                    "sendrecv --backend nccl --world-sizes 2 --sizes 8,1M,64M --pattern all "
                    "--bidirectional --check"
                ),
            ),
            ranks=2,
            work_s=8.0,
            min_gpus=2,
            check=check_rows(right=right),
        ),
        Step(
            "pipeline-nccl",
            ("`pipeline`",),
            (
                argv(
                    "pipeline --backend nccl --world-sizes 2 --microbatches 2,4 --depth 5 "
                    "--steps 10"
                ),
            ),
            ranks=2,
            work_s=10.0,
            min_gpus=2,
            check=check_rows(
                cuda_events=lambda r: r["timer"] == "cuda_event",
                bubble=lambda r: 0 <= float(r["bubble"]) < 1 and r["bubble_p50"] != "",
                same_weights=lambda r: float(r["max_param_diff"]) < 1e-4,
            ),
        ),
        Step(
            "dp-cuda",
            ("`ddp --strategies dp`",),
            (
                argv(
                    "ddp --backend nccl --world-sizes 1 --strategies ddp,dp --batch-size 64 "
                    "--steps 10"
                ),
            ),
            work_s=8.0,
            min_gpus=2,
            check=check_rows(memory=lambda r: r["mem_source"] == "cuda_max_allocated"),
        ),
        Step(
            # pairs (its own step until acceptance ran it) at up to 4 ranks: 3 rounds, up to
            # 2 slow ranks named; the 8-GPU plan holds no more within its cap
            "acceptance-nccl",
            (
                "`pairs` (circle method, outliers, `ranks.csv`)",
                "`acceptance` (pairs, the nightly matrix, a verdict per node)",
            ),
            (argv(f"acceptance --backend nccl --nproc-per-node {min(top, 4)} --quick --budget 3"),),
            launches=2,
            ranks=min(top, 4),
            work_s=15.0,  # the verdict and the report's figures (36 s on the loaded 2-core box)
            min_gpus=2,
            needs=CLI + WORKERS + REPORT,
            check=acceptance_check,
        ),
        *(
            Step(
                name,
                ("gpu-marked tests (`pytest -m gpu`)", *PYTEST_COVERS.get(name, ())),
                ((*PYTEST, *files),),
                launches={"pytest-gpu-training": 2 + two, "pytest-gpu-examples": EXAMPLES}.get(
                    name, 1
                ),
                ranks=top,
                work_s=6.0 + (10.0 if name == "pytest-gpu-training" else 0.0),
                needs=CLI + WORKERS + PYTEST_NEEDS,
                out=False,
                on_request=name == "pytest-gpu-examples",
            )
            for name, files in GPU_FILES.items()
        ),
        Step(
            "api-compiled-nccl",
            (APIS,),
            (
                argv(
                    f"sweep {nccl} --primitives allreduce,allgather --sizes 1M --api compiled "
                    "--check"
                ),
            ),
            work_s=40.0,
            check=check_rows(right=right, api=lambda r: r["api"].startswith("compiled")),
            **comm,
        ),
    ]
