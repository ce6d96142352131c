"""A size that cannot fit is refused before anything launches (one line, exit 2): a CPU rank
holds at least one buffer of each size it measures, so the largest size times the ranks of one
node must fit in the node's memory. A tighter bound would need each primitive's buffers (an
all_gather's output is the world size times its input, a check adds the expected result), and
an allocation that only nearly fits still fails on a rank; this catches the size typed with one
suffix too many (`1T` for `1G`) without refusing anything that could run. CUDA memory is not
known to the CLI (it never imports torch): a rank that runs out reports it."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.collectors.manifest import memory_bytes
from distbench.options.launch import ResolvedLaunch
from distbench.parse import UsageError, format_size


def check_memory(sizes: Sequence[int], launch: ResolvedLaunch, total: int | None = None) -> None:
    """Refuse the largest size when one buffer of it on every rank of this node exceeds the
    node's memory (`total`: MemTotal, unknown off Linux: nothing is checked)."""
    total = memory_bytes() if total is None else total
    if launch.device != "cpu" or not sizes or not total:
        return
    ranks = launch.nproc_per_node or max(launch.world_sizes)
    largest = max(sizes)
    if largest * ranks <= total:
        return
    fits = 1 << max(0, (total // ranks).bit_length() - 1)  # the largest power of 2 that fits
    raise UsageError(
        f"size {format_size(largest)} cannot fit: each of the {ranks} ranks on this node holds "
        f"at least one buffer of it ({largest * ranks / 2**30:.1f} GiB in all), and this machine "
        f"has {total / 2**30:.1f} GiB of memory; give sizes up to about {format_size(fits)}"
    )
