"""What the machine offers, known without importing torch (the CLI process never does: torch takes
seconds to import, and torchrun's ranks import it anyway).

The installed torch says what it was built for in its own `torch/version.py`, read as a file; the
GPUs the CUDA driver exposes are listed in /proc/driver/nvidia/gpus, narrowed by
CUDA_VISIBLE_DEVICES as the CUDA runtime narrows them. Rank side, `torch_facts` asks torch itself
(GPU names, NCCL version), and the CLI puts those into the manifest after each launch.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NVIDIA_GPUS = Path("/proc/driver/nvidia/gpus")
"""One entry per GPU the NVIDIA driver manages (Linux)."""


def torch_build() -> dict[str, str | None]:
    """{'torch': version, 'cuda': CUDA version or None, 'hip': ROCm version or None} of the
    installed torch, from its version.py (package metadata when that file cannot be read)."""
    facts: dict[str, str | None] = {"torch": None, "cuda": None, "hip": None}
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(folder) / "version.py").read_text()
        except OSError:
            continue
        for name, key in (("__version__", "torch"), ("cuda", "cuda"), ("hip", "hip")):
            found = re.search(rf"^{name}\s*(?::[^=\n]*)?=\s*(.+)$", text, re.MULTILINE)
            if found:
                value = ast.literal_eval(found.group(1).strip())
                facts[key] = None if value is None else str(value)
        break
    if facts["torch"] is None:
        from importlib import metadata  # ~30 ms: only when version.py says nothing

        with contextlib.suppress(metadata.PackageNotFoundError):
            facts["torch"] = metadata.version("torch")
    return facts


def visible_gpus(environ: Mapping[str, str], driver_gpus: int) -> int:
    """GPUs a CUDA process sees: the driver's, or the CUDA_VISIBLE_DEVICES entries up to the
    first invalid one (the CUDA runtime ignores the rest), never more than the driver has."""
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return driver_gpus
    count = 0
    for item in visible.split(","):
        entry = item.strip()
        if (entry.isdigit() and int(entry) < driver_gpus) or entry.startswith(("GPU-", "MIG-")):
            count += 1
        else:
            break
    return min(count, driver_gpus)


def cuda_gpus(environ: Mapping[str, str]) -> int | None:
    """CUDA GPUs this process would see through torch, or None when only torch can tell (a ROCm
    build, or a CUDA build on a system without /proc/driver/nvidia)."""
    build = torch_build()
    if build["hip"] is not None:
        return None
    if build["cuda"] is None:
        return 0  # a CPU build of torch sees no GPU, whatever the machine has
    if not NVIDIA_GPUS.is_dir():
        return None if sys.platform != "linux" else 0
    return visible_gpus(environ, sum(1 for _ in NVIDIA_GPUS.iterdir()))


def torch_facts() -> dict[str, Any]:
    """Rank side: what torch itself reports (imports torch)."""
    import torch

    facts: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": None,
        "gpu_count": 0,
        "gpus": [],
    }
    if torch.cuda.is_available():
        facts["gpu_count"] = torch.cuda.device_count()
        facts["gpus"] = [torch.cuda.get_device_name(i) for i in range(facts["gpu_count"])]
        try:
            facts["nccl"] = ".".join(str(part) for part in torch.cuda.nccl.version())
        except (AttributeError, RuntimeError):
            facts["nccl"] = None
    return facts


def gpu_uuid(index: int) -> str | None:
    """Rank side: the UUID torch reports for its CUDA device `index` (the device as this process
    numbers it, after CUDA_VISIBLE_DEVICES), `GPU-` and 8-4-4-4-12 hex as nvidia-smi prints it;
    None where torch reports none (a ROCm build, an older torch)."""
    import torch

    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
    except (AttributeError, RuntimeError, AssertionError):
        return None
    return uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"


def installed_torch_facts(environ: Mapping[str, str]) -> dict[str, Any]:
    """CLI side: torch_facts' keys as far as they are known without torch (GPU names and the
    NCCL version come from the ranks after the first launch)."""
    build = torch_build()
    return {
        "torch": build["torch"],
        "cuda": build["cuda"],
        "nccl": None,
        "gpu_count": cuda_gpus(environ) or 0,
        "gpus": [],
    }
