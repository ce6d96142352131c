"""Rank side of `distbench pairs`: every pair of units (ranks, or nodes) in the rounds of the
circle method (pairs/spec.py), each round's disjoint pairs at the same time (pairs/rounds.py).

    torchrun --nproc-per-node 4 -m distbench.worker RUN/spec.json    # the CLI starts it

Per (mode, size, round): as the round ends, each pair's per-sample maximum over its ranks
reaches every rank in one tensor all_reduce (ranks.max_by_slot: a slot per pair); rank 0 writes
one results.csv row per pair and those samples (rank -1). As each size's rounds end, rank 0
computes the standings (pairs/outliers.py) and tells every rank the units they flag; when there
are any, the rounds that hold their pairs run again (the confirmation) and a unit is an outlier
only when the standings with its pairs' new values flag it too; then ranks.csv. Each rank keeps
its own samples for --rank-samples, written at the end of the launch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.ranks import RankRow
from distbench.collectors.schema import RANKS_CSV, RESULTS_CSV, ResultRow, SampleRow
from distbench.collectors.sink import CsvSink, RunSinks, read_rows, run_sinks
from distbench.pairs.outliers import (
    PairValue,
    confirm,
    flagged_units,
    log_variance,
    remeasured,
    standings,
)
from distbench.pairs.rounds import Case, Layout, gather_layout, pair_groups, pair_slot, run_round
from distbench.pairs.rows import (
    PairResult,
    kept_result,
    pair_row,
    rank_rows,
    sample_rows,
    write_pair,
)
from distbench.pairs.spec import (
    PairsSpec,
    circle_rounds,
    confirmation_index,
    confirmation_rounds,
    plan_size,
    remeasured_pair,
    standing_key,
)
from distbench.primitives.base import Context, element_count
from distbench.ranks import max_by_slot, save_rank_samples
from distbench.spec import RunSpec, measurement_id


@dataclass
class PairsRun:
    """One launch's pairs: what every size's rounds need, and the next measurement index."""

    spec: RunSpec
    ctx: Context
    layout: Layout
    groups: dict[tuple[int, int], Any]
    sinks: RunSinks | None
    ranks_csv: CsvSink | None
    """Rank 0's ranks.csv, beside its results.csv and samples.csv (`sinks`)."""
    kept: dict[str, dict[str, str]]
    """results.csv rows of an interrupted run (--resume), by measurement id; rank 0 only."""
    index: int = 0
    ids: list[str] = field(default_factory=list)
    """Every measurement id of the launch so far, in order (the same on every rank)."""
    local: list[SampleRow] = field(default_factory=list)
    """This rank's own samples (--rank-samples), written at the end of the launch."""
    ranked: set[tuple[str, str, str]] = field(default_factory=set)
    """Sizes whose standings ranks.csv holds (--resume: finished before), by
    pairs/spec.py standing_key; rank 0."""

    def measure_size(self, mode: str, requested: int, log: Callable[[str], None]) -> None:
        """Every round at one size, then the confirmation of the units they flag; rank 0 writes
        each round's rows as it ends (a confirmation's too: a re-measured pair's later row is its
        confirmation's, the row report and compare use), then the size's ranks.csv. A run
        stopped before that is resumed at this size: its standings are missing
        (pairs/spec.py unranked), though every planned row may be there."""
        workload: PairsSpec = self.spec.workload
        dtype = getattr(torch, workload.dtype)
        count = element_count(requested, dtype)
        buffers = tuple(torch.ones(count, dtype=dtype, device=self.ctx.device) for _ in "sr")
        case = Case(mode, requested, dtype, count, buffers)
        rounds = circle_rounds(len(self.layout.units))
        first_index = self.index
        results: list[PairValue] = []
        for number, pairs in enumerate(rounds, 1):
            ids = [self.next_id(self.index + j) for j in range(len(pairs))]
            self.index += len(pairs)
            # the primitive first, as the rows' column: the progress display keeps a table
            # together while its begin lines name the rows' primitive (launch/events.py part_of)
            what = (
                f"{workload.primitive} pairs round {number}/{len(rounds)} {mode} size={case.size}"
            )
            rows, values = self.measure_round(case, pairs, ids, what, log)
            self.write(rows)
            results += values
        key = standing_key(self.spec.env_label, mode, case.size)
        finished = key in self.ranked  # --resume: confirmed and ranked before
        found = standings(results, workload.threshold) if self.sinks is not None else []
        flagged = agree_flagged(self.ctx, [] if finished else flagged_units(found))
        if flagged:
            positions = {pair: first_index + j for j, pair in enumerate(chain(*rounds))}
            again = self.run_confirmation(case, rounds, positions, flagged, log)
            if self.sinks is not None:
                found = confirm(found, standings(remeasured(results, again), workload.threshold))
        if self.ranks_csv is not None and not finished:
            self.ranks_csv.write(rank_rows(self.spec, self.layout, found, mode, case.size))

    def run_confirmation(
        self,
        case: Case,
        rounds: list[list[tuple[int, int]]],
        positions: dict[tuple[int, int], int],
        flagged: list[int],
        log: Callable[[str], None],
    ) -> list[PairValue]:
        """The flagged units' pairs measured again, in the rounds that hold them (whole: the
        others' pairs load the network as the first time, unrecorded), numbered past the
        launch's plan (pairs/spec.py confirmation_index). Rank 0 writes their rows as each
        round ends and gets their values."""
        workload: PairsSpec = self.spec.workload
        plan = plan_size(workload, self.ctx.world_size)
        again = confirmation_rounds(rounds, flagged)
        names = ",".join(map(str, flagged))
        values: list[PairValue] = []
        for number, pairs in enumerate(again, 1):
            ids = [
                self.next_id(confirmation_index(plan, positions[p]))
                if remeasured_pair(p, flagged)
                else None
                for p in pairs
            ]
            what = (
                f"{workload.primitive} pairs confirmation round {number}/{len(again)} of "
                f"{workload.level}s {names} "
                f"{case.mode} size={case.size}"
            )
            rows, found = self.measure_round(case, pairs, ids, what, log)
            self.write(rows)
            values += found
        return values

    def next_id(self, index: int) -> str:
        return measurement_id(self.ctx.world_size, index, self.spec.workload.tag)

    def measure_round(
        self,
        case: Case,
        pairs: list[tuple[int, int]],
        ids: Sequence[str | None],
        what: str,
        log: Callable[[str], None],
    ) -> tuple[list[tuple[ResultRow, PairResult]], list[PairValue]]:
        """One round, its pairs timed at once. `ids`: each pair's measurement id, None for a
        pair that is only load (a confirmation's). Rank 0 gets the rows of its recorded pairs
        (the caller writes them) and their values; a round whose rows are all in results.csv
        (--resume) is not run, and a recorded row is never written twice."""
        ctx, workload = self.ctx, self.spec.workload
        recorded = [(m, p) for m, p in zip(ids, pairs, strict=True) if m is not None]
        self.ids += [m for m, _ in recorded]
        done = set(self.spec.launch.done)
        if all(m in done for m, _ in recorded):
            return [], [kept_result(self.kept, m, p) for m, p in recorded]
        log(f"begin {recorded[0][0]} {what}")
        mine = run_round(ctx, workload, self.layout, self.groups, pairs, case.mode, case.buffers)
        rank = ctx.global_ranks[ctx.rank]
        slot = pair_slot(self.layout, pairs, rank)
        if slot >= 0 and ids[slot] is not None:
            self.local += sample_rows(str(ids[slot]), rank, case.mode, workload.iters, mine)
        worst = max_by_slot(ctx, mine, slot, len(pairs))
        rows: list[tuple[ResultRow, PairResult]] = []
        values: list[PairValue] = []
        if self.sinks is None:
            return rows, values
        for measurement, pair, samples in zip(ids, pairs, worst, strict=True):
            if measurement is None:
                continue
            if measurement in done:  # written before an interruption cut the round short
                values.append(kept_result(self.kept, measurement, pair))
                continue
            result = PairResult(measurement, pair, case.mode, case.requested, samples)
            row = pair_row(self.spec, self.layout, result, case.dtype, case.count)
            rows.append((row, result))
            spread = log_variance(result.worst, workload.trials)  # the standings' noise
            values.append((pair[0], pair[1], row.busbw_GBps, spread))
        return rows, values

    def write(self, rows: list[tuple[ResultRow, PairResult]]) -> None:
        """Rank 0's rows of a round, in results.csv and samples.csv."""
        if self.sinks is not None:
            for row, result in rows:
                write_pair(self.sinks, row, result)


