"""The derived columns of a `distbench ddp` row, as pure formulas (times in microseconds, p50 of
the max-over-ranks step time). A formula without its input (no 1-rank row, no ddp-nocomm or
grad-avg baseline, a zero denominator) gives NaN, which results.csv writes as an empty cell.
"""

from __future__ import annotations

NAN = float("nan")


def samples_per_s(world_size: int, batch_size: int, step_us: float) -> float:
    """Whole job: world_size x batch_size samples every step."""
    if step_us <= 0:
        return NAN
    return world_size * batch_size / (step_us * 1e-6)


def scaling_efficiency(world_size: int, samples_per_s_n: float, samples_per_s_1: float) -> float:
    """samples/s at n ranks / (n x samples/s at one rank): 1.0 is perfect linear scaling."""
    if not samples_per_s_1 > 0:
        return NAN
    return samples_per_s_n / (world_size * samples_per_s_1)


def comm_share(step_us: float, nocomm_us: float) -> float:
    """(step - ddp-nocomm) / step: the fraction of the step spent on communication that was not
    hidden. Not clamped: noise can make it slightly negative."""
    if step_us <= 0:
        return NAN
    return (step_us - nocomm_us) / step_us


def overlap(step_us: float, nocomm_us: float, grad_avg_us: float) -> float:
    """1 - (step - nocomm) / (grad_avg - nocomm): the share of grad-avg's exposed communication
    time that this strategy does not expose. grad-avg communicates after backward, so all of its
    communication is exposed: 0 = none hidden, 1 = all hidden. Not clamped (noise shows as
    values a little below 0 or above 1); NaN when grad-avg is not slower than ddp-nocomm."""
    exposed_grad_avg = grad_avg_us - nocomm_us
    if not exposed_grad_avg > 0:
        return NAN
    return 1.0 - (step_us - nocomm_us) / exposed_grad_avg


def comm_busbw_gbps(comm_bytes: int, step_us: float, nocomm_us: float, world_size: int) -> float:
    """nccl-tests' all_reduce busbw of comm_bytes moved in (step - ddp-nocomm): algbw x
    2(n-1)/n, GB/s = 1e9 B/s. Where communication overlaps compute, the exposed time is shorter
    than the communication, so this is an upper bound on the real bus bandwidth."""
    exposed_us = step_us - nocomm_us
    if comm_bytes <= 0 or not exposed_us > 0:
        return NAN
    algbw = comm_bytes / (exposed_us * 1e-6) / 1e9
    return algbw * 2 * (world_size - 1) / world_size
