"""Which algorithm, protocol and channels NCCL chose, from its own log (`--nccl-trace`).

With `--nccl-trace` every worker runs with NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,TUNING and
NCCL_DEBUG_FILE=RUN/logs/ws<N>-nccl-rank<R>.log, set before the process group (and so NCCL) starts.
The rank 0 of each NCCL communicator then logs one TUNING line per collective call, host side, as
the call is enqueued. Two formats (enum numbers in older releases, names in newer ones):

    NCCL INFO AllReduce: 4096 Bytes -> Algo 1 proto 2 time 12.300000
    NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}

The second is `INFO(NCCL_TUNING, "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}")`
in src/enqueue.cc of NCCL 2.2x (seen at commit 5067397 of NVIDIA/nccl); its byte count is one
rank's count x type size. Older releases printed enum numbers and, for all_gather and
reduce_scatter, the whole buffer's bytes: both sizes are matched. A call that NCCL served with
its symmetric kernels (--buffers symmetric, NCCL 2.27+) logs another line instead, whose kernel
name goes into nccl_algo and nccl_symmetric = true (src/scheduler/symmetric_sched.cc, 2.28+;
src/enqueue.cc in 2.27, without nWorks):

    NCCL INFO AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 1 ...

Lines of another shape are ignored, so an unknown format leaves the columns empty and the run
goes on.

Which lines belong to a row: the calls of the row's warm-up (and, under --cuda-graph, of its
capture), read as a window keyed by the measurement (`NcclTrace.window`). Those calls are the
row's op alone, on the row's buffers: the harness's own NCCL calls (the barrier before each
trial, the maximum over ranks of the samples, --check's sum) lie outside every window, so a row
whose size equals one of theirs is never given their choice. With --warmup 0 and no graph a row
has no window and its columns stay empty.

NCCL_DEBUG_FILE takes every line of NCCL's logger, its warnings too, out of the rank's log, where
the failure diagnosis looks: a thread of every rank copies each `NCCL WARN` line of its NCCL log
back into its rank log as NCCL writes it, and once more at exit (comm/nccl_log.py).

Logging stays on for the whole launch (NCCL reads NCCL_DEBUG once): rows with nccl_algo filled
were timed with tracing on, one short file write per call on rank 0 (none per replay under
--cuda-graph: NCCL logs a captured call once, at capture). Global rank 0, which writes the rows,
is rank 0 of every measured group (subgroups are ranks 0..k-1), so its file has every line.
Nothing is logged on gloo: the columns stay empty there. Not yet run on a GPU: re-check the
formats and the enum tables below on a GPU node (ci/gpu-smoke.sh).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from distbench.collectors.rundir import LOGS_DIR
from distbench.collectors.schema import ResultRow
from distbench.comm.nccl_log import read_lines, start_forwarding
from distbench.primitives.facts import FACTS

TRACE_ENV = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,TUNING"}
"""What --nccl-trace sets for the workers (NCCL_DEBUG_FILE too, one file per rank)."""

FUNCTIONS = {name: facts.nccl_name for name, facts in FACTS.items() if facts.nccl_name}
"""torch's primitive -> NCCL's function name in the TUNING line, from each primitive's facts
(send/recv, all_to_all, all_to_allv and gather are point-to-point in NCCL: they log no
algorithm)."""

# NCCL's enums (src/include/devcomm.h, later device.h), in the order each release defines them:
# NCCL_ALGO_TREE=0, RING=1, COLLNET_DIRECT=2 (COLLNET before 2.14), COLLNET_CHAIN=3 (2.14+),
# NVLS=4 (2.17+), NVLS_TREE=5 (2.19+), PAT=6 (2.23+); NCCL_PROTO_LL=0, LL128=1, SIMPLE=2 (all).
# torch 2.4-2.13 ship NCCL 2.20-2.27. Written from the documented order, not read from a
# loaded library: re-check on a GPU node against the NCCL version torch reports.
ALGOS_BY_VERSION: tuple[tuple[tuple[int, int], tuple[str, ...]], ...] = (
    ((2, 23), ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")),
    ((2, 19), ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE")),
    ((2, 17), ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS")),
    ((2, 14), ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN")),
    ((0, 0), ("TREE", "RING", "COLLNET")),
)
PROTOS = ("LL", "LL128", "SIMPLE")

_LINE = re.compile(
    r"NCCL INFO (?P<func>[A-Za-z]+): (?P<bytes>\d+) Bytes -> Algo (?P<algo>\w+) "
    r"proto (?P<proto>\w+)(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d+)\.\.(?P<hi>\d+)\})?"
)
_SYMMETRIC = re.compile(
    r"NCCL INFO (?P<func>[A-Za-z]+) \[Symmetric\]: (?P<bytes>\d+) Bytes -> Kernel "
    r"(?P<kernel>\w+) nchannels (?P<channels>\d+)"
)


@dataclass(frozen=True)
class Choice:
    """What NCCL chose for one call: names, and channels when the line says."""

    algo: str
    """The algorithm (RING, TREE, ...), or the symmetric kernel's name."""
    proto: str
    nchannels: str = ""
    symmetric: bool = False
    """NCCL's symmetric kernel served the call (a `[Symmetric]` line)."""


