"""The CLI process never imports torch (#11, #20 §3): torch takes seconds to import and torchrun's
ranks import it anyway. Each check runs a fresh interpreter that calls the CLI in-process and
prints whether 'torch' is in sys.modules. ci/bench_startup.py times the same paths."""

from __future__ import annotations


def test_visible_gpus_follows_cuda_visible_devices() -> None:
    from distbench.collectors.machine import visible_gpus

    assert visible_gpus({}, 8) == 8
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}, 8) == 2
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, 8) == 0
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,9,1"}, 8) == 1  # CUDA stops at an invalid one
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}, 8) == 0
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-1a2b,GPU-3c4d"}, 8) == 2
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1,2"}, 2) == 2


def test_torch_build_matches_torch() -> None:
    import torch

    from distbench.collectors.machine import torch_build

    build = torch_build()
    assert build["torch"] == torch.__version__
    assert build["cuda"] == torch.version.cuda
    assert build["hip"] == torch.version.hip
