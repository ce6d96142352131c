"""What a launch's processes import before they measure (docs/performance.md, "Start-up"): every
launch imports torch three times (the CLI's, torchrun's agent, each rank), and every rank paid
for modules only some runs use. Each check runs a fresh interpreter that imports what that
process imports and prints which of the named modules ended up in sys.modules.

- A rank imports distbench.worker, then its workload's runner (WORKLOADS[kind].load_runner) and
  the primitives' registry. None of those may import torch's functional collectives (--api
  functional|compiled only, ~0.15 CPU-s), the CLI's rich, typer and pydantic, or the reports'
  libraries. (torch.distributed.fsdp, DTensor and sympy are left to ddp/fsdp.py's imports: a
  training rank imports torch._dynamo, which brings them all, when it builds its optimizer.)
- torchrun's agent (launch/agent.py) imports no other distbench module, and torch only in main.
- The CLI imports none of the reports' libraries to launch a run (torch: test_cli_torch_free.py).

Mutations, each seen to fail here: `import torch.distributed._functional_collectives as funcol`
back at the top of bench/primitives/all_reduce.py (or comm/api_cases.py) fails
test_a_rank_imports_no[torch.distributed._functional_collectives]; `from distbench.comm.table
import render_table` back in bench/workloads.py fails [rich] and the training ranks' test;
`from distbench.comm.gpu_modes import GRAPH_TIMER` back in bench/comm/rows.py fails [typer].
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

RANK_FREE_OF = (
    "torch.distributed._functional_collectives",
    "rich",
    "typer",
    "pydantic",
    "pandas",
    "matplotlib",
    "seaborn",
    "scipy",
    "duckdb",
    "pyarrow",
)
"""Modules no rank imports before it measures; a run that needs one imports it then."""
REPORT_LIBRARIES = ("pandas", "matplotlib", "seaborn", "scipy", "numpy", "duckdb", "pyarrow")


def loaded(body: str, names: tuple[str, ...] | None = None) -> list[str]:
    """Run `body` in a fresh interpreter; which of `names` (all modules: None) it imported."""
    script = "import json, sys\n" + textwrap.dedent(body)
    script += f"\nnames = {names!r}\nmods = sorted(sys.modules)\n"
    script += "print(json.dumps(mods if names is None else [n for n in names if n in mods]))\n"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    found: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


TRAINING = ("ddp", "pipeline")
"""Workloads whose ranks train a model: ddp/fsdp.py imports torch.distributed.fsdp, which imports
the functional collectives (as torch._dynamo does when the rank builds its optimizer)."""


def rank_imports(kinds: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """Which of `names` a rank has imported when its runner starts (one interpreter loads the
    runner of every kind in `kinds`)."""
    return loaded(
        f"""
        import distbench.worker
        from distbench.primitives import registry
        from distbench.workloads import WORKLOADS

        for kind in {kinds!r}:
            WORKLOADS[kind].load_runner()
        assert len(registry.PRIMITIVES) >= 9
        """,
        names,
    )


@pytest.fixture(scope="module")
def rank_modules() -> list[str]:
    """The ranks of every workload but the training ones (comm, pairs, init, rpc, overlap)."""
    from distbench.workloads import WORKLOADS

    return rank_imports(tuple(k for k in WORKLOADS if k not in TRAINING), RANK_FREE_OF)


@pytest.mark.parametrize("module", RANK_FREE_OF)
def test_a_rank_imports_no(rank_modules: list[str], module: str) -> None:
    assert module not in rank_modules


def test_a_training_rank_imports_nothing_of_the_cli_or_the_reports() -> None:
    assert rank_imports(TRAINING, RANK_FREE_OF[1:]) == []


def test_the_torchrun_agent_imports_no_other_distbench_module_and_torch_only_to_run() -> None:
    modules = loaded("import distbench.launch.agent\n")
    assert [m for m in modules if m.startswith("distbench")] == [
        "distbench",
        "distbench.launch",
        "distbench.launch.agent",
    ]
    assert "torch" not in modules


def test_the_cli_imports_no_report_library_to_launch() -> None:
    found = loaded(
        """
        from distbench.cli.app import run_cli
        from distbench.launch import run, torchrun

        assert run_cli(["allreduce", "--help"]) == 0
        """,
        REPORT_LIBRARIES,
    )
    assert found == []