def parse_version(text: str | None) -> tuple[int, int] | None:
    """'2.21.5' -> (2, 21); None when unknown."""
    found = re.match(r"^\s*(\d+)\.(\d+)", text or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def algo_names(version: tuple[int, int] | None) -> tuple[str, ...]:
    """The algorithm enum of an NCCL version (the newest known one when the version is unknown)."""
    if version is None:
        return ALGOS_BY_VERSION[0][1]
    return next(names for since, names in ALGOS_BY_VERSION if version >= since)


def parse_line(line: str, version: tuple[int, int] | None) -> tuple[str, int, Choice] | None:
    """(NCCL function, bytes, choice) of one TUNING line, or None for any other line (including
    an enum number the version does not define: never a guess)."""
    symmetric = _SYMMETRIC.search(line)
    if symmetric is not None:
        choice = Choice(symmetric.group("kernel"), "", symmetric.group("channels"), True)
        return symmetric.group("func"), int(symmetric.group("bytes")), choice
    found = _LINE.search(line)
    if found is None:
        return None
    algo, proto = found.group("algo"), found.group("proto")
    if algo.isdigit() or proto.isdigit():
        if not (algo.isdigit() and proto.isdigit()):
            return None
        names = algo_names(version)
        if int(algo) >= len(names) or int(proto) >= len(PROTOS):
            return None
        algo, proto = names[int(algo)], PROTOS[int(proto)]
    channels = ""
    if found.group("lo") is not None:
        channels = str(int(found.group("hi")) - int(found.group("lo")) + 1)
    return (
        found.group("func"),
        int(found.group("bytes")),
        Choice(algo.upper(), proto.upper(), channels),
    )


def trace_path(run_dir: Path, world_size: int, rank: int) -> Path:
    """A rank's NCCL log under --nccl-trace."""
    return Path(run_dir) / LOGS_DIR / f"ws{world_size}-nccl-rank{rank}.log"


def enable_nccl_trace(run_dir: Path, world_size: int, rank: int) -> None:
    """Worker side, before the process group starts: NCCL reads these once, at its first use.
    Its warnings are copied back into the rank's log (forward_warnings)."""
    path = trace_path(run_dir, world_size, rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.environ.update({**TRACE_ENV, "NCCL_DEBUG_FILE": str(path)})
    start_forwarding(path)


Seen = dict[tuple[str, int], Counter[Choice]]
"""(NCCL function, bytes) -> how often each choice was logged."""


@dataclass
class NcclTrace:
    """Global rank 0's reader of its NCCL log: the TUNING lines of each measurement's window
    (its warm-up, or its graph's capture), counted per (function, bytes)."""

    path: Path | None
    version: tuple[int, int] | None = None
    offset: int = 0
    windows: dict[str, Seen] = field(default_factory=dict)

    def read_new(self) -> Seen:
        """The lines logged since the last read, counted."""
        lines, self.offset = read_lines(self.path, self.offset)
        seen: Seen = {}
        for line in lines:
            parsed = parse_line(line, self.version)
            if parsed is not None:
                func, nbytes, choice = parsed
                seen.setdefault((func, nbytes), Counter())[choice] += 1
        return seen

    @contextmanager
    def window(self, measurement: str) -> Iterator[None]:
        """The calls inside are `measurement`'s own op (replacing an earlier window of it): what
        NCCL logs meanwhile is its choice for the row. What came before is the harness's."""
        if self.path is None:
            yield
            return
        self.read_new()  # earlier lines: other rows' and the harness's, not this row's
        yield
        self.windows[measurement] = self.read_new()

    def choice(
        self, measurement: str, primitive: str, size_bytes: int, world_size: int
    ) -> Choice | None:
        """The most frequent choice logged in the measurement's window for its primitive and
        size, or None."""
        func = FUNCTIONS.get(primitive)
        seen = self.windows.get(measurement)
        if func is None or seen is None:
            return None
        sizes = [size_bytes]
        if FACTS[primitive].gather_type and world_size > 0:
            sizes.append(size_bytes // world_size)  # newer releases log one rank's bytes
        counts: Counter[Choice] = Counter()
        for nbytes in sizes:
            counts.update(seen.get((func, nbytes), Counter()))
        return counts.most_common(1)[0][0] if counts else None

    def fill(self, row: ResultRow) -> ResultRow:
        """The row with nccl_algo, nccl_proto, nccl_nchannels and nccl_symmetric from its window
        of the log (unchanged without)."""
        if self.path is None:
            return row
        found = self.choice(row.measurement, row.primitive, row.size_bytes, row.world_size)
        self.windows.pop(row.measurement, None)
        if found is None:
            return row
        return replace(
            row,
            nccl_algo=found.algo,
            nccl_proto=found.proto,
            nccl_nchannels=found.nchannels,
            nccl_symmetric=str(found.symmetric).lower(),
        )


def open_trace(enabled: bool, run_dir: Path) -> NcclTrace:
    """The reader of this rank's NCCL log (named by the launch's world and rank, as
    enable_nccl_trace named it), from what is logged from now on, when tracing is on and this is
    global rank 0 (NCCL logs TUNING lines on each communicator's rank 0); else one that changes
    nothing."""
    if not enabled:
        return NcclTrace(path=None)
    import torch.distributed as dist

    if dist.get_rank() != 0:
        return NcclTrace(path=None)
    path = trace_path(run_dir, dist.get_world_size(), dist.get_rank())
    # from the file's end: earlier lines belong to another world size's subgroup or another
    # --env combination of the run, whose calls of the same size NCCL logs alike
    start = path.stat().st_size if path.exists() else 0
    return NcclTrace(path=path, version=loaded_nccl_version(), offset=start)


def loaded_nccl_version() -> tuple[int, int] | None:
    """The NCCL version torch has loaded, or None (a CPU build)."""
    import torch

    try:
        return parse_version(".".join(str(part) for part in torch.cuda.nccl.version()))
    except (AttributeError, RuntimeError, TypeError):
        return None
