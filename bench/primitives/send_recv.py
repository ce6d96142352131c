"""send/recv: point-to-point, measured three ways (the `pattern` column says which):

- pingpong (osu_latency): src sends, dst receives and sends back; one-way time = round trip / 2.
- window (osu_bw): src posts `window` isends of one buffer, dst `window` irecvs, then dst returns a
  one-element ack; time per message = window time / `window`, so algbw = window bytes / time.
  With `bidirectional` (osu_bibw) both ranks send a window to each other at once; time per message
  = window time / (2 x `window`), so algbw counts the bytes of both directions.
- ring (nccl-tests sendrecv): every rank sends to rank + 1 and receives from rank - 1 at once.
- multipair (osu_mbw_mr): the n/2 pairs (i, i + n/2) each move a window at the same time, rank i
  sending (both ways with `bidirectional`); time per message = window time / (pairs x `window`
  [x 2]), so algbw is the aggregate bandwidth of all pairs and msg_rate_per_s their aggregate
  message rate, what a NIC or rail saturates on (OSU prints both summed over pairs).

The pattern names the window setting, the same at every size: `window` (`bidir-window`,
`multipair-window` ...) for the default (64 messages up to 1 MiB, then 64 MiB / size), `window=W`
for --window W; the messages in flight of each row are its window_msgs column.

size_bytes is one message; busbw factor 1 (nccl-tests, src/sendrecv.cu; multipair: the
aggregate, per pair = busbw / (n/2)). Pair patterns measure
each (src, dst) of `pairs` in turn ('all': every ordered pair); the other ranks idle through the
same barriers, timing ~0, so the max over ranks is the pair's time. All cases of a size share one
send and one receive buffer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.parse import ranks_label
from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, PrimitiveBase, element_count
from distbench.primitives.facts import pattern_cases

DEFAULT_WINDOW = 64
"""OSU osu_bw's window size, the default up to 1 MiB messages."""
WINDOW_BYTES = 64 << 20
"""Without --window, larger messages get fewer in flight so that one window moves at most 64 MiB
(64 x 64 MiB per window would make the default ladder's last size take minutes on gloo)."""