def agree_flagged(ctx: Context, flagged: list[int]) -> list[int]:
    """Rank 0's flagged units (the first standings, computed where the rows are) on every rank:
    each runs the confirmation's rounds; none flagged, none run."""
    box: list[Any] = [flagged]
    dist.broadcast_object_list(box, src=ctx.global_ranks[0], group=ctx.group)
    return list(box[0])


def run_pairs(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure every pair, round by round; rank 0 writes rows as each round finishes."""
    workload: PairsSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    layout = gather_layout(workload.level, ctx.world_size)
    writer = ctx.rank == 0
    kept: dict[str, dict[str, str]] = {}
    if writer:
        kept = {row["measurement"]: row for row in read_rows(run_dir / RESULTS_CSV)}
    with (
        run_sinks(run_dir, ResultRow, spec.launch.run_id, writer) as sinks,
        CsvSink(run_dir / RANKS_CSV, RankRow) if writer else nullcontext() as ranks_csv,
    ):
        run = PairsRun(spec, ctx, layout, pair_groups(workload, layout), sinks, ranks_csv, kept)
        if writer:
            ranked = read_rows(run_dir / RANKS_CSV)
            run.ranked = {
                standing_key(r.get("env", ""), r["mode"], r["size_bytes"]) for r in ranked
            }
        for mode in workload.modes:
            for requested in workload.sizes:
                run.measure_size(mode, requested, log)
        save_rank_samples(ctx, run.local, spec.launch, run.ids)  # --rank-samples
