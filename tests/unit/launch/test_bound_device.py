"""Which device the world is bound to (init_process_group's device_id): NCCL's rank GPU, never
gloo's. The first GPU smoke (2026-12-04, torch 2.11) found a gloo world bound to a CUDA device
dying in new_group (ProcessGroupGloo has no perform_nocolor_split) on a world-size sweep."""

import torch

from distbench.groups import bound_device


def test_nccl_binds_the_rank_gpu() -> None:
    gpu = torch.device("cuda", 3)
    assert bound_device("nccl", gpu) == gpu


def test_gloo_on_cuda_tensors_is_not_bound() -> None:
    assert bound_device("gloo", torch.device("cuda", 0)) is None


def test_cpu_is_never_bound() -> None:
    assert bound_device("gloo", torch.device("cpu")) is None
    assert bound_device("nccl", torch.device("cpu")) is None
