"""all_to_allv: uneven all-to-all, as an MoE layer's token dispatch makes it.

Rank s sends M[s][d] elements to rank d (all_to_all_single with input and output split sizes).
The split matrix M comes from one of two forms, seeded (the same M on every rank, no exchange):

- `--skew` (each rank sends `count` elements, the size asked for): a destination's share is
  uniform (1/n), zipf:S (the k-th most popular destination gets a share proportional to
  1/k**S) or hot:F (one destination gets F, the others (1 - F)/(n - 1)). Which destination is
  the most popular is a seeded permutation, shared by every sender (a hot expert is hot for
  everyone); shares are rounded to whole elements by largest remainder, so every row sums to
  `count` exactly and M has no sampling noise.
- `--tokens N --hidden H --experts E --topk K`: each rank routes N tokens, each to K distinct
  experts drawn without replacement with the --skew popularity over the E experts (Gumbel top-k,
  seeded per rank: what a router's top-k over noisy logits gives). Expert e lives on rank
  e // (E / n); a token goes once per chosen expert (as Megatron's all-to-all dispatcher sends
  it, no de-duplication), as H elements. Every rank sends N * K * H elements.

Every rank sends the same number of elements in both forms, so size_bytes is one rank's send
buffer, as all_to_all's. The row's algbw divides the busiest rank's bytes (the most any rank
sent or received) by the time; busbw divides the busiest rank's off-rank bytes (its bytes to or
from other ranks, its own split excluded), which for uniform splits is nccl-tests' alltoall
busbw, algbw x (n - 1)/n. imbalance = the busiest rank's bytes / the mean per rank.

Issued by c10d (build_cases), functional (funcol.all_to_all_single with the split sizes) and on
static buffers (CUDA graphs); every form carries the byte columns (byte_columns) and the forms
but c10d's own check with split_check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, PrimitiveBase
from distbench.primitives.forms import Alloc, Check, Collective, Functional, Static

Matrix = list[list[int]]
"""M[s][d]: elements rank s sends to rank d."""


def shares(kind: str, parameter: float, slots: int, seed: int) -> torch.Tensor:
    """Popularity of `slots` destinations (float64, sums to 1) for a --skew of `kind`."""
    if kind == "uniform" or slots == 1:
        return torch.full((slots,), 1.0 / slots, dtype=torch.float64)
    if kind == "zipf":
        by_rank = 1.0 / torch.arange(1, slots + 1, dtype=torch.float64) ** parameter
    else:  # hot: one slot gets the fraction, the rest share what is left
        by_rank = torch.full((slots,), (1.0 - parameter) / (slots - 1), dtype=torch.float64)
        by_rank[0] = parameter
    order = torch.randperm(slots, generator=torch.Generator().manual_seed(seed))
    weights = torch.empty(slots, dtype=torch.float64)
    weights[order] = by_rank  # the k-th most popular slot is order[k]
    return weights / weights.sum()


def round_shares(total: int, weights: torch.Tensor) -> list[int]:
    """Whole counts proportional to `weights` that sum to `total` (largest remainder)."""
    exact = weights * total
    counts = exact.floor().long()
    left = total - int(counts.sum())
    if left:
        counts[torch.argsort(exact - counts, descending=True, stable=True)[:left]] += 1
    return [int(c) for c in counts]


def skew_matrix(n: int, count: int, kind: str, parameter: float, seed: int) -> Matrix:
    """Every sender splits `count` elements by the same seeded shares."""
    row = round_shares(count, shares(kind, parameter, n, seed))
    return [list(row) for _ in range(n)]


def moe_matrix(n: int, moe: Mapping[str, int], kind: str, parameter: float, seed: int) -> Matrix:
    """Each rank routes moe['tokens'] tokens to moe['topk'] of moe['experts'] experts."""
    experts, topk, hidden = moe["experts"], moe["topk"], moe["hidden"]
    log_weights = shares(kind, parameter, experts, seed).log()
    per_rank = experts // n
    matrix = []
    for sender in range(n):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + sender + 1)
        uniform = torch.rand((moe["tokens"], experts), generator=generator, dtype=torch.float64)
        gumbel = -(-uniform.clamp_min(1e-300).log()).log()
        chosen = (log_weights + gumbel).topk(topk, dim=1).indices  # [tokens, topk], distinct
        per_expert = torch.bincount(chosen.flatten(), minlength=experts)
        matrix.append([int(c) * hidden for c in per_expert.view(n, per_rank).sum(1)])
    return matrix


def parse_skew(skew: str) -> tuple[str, float]:
    """'zipf:1.2' -> ('zipf', 1.2); 'uniform' -> ('uniform', 0.0). The CLI has checked it."""
    kind, _, value = skew.partition(":")
    return kind, float(value) if value else 0.0


def split_matrix(n: int, count: int, options: Mapping[str, Any]) -> tuple[Matrix, str]:
    """The split matrix of a case, and its pattern label (e.g. `zipf:1.2,seed=0`)."""
    skew = options.get("skew") or "uniform"
    kind, parameter = parse_skew(skew)
    seed = int(options.get("seed") or 0)
    moe = options.get("moe")
    if moe:
        label = f"moe:E={moe['experts']},K={moe['topk']},{skew},seed={seed}"
        return moe_matrix(n, moe, kind, parameter, seed), label
    label = skew if kind == "uniform" else f"{skew},seed={seed}"
    return skew_matrix(n, count, kind, parameter, seed), label


def byte_columns(matrix: Matrix, itemsize: int) -> tuple[dict[str, float], int, float]:
    """(row columns, the busiest rank's bytes, busbw factor) of a split matrix."""
    n = len(matrix)
    sent = [sum(row) for row in matrix]
    received = [sum(matrix[s][d] for s in range(n)) for d in range(n)]
    busiest = max(max(sent), max(received))
    off_rank = max(max(sent[r], received[r]) - matrix[r][r] for r in range(n))
    mean = sum(sent) / n
    columns = {
        "send_bytes_min": min(sent) * itemsize,
        "send_bytes_max": max(sent) * itemsize,
        "recv_bytes_min": min(received) * itemsize,
        "recv_bytes_max": max(received) * itemsize,
        "imbalance": busiest / mean if mean else math.nan,
    }
    return columns, busiest * itemsize, off_rank / busiest if busiest else 0.0


def offsets(sizes: Sequence[int]) -> list[int]:
    """Where each split starts in its buffer."""
    starts, total = [], 0
    for size in sizes:
        starts.append(total)
        total += size
    return starts


def wrong_received(out: torch.Tensor, matrix: Matrix, me: int) -> int:
    """Wrong elements in what rank `me` received from the check data (checkdata.fill_pattern of
    every sender): the segment from sender s must be s's positions offsets(M[s])[me]... (also
    split_check's)."""
    segments = out.split([row[me] for row in matrix])
    return sum(
        checkdata.wrong_moved(segments[s], s, start=offsets(matrix[s])[me])
        for s in range(len(matrix))
    )


class AllToAllV(PrimitiveBase):
    name = "all_to_allv"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        dtype, n, me = request.dtype, ctx.world_size, ctx.rank
        count = request.requested_bytes // dtype.itemsize
        matrix, label = split_matrix(n, count, request.options)
        send_splits = matrix[me]
        recv_splits = [matrix[s][me] for s in range(n)]
        send = torch.zeros(sum(send_splits), dtype=dtype, device=ctx.device)
        received = torch.zeros(sum(recv_splits), dtype=dtype, device=ctx.device)

        def run() -> None:
            dist.all_to_all_single(received, send, recv_splits, send_splits, group=ctx.group)

        def check() -> int:
            # Rank s sends positions offsets(M[s])[r].. of its data to rank r: the segment from s
            # in what r receives must be exactly those, per sender and per receiver.
            data = checkdata.fill_pattern(len(send), me, dtype, ctx.device)
            out = checkdata.fill_sentinel(len(received), dtype, ctx.device)
            dist.all_to_all_single(out, data, recv_splits, send_splits, group=ctx.group)
            return wrong_received(out, matrix, me)

        columns, busiest, factor = byte_columns(matrix, dtype.itemsize)
        sent = sum(matrix[0])  # every rank sends the same number of elements (module doc)
        return [
            Case(
                size_bytes=sent * dtype.itemsize,
                count=sent,
                run=run,
                check=check,
                labels={"pattern": label},
                bw_bytes=busiest,
                busbw_factor=factor,
                columns=columns,
            )
        ]

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        """all_to_all_single with the c10d case's split sizes and byte columns; every rank sends
        the same number of elements."""
        import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

        me = ctx.rank
        matrix, label = split_matrix(
            ctx.world_size, request.requested_bytes // request.dtype.itemsize, request.options
        )
        received = [row[me] for row in matrix]
        sent = sum(matrix[me])

        def collective(tensor: torch.Tensor) -> torch.Tensor:
            return funcol.all_to_all_single(tensor, received, matrix[me], group)

        columns, busiest, factor = byte_columns(matrix, request.dtype.itemsize)
        check = split_check(ctx, matrix)
        labels = {"pattern": label}
        return [Functional(sent, collective, check, sent, labels, busiest, factor, columns)]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        n, me, dtype, group = ctx.world_size, ctx.rank, request.dtype, ctx.group
        matrix, _ = split_matrix(n, request.requested_bytes // dtype.itemsize, request.options)
        received = [row[me] for row in matrix]
        source, result = alloc(sum(matrix[me]), dtype), alloc(sum(received), dtype)

        def exchange() -> None:
            dist.all_to_all_single(result, source, received, matrix[me], group=group)

        return Static(source, result, exchange, split_check(ctx, matrix), sum(matrix[me]))


def split_check(ctx: Context, matrix: Matrix) -> Check:
    """The segment from each sender holds its positions for this rank."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        data = checkdata.fill_pattern(count, ctx.rank, dtype, ctx.device)
        return wrong_received(issue(data), matrix, ctx.rank)

    return check