def default_window(size_bytes: int) -> int:
    """64 messages up to 1 MiB, then 64 MiB / size (16 at 4 MiB, 1 at 64 MiB and above)."""
    return max(1, min(DEFAULT_WINDOW, WINDOW_BYTES // max(1, size_bytes)))


class SendRecv(PrimitiveBase):
    name = "send_recv"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype, options = request.requested_bytes, request.dtype, request.options
        count = element_count(requested_bytes, dtype)
        buffers = Buffers(
            send=torch.zeros(count, dtype=dtype, device=ctx.device),
            recv=torch.zeros(count, dtype=dtype, device=ctx.device),
            ack=torch.zeros(1, dtype=dtype, device=ctx.device),
        )
        given = options.get("window")
        window = int(given) if given else default_window(count * dtype.itemsize)
        bidirectional = bool(options.get("bidirectional", False))
        cases = []
        for pattern, src, dst in pattern_cases(ctx.world_size, options):
            if pattern == "ring":
                cases.append(ring_case(ctx, buffers))
            elif pattern == "multipair":
                cases.append(multipair_case(ctx, buffers, window, bidirectional))
            elif pattern == "pingpong":
                cases.append(pingpong_case(ctx, buffers, src, dst))
            else:
                cases.append(window_case(ctx, buffers, src, dst, window, bidirectional))
        if given:
            return cases
        return [named_for_default(case) for case in cases]


def named_for_default(case: Case) -> Case:
    """The default window shrinks with the size (default_window): its cases are named for the
    setting alone (`window`, not `window=64` then `window=4` at 16M, which split one case's line
    over sizes in report and compare); the messages in flight stay in window_msgs."""
    pattern = case.labels.get("pattern", "")
    if "window=" not in pattern:
        return case
    labels = {**case.labels, "pattern": pattern.split("=", 1)[0]}
    return dataclasses.replace(case, labels=labels)


def wait_all(works: list[Any]) -> None:
    """Complete every isend/irecv (on CUDA: the stream waits; the timer drains)."""
    for work in works:
        if work is not None:  # None: this rank is not in the group
            work.wait()


class Buffers:
    """One size's tensors, shared by every case of that size."""

    def __init__(self, send: torch.Tensor, recv: torch.Tensor, ack: torch.Tensor) -> None:
        self.send = send  # [count]
        self.recv = recv  # [count]
        self.ack = ack  # [1]

    @property
    def count(self) -> int:
        return self.send.numel()

    def case(
        self, run: Callable[[], None], check: Callable[[], int], labels: dict[str, str], ops: int
    ) -> Case:
        return Case(
            size_bytes=self.count * self.send.element_size(),
            count=self.count,
            run=run,
            check=check,
            labels=labels,
            ops_per_run=ops,
        )

    def expect(self, ctx: Context, data: torch.Tensor, sender: int) -> int:
        """Wrong elements of `data`, which should hold rank `sender`'s pattern."""
        return checkdata.wrong_moved(data, sender)

    def outgoing(self, ctx: Context) -> torch.Tensor:
        """This rank's check message: its own data (checkdata)."""
        return checkdata.fill_pattern(self.count, ctx.rank, self.send.dtype, ctx.device)

    def incoming(self, ctx: Context) -> torch.Tensor:
        """A receive buffer that is wrong everywhere until written (a lost message shows)."""
        return checkdata.fill_sentinel(self.count, self.send.dtype, ctx.device)

    def check_exchange(self, ctx: Context, peer: int, sends: bool, receives: bool) -> int:
        """One check message each way the pattern uses between this rank and `peer` (its rank
        in ctx.group), into a fresh buffer, all posted at once: wrong elements received."""
        g_peer = ctx.global_ranks[peer]
        data = self.incoming(ctx)
        ops = [dist.P2POp(dist.irecv, data, g_peer, ctx.group)] if receives else []
        if sends:
            ops.append(dist.P2POp(dist.isend, self.outgoing(ctx), g_peer, ctx.group))
        wait_all(dist.batch_isend_irecv(ops))
        return self.expect(ctx, data, peer) if receives else 0


def pingpong_case(ctx: Context, buf: Buffers, src: int, dst: int) -> Case:
    g_src, g_dst = ctx.global_ranks[src], ctx.global_ranks[dst]
    group = ctx.group

    def run() -> None:
        if ctx.rank == src:
            dist.send(buf.send, dst=g_dst, group=group)
            dist.recv(buf.recv, src=g_dst, group=group)
        elif ctx.rank == dst:
            dist.recv(buf.recv, src=g_src, group=group)
            dist.send(buf.recv, dst=g_src, group=group)

    def check() -> int:
        # src's pattern goes out and comes back: both legs are checked.
        if ctx.rank == src:
            back = buf.incoming(ctx)
            dist.send(buf.outgoing(ctx), dst=g_dst, group=group)
            dist.recv(back, src=g_dst, group=group)
            return buf.expect(ctx, back, src)
        if ctx.rank == dst:
            data = buf.incoming(ctx)
            dist.recv(data, src=g_src, group=group)
            wrong = buf.expect(ctx, data, src)
            dist.send(data, dst=g_src, group=group)
            return wrong
        return 0

    labels = {"src": str(src), "dst": str(dst), "pattern": "pingpong"}
    return buf.case(run, check, labels, ops=2)


def window_case(
    ctx: Context, buf: Buffers, src: int, dst: int, window: int, bidirectional: bool
) -> Case:
    g_src, g_dst = ctx.global_ranks[src], ctx.global_ranks[dst]
    group = ctx.group

    def run() -> None:
        # One buffer serves every message of the window, as in osu_bw: memory stays 2 x size.
        if bidirectional:
            if ctx.rank in (src, dst):
                # Grouped: on NCCL, ungrouped receives queued before the sends would deadlock.
                peer = g_dst if ctx.rank == src else g_src
                ops = [dist.P2POp(dist.irecv, buf.recv, peer, group) for _ in range(window)]
                ops += [dist.P2POp(dist.isend, buf.send, peer, group) for _ in range(window)]
                wait_all(dist.batch_isend_irecv(ops))
        elif ctx.rank == src:
            # All W in flight at once (on NCCL one group launch, as nccl-tests groups its ops).
            ops = [dist.P2POp(dist.isend, buf.send, g_dst, group) for _ in range(window)]
            wait_all(dist.batch_isend_irecv(ops))
            dist.recv(buf.ack, src=g_dst, group=group)  # dst has all of the window
        elif ctx.rank == dst:
            ops = [dist.P2POp(dist.irecv, buf.recv, g_src, group) for _ in range(window)]
            wait_all(dist.batch_isend_irecv(ops))
            dist.send(buf.ack, dst=g_src, group=group)

    def check() -> int:
        if ctx.rank not in (src, dst):
            return 0
        peer = dst if ctx.rank == src else src
        return buf.check_exchange(
            ctx, peer, bidirectional or ctx.rank == src, bidirectional or ctx.rank == dst
        )

    name = f"bidir-window={window}" if bidirectional else f"window={window}"
    labels = {"src": str(src), "dst": str(dst), "pattern": name}
    case = buf.case(run, check, labels, ops=2 * window if bidirectional else window)
    return dataclasses.replace(case, columns={"window_msgs": float(window)})


def ring_case(ctx: Context, buf: Buffers) -> Case:
    n = ctx.world_size
    g_next = ctx.global_ranks[(ctx.rank + 1) % n]
    g_prev = ctx.global_ranks[(ctx.rank - 1) % n]
    group = ctx.group

    def exchange(send: torch.Tensor, recv: torch.Tensor) -> None:
        # Grouped, as nccl-tests does with ncclGroupStart/End: no rank waits on its send first.
        ops = [
            dist.P2POp(dist.irecv, recv, g_prev, group),
            dist.P2POp(dist.isend, send, g_next, group),
        ]
        wait_all(dist.batch_isend_irecv(ops))

    def run() -> None:
        exchange(buf.send, buf.recv)

    def check() -> int:
        prev = (ctx.rank - 1) % n
        data = buf.incoming(ctx)
        exchange(buf.outgoing(ctx), data)
        return buf.expect(ctx, data, prev)

    labels = {"src": "all", "dst": "next", "pattern": "ring"}
    return buf.case(run, check, labels, ops=1)


def multipair_case(ctx: Context, buf: Buffers, window: int, bidirectional: bool) -> Case:
    """osu_mbw_mr: rank i < n/2 sends a window to rank i + n/2 while every other pair does the
    same; the receiver acks its window (bidirectional: both send, the window is the ack)."""
    half = ctx.world_size // 2
    lower = ctx.rank < half
    peer = ctx.rank + half if lower else ctx.rank - half
    g_peer = ctx.global_ranks[peer]
    group = ctx.group
    sends, receives = bidirectional or lower, bidirectional or not lower

    def run() -> None:
        ops = [dist.P2POp(dist.irecv, buf.recv, g_peer, group) for _ in range(window * receives)]
        ops += [dist.P2POp(dist.isend, buf.send, g_peer, group) for _ in range(window * sends)]
        wait_all(dist.batch_isend_irecv(ops))
        if not bidirectional:  # the sender's window ends when the receiver has all of it
            if lower:
                dist.recv(buf.ack, src=g_peer, group=group)
            else:
                dist.send(buf.ack, dst=g_peer, group=group)

    def check() -> int:
        return buf.check_exchange(ctx, peer, sends, receives)

    name = f"multipair-bidir-window={window}" if bidirectional else f"multipair-window={window}"
    lows, highs = tuple(range(half)), tuple(range(half, 2 * half))
    labels = {"src": ranks_label(lows), "dst": ranks_label(highs), "pattern": name}
    case = buf.case(run, check, labels, ops=half * window * (2 if bidirectional else 1))
    return dataclasses.replace(case, columns={"window_msgs": float(window)})
