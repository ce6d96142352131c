"""results.csv of `distbench overlap` (schema v3): ResultRow's columns plus the phases' times and
what they come to, so report and compare read overlap rows as communication rows (primitive
`overlap`). One OverlapRow per (collective, size, compute size, compute threads, mode)."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.collectors.schema import ResultRow


@dataclass(frozen=True)
class OverlapRow(ResultRow):
    """A collective while a matmul computes. primitive `overlap`, pattern
    `COLLECTIVE:matmul=N:threads=T` (the case compare and report match on). The time_us_*
    columns, ci and samples.csv are the overlapped phase's (`both`): each sample the slowest
    rank's. algbw/busbw stay empty: the collective alone's time is t_comm_us. Every t_*_us is
    a p50 over samples of the slowest rank's time of one op of its phase."""

    collective: str = ""
    """all_reduce, all_gather, reduce_scatter or broadcast (issued async_op=True)."""
    compute_n: int = 0
    """N: the compute is fp32 matmuls [N, N] @ [N, N] (2 N^3 flop each)."""
    compute_iters: int = 0
    """Matmuls per op: --compute-iters, or the count that took about t_comm alone (auto)."""
    compute_threads: int = 0
    """torch.get_num_threads() on the ranks during the case (--compute-threads)."""
    t_compute_us: float = float("nan")
    """The compute alone: p50 of the slowest rank's time of compute_iters matmuls."""
    t_comm_us: float = float("nan")
    """The collective alone (issued async_op=True, then waited on)."""
    t_both_us: float = float("nan")
    """Issue the collective, compute, wait: time_us_p50 of this row."""
    t_compute_in_both_us: float = float("nan")
    """The compute inside `both` (CUDA events on its stream; on CPU the host clock around it)."""
    t_comm_in_both_us: float = float("nan")
    """The collective inside `both`, issue to completion (CUDA events on the comm stream; on
    CPU the clock read by the completion callback on gloo's thread)."""
    t_comm_completion_us: float = float("nan")
    """The collective alone, issue to completion by the clock of t_comm_in_both_us (t_comm_us is
    the host's view, which adds the wait's return: waking the waiting thread, on a busy CPU up to
    milliseconds)."""
    overlap_efficiency: float = float("nan")
    """(t_compute_us + t_comm_us - t_both_us) / min(t_compute_us, t_comm_us): 1 = the shorter
    one wholly hidden, 0 = serialised, < 0 = slower together than one after the other."""
    compute_slowdown: float = float("nan")
    """t_compute_in_both_us / t_compute_us."""
    comm_slowdown: float = float("nan")
    """t_comm_in_both_us / t_comm_completion_us."""
    osu_overlap_pct: float = float("nan")
    """OSU's figure on these times: max(0, 100 - (t_both_us - t_compute_in_both_us) /
    t_comm_us x 100)."""
