"""The CLI process never imports torch (#11, #20 §3). The half that launches or runs for seconds;
the in-process half, and the file's whole story: tests/unit/cli/test_cli_torch_free.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPORT = "\nprint('torch' in sys.modules)\n"


def torch_imported(body: str) -> bool:
    """Run `body` in a fresh interpreter; whether torch ended up in sys.modules."""
    script = "import sys\n" + textwrap.dedent(body) + REPORT
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize(
    "argv", [["--help"], ["allreduce", "--help"], ["ddp", "--help"], ["sweep", "--help"]]
)
def test_help_imports_no_torch(argv: list[str]) -> None:
    assert not torch_imported(
        f"""
        from distbench.cli.app import run_cli
        assert run_cli({argv!r}) == 0
        """
    )


def test_usage_errors_import_no_torch() -> None:
    assert not torch_imported(
        """
        from distbench.cli.app import run_cli
        assert run_cli(["allreduce", "--sizes", "1X"]) == 2
        assert run_cli(["reducescatter", "--sizes", "1", "--world-sizes", "3"]) == 2
        assert run_cli(["ddp", "--params", "ten"]) == 2
        """
    )


def test_planning_imports_no_torch(tmp_path: Path) -> None:
    """Everything the CLI does before torchrun starts: probe the machine, resolve and check the
    options, build the spec, plan the launches and count their rows, write spec and manifest."""
    assert not torch_imported(
        f"""
        from pathlib import Path
        from distbench.options.launch import LaunchArgs, Machine, resolve_launch
        from distbench.options.opt import parse_group
        from distbench.cli.run import build_specs
        from distbench.collectors.manifest import build_manifest, write_manifest
        from distbench.comm.args import CommArgs
        from distbench.comm.primitive_args import PrimitiveArgs, build_workload
        from distbench.ddp.args import DdpArgs, build_ddp_spec
        from distbench.launch.planned import launch_left
        from distbench.launch.run import launch_order
        from distbench.launch.torchrun import build_torchrun_command
        from distbench.spec import RunSpec

        args = parse_group(LaunchArgs, {{"backend": "gloo", "world_sizes": "2,3"}})
        launch = resolve_launch(args, Machine.probe())
        comm = parse_group(CommArgs, {{"sizes": "1K,64K", "dtype": "float32,bfloat16"}})

        def build(launch):
            return build_workload(("all_gather",), comm, PrimitiveArgs(), launch)

        [spec] = build_specs([launch], build, {str(tmp_path / "run")!r}, "all_gather")
        run_dir = Path(spec.launch.run_dir)
        path = spec.save(run_dir)
        write_manifest(run_dir, build_manifest("id", ["distbench"], {{}}))
        for part, spec_path, world_size in launch_order(spec, path, ()):
            assert launch_left(part, world_size, part.launch.done) == 8
            build_torchrun_command(part.launch, world_size, spec_path)
        ddp_args = parse_group(DdpArgs, {{"params": "1M"}})
        ddp = RunSpec(launch=spec.launch, workload=build_ddp_spec(ddp_args))
        assert launch_left(ddp, 2, ()) > 0
        """
    )


@pytest.mark.slow
def test_one_measurement_run_imports_no_torch(tmp_path: Path) -> None:
    """A whole run: the ranks import torch in their own processes; the CLI's stays free of it,
    and the manifest still gets torch's facts (from rank 0's report)."""
    out = tmp_path / "run"
    argv = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "4"]
    argv += ["--iters", "1", "--warmup", "0", "--trials", "1", "--out", str(out)]
    assert not torch_imported(
        f"""
        from distbench.cli.app import run_cli
        assert run_cli({argv!r}) == 0
        """
    )
    import json

    import torch

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["torch"] == torch.__version__
    assert manifest["cuda"] == torch.version.cuda
    assert manifest["gpu_count"] == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
