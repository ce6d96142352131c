"""Peak memory of one strategy's training steps on one rank (the `peak_mem_bytes` column).

CUDA (`mem_source` cuda_max_allocated): torch.cuda.max_memory_allocated after the steps, its peak
reset once the model is wrapped, minus memory_allocated before the model was built.

CPU (`mem_source` rss_hwm): the process's resident-set high-water mark (VmHWM), reset once the
model is wrapped (writing 5 to /proc/self/clear_refs, Linux >= 4.0), minus the resident set
(VmRSS) before the model was built. Freed heap memory is handed back to the kernel first
(malloc_trim), so what earlier strategies freed is not reused unseen. It counts everything the
process touched: parameters, gradients, activations, communication buffers, allocator slack.
Where /proc or malloc_trim is missing, NaN and an empty mem_source.

Both include the parameters as held after wrapping (a rank's shard under FSDP), gradients,
optimizer state and activations; the pre-made batches are held before, so excluded.

nn.DataParallel (strategy dp) drives every local GPU from one process: it replicates the model
onto each, scatters the batch and gathers the outputs on GPU 0. Its peak is the largest of its
GPUs' (each against its own baseline), comparable with a DDP rank's one GPU (v3 read GPU 0 only).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import math
from pathlib import Path

import torch

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kb(field: str) -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise OSError(f"{field} not in {STATUS}")


def _trim() -> bool:
    gc.collect()
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


def source(device: torch.device) -> str:
    """What peak_mem_bytes measures on this device, or '' where it cannot."""
    if device.type == "cuda":
        return "cuda_max_allocated"
    return "rss_hwm" if STATUS.exists() and CLEAR_REFS.exists() else ""


def held(device: torch.device) -> float:
    """Bytes held now (before the model is built): the baseline."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return float(torch.cuda.memory_allocated(device))
    if not source(device) or not _trim():
        return math.nan
    return _status_kb("VmRSS") * 1024.0


def reset_peak(device: torch.device) -> None:
    """Start the high-water mark from now (after the model is wrapped)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    elif source(device):
        _trim()
        CLEAR_REFS.write_text("5")


def devices_of(strategy: str, device: torch.device, gpus: int | None = None) -> list[torch.device]:
    """Where a strategy's memory lives: every GPU (`gpus`, default all visible) for dp on CUDA,
    else the rank's own device."""
    if strategy == "dp" and device.type == "cuda":
        count = torch.cuda.device_count() if gpus is None else gpus
        return [torch.device("cuda", index) for index in range(count)]
    return [device]


class PeakMemory:
    """peak_mem_bytes of one strategy: baselines taken at construction (before the model is
    built), the high-water marks reset by reset() (after it is wrapped), read by since()."""

    def __init__(self, devices: list[torch.device]) -> None:
        self.devices = devices
        self.baselines = [held(device) for device in devices]

    def reset(self) -> None:
        for device in self.devices:
            reset_peak(device)

    def since(self) -> float:
        """The largest device's peak above its baseline (bytes)."""
        pairs = zip(self.devices, self.baselines, strict=True)
        return max(peak_since(device, baseline) for device, baseline in pairs)


def peak_since(device: torch.device, baseline: float) -> float:
    """The high-water mark since reset_peak, minus `baseline` (bytes)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return float(torch.cuda.max_memory_allocated(device)) - baseline
    if not source(device):
        return math.nan
    return _status_kb("VmHWM") * 1024.0 - baseline
