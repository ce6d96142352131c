"""A size that cannot fit is refused before launching (comm/memory.py), in one line."""

from __future__ import annotations

import pytest

from distbench.comm.memory import check_memory
from distbench.options.launch import ResolvedLaunch
from distbench.parse import UsageError

GIB = 1 << 30


def launch(device: str = "cpu", world_sizes: tuple[int, ...] = (2, 3)) -> ResolvedLaunch:
    return ResolvedLaunch("gloo", device, list(world_sizes), "", 60.0)


def test_a_size_past_the_nodes_memory_is_refused() -> None:
    with pytest.raises(UsageError) as refused:
        check_memory([1 << 20, 1 << 40], launch(), total=24 * GIB)  # 1T typed for 1G
    text = str(refused.value)
    assert "size 1T cannot fit" in text and "each of the 3 ranks" in text
    assert "24.0 GiB of memory" in text and "give sizes up to about 8G" in text
    assert "\n" not in text


def test_what_could_fit_runs() -> None:
    check_memory([8 * GIB], launch(), total=24 * GIB)  # 3 x 8 G: exactly the memory
    check_memory([1 << 40], launch("cuda"), total=24 * GIB)  # GPU memory: the ranks say
    check_memory([1 << 40], launch(), total=0)  # unknown memory: nothing is checked
    with pytest.raises(UsageError):
        check_memory([8 * GIB + 1], launch(), total=24 * GIB)
