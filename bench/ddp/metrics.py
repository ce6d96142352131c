"""The derived columns of a `distbench ddp` row, as pure formulas.

Every time is a MEAN step time in microseconds: the mean over windows of the slowest rank's window
time / steps (ddp/steps.py): mean x steps is the job's wall clock of its timed steps. A rate is work
over total time: with a periodic strategy (param-avg --avg-every K) the p50 may be a step that
sends nothing, and a rate from it would describe a job that never communicates.

A formula without its input (no 1-rank row, no ddp-nocomm or ddp-nooverlap baseline, a zero
denominator) gives NaN, which results.csv writes as an empty cell. At world size 1 nothing crosses
a wire: the communication columns are NaN there.
"""

from __future__ import annotations

NAN = float("nan")


def samples_per_s(world_size: int, batch_size: int, step_us: float) -> float:
    """Whole job: world_size x batch_size samples every step, over the mean step time."""
    if step_us <= 0:
        return NAN
    return world_size * batch_size / (step_us * 1e-6)


def scaling_efficiency(world_size: int, samples_per_s_n: float, samples_per_s_1: float) -> float:
    """samples/s at n ranks / (n x samples/s at one rank): 1.0 is perfect linear scaling."""
    if not samples_per_s_1 > 0:
        return NAN
    return samples_per_s_n / (world_size * samples_per_s_1)


def comm_share(world_size: int, step_us: float, nocomm_us: float) -> float:
    """(step - ddp-nocomm) / step: the fraction of the step spent on communication that was not
    hidden. Not clamped: noise can make it slightly negative. NaN at one rank."""
    if world_size < 2 or step_us <= 0:
        return NAN
    return (step_us - nocomm_us) / step_us


def comm_hidden_share(
    world_size: int, step_us: float, nocomm_us: float, reference_us: float
) -> float:
    """1 - (step - nocomm) / (reference - nocomm): the share of the communication time that this
    strategy hides behind compute.

    The reference sends the same messages with nothing overlapped: for ddp, ddp-nooverlap at the
    same bucket size (DDP's own bucket all_reduces, each waited for before backward goes on), so
    reference - nocomm is the exposed time of exactly those messages. 0 = nothing hidden (the
    reference itself, or any strategy that sends those messages after backward), 1 = all hidden
    (as fast as ddp-nocomm). A reference with other messages would count the gain from bigger or
    fewer messages as hiding (v1's `overlap`, against per-parameter grad-avg, did). Not clamped
    (noise shows as a little below 0 or above 1); NaN at one rank, and when the reference is not
    slower than ddp-nocomm (nothing exposed to hide)."""
    exposed_reference = reference_us - nocomm_us
    if world_size < 2 or not exposed_reference > 0:
        return NAN
    return 1.0 - (step_us - nocomm_us) / exposed_reference


def comm_busbw_gbps(comm_bytes: int, step_us: float, nocomm_us: float, world_size: int) -> float:
    """nccl-tests' all_reduce busbw of comm_bytes moved in (step - its no-communication
    baseline, `nocomm_us`): algbw x 2(n-1)/n, GB/s = 1e9 B/s (rows.comm_columns halves it for
    FSDP's all_gather and reduce_scatter, whose factor is (n-1)/n). Where communication
    overlaps compute, the exposed time is shorter than the communication, so this is an upper
    bound on the real bus bandwidth. NaN at one rank, where nothing crosses a wire."""
    exposed_us = step_us - nocomm_us
    if world_size < 2 or comm_bytes <= 0 or not exposed_us > 0:
        return NAN
    algbw = comm_bytes / (exposed_us * 1e-6) / 1e9
    return algbw * 2 * (world_size - 1) / world_size
