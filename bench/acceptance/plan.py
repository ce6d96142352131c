"""What `distbench acceptance` runs, and how much of it fits a budget of minutes.

The matrix is the nightly one (ci/sweep-nightly-cpu.toml on gloo, ci/sweep-nightly-gpu.toml on
nccl; tests/unit/acceptance holds them equal, key by key) at the full world size; --quick takes its
first dtype, two small sizes, the ring pattern and 3 trials. Pairs run at node level from three
nodes on; with one or two nodes at rank level (two nodes share their one pair, which cannot say
which of them is slow; their ranks can).

The plan depends on the options only, never on this node's timings: every node of a launch must
build the same spec. The time estimate is a coarse model (a launch's start, and per timed op a
latency plus bytes over a bandwidth assumed low for the backend); a budget it does not fit is met
by cuts in a fixed order, each one named, and a budget not even the smallest plan fits is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from distbench.parse import UsageError, format_size, parse_size

NIGHTLY_PRIMITIVES = (
    "allreduce",
    "broadcast",
    "reduce",
    "allgather",
    "reducescatter",
    "alltoall",
    "sendrecv",
)
"""The nightly matrix's commands, the same on both backends."""

NIGHTLY: dict[str, dict[str, Any]] = {
    "gloo": {
        "primitives": list(NIGHTLY_PRIMITIVES),
        "sizes": ["1K", "64K", "1M"],
        "dtypes": ["float32", "bfloat16"],
        "op": "sum",
        "mode": "throughput",
        "iters": 5,
        "warmup": 2,
        "trials": 12,
        "order": "interleaved",
        "check": True,
        "root": "0",
        "pattern": ["pingpong", "window", "ring"],
        "pairs": "0:1",
        "window": 16,
    },
    "nccl": {
        "primitives": list(NIGHTLY_PRIMITIVES),
        "sizes": [format_size(1024 * 4**k) for k in range(11)],  # 1K .. 1G by 4: min/max/factor
        "dtypes": ["bfloat16", "float32"],
        "op": "sum",
        "mode": "throughput",
        "iters": 20,
        "warmup": 5,
        "trials": 10,
        "order": "interleaved",
        "check": True,
        "root": "0",
        "pattern": ["ring"],
    },
}
"""The nightly matrices (world sizes aside: acceptance runs the full world)."""
QUICK_SIZES = {"gloo": ["1K", "64K"], "nccl": ["1M", "64M"]}
PAIR_SIZE = {"gloo": "4M", "nccl": "64M"}
"""pairs' own default size; --quick: QUICK_PAIR_SIZE, 5 iterations, 3 trials."""
QUICK_PAIR_SIZE = {"gloo": "64K", "nccl": "16M"}
MIN_TRIALS = 3

LAUNCH_S = {"gloo": 12.0, "nccl": 45.0}
"""A launch's start (torch imported on every rank, rendezvous, group): 2-11 s for 2-4 gloo ranks
on the 2-core box at load 2-7 (2026-12-05; 30 s was assumed before, which put every estimate
2-9x over the run); more on a node that loads CUDA and NCCL, never measured yet."""
LATENCY_S = {"gloo": 3e-3, "nccl": 1e-4}
BANDWIDTH_Bps = {"gloo": 0.5e9, "nccl": 10e9}
"""Assumed low on purpose, so that a plan that fits on a slow cluster fits on a fast one: gloo's
ops took 0.15-0.8 ms at 1K-64K and a 4M message 4.35 ms (about 1 GB/s) on the loaded box."""
ROW_S = 0.2
"""Per row: its barriers, --check, the flush of its rows."""
REPORT_S = 8.0
REPORT_ROW_S = 0.1
"""distbench report on the two runs (figures) and the verdict: REPORT_S + REPORT_ROW_S a sweep row;
3-15 s for 14-54 rows on the 2-core box (40 s flat was assumed before)."""


@dataclass(frozen=True)
class Plan:
    backend: str
    world_size: int
    pairs_level: str
    pairs_size: str
    pairs_trials: int
    pairs_iters: int
    matrix: dict[str, Any]
    """The sweep's values, the names of a `distbench sweep --config` file."""
    cuts: tuple[str, ...] = field(default=())
    """What the budget cut, in order."""

    def estimate_s(self, nnodes: int) -> float:
        report_s = REPORT_S + REPORT_ROW_S * rows(self.matrix)
        return pairs_s(self, nnodes) + sweep_s(self) + report_s


def op_s(backend: str, nbytes: int) -> float:
    return LATENCY_S[backend] + nbytes / BANDWIDTH_Bps[backend]


def pairs_s(plan: Plan, nnodes: int) -> float:
    """The pairs launch: its start, then per round every trial's window of 64 messages each way
    (16 above 1M, as pairs' default)."""
    units = nnodes if plan.pairs_level == "node" else plan.world_size
    rounds = units - 1 if units % 2 == 0 else units
    size = parse_size(plan.pairs_size)
    window = 64 if size <= 1 << 20 else max(1, (64 << 20) // size)
    ops = 3 + plan.pairs_trials * plan.pairs_iters
    per_op = LATENCY_S[plan.backend] + 2 * window * size / BANDWIDTH_Bps[plan.backend]
    return LAUNCH_S[plan.backend] + rounds * (ops * per_op + ROW_S)


def rows(matrix: dict[str, Any]) -> int:
    per_size = len(matrix["primitives"]) - 1 + len(matrix["pattern"])  # sendrecv: per pattern
    return per_size * len(matrix["sizes"]) * len(matrix["dtypes"])


def sweep_s(plan: Plan) -> float:
    m = plan.matrix
    ops = m["warmup"] + m["trials"] * m["iters"]
    per_size = len(m["primitives"]) - 1 + len(m["pattern"])
    timed = sum(op_s(plan.backend, parse_size(s)) for s in m["sizes"])
    return LAUNCH_S[plan.backend] + per_size * len(m["dtypes"]) * (
        ops * timed + ROW_S * len(m["sizes"])
    )


def base_plan(backend: str, world_size: int, nnodes: int, quick: bool) -> Plan:
    """The whole plan (or --quick's), before any budget."""
    trials, iters, pair_size = 5, 10, PAIR_SIZE[backend]
    if quick:
        trials, iters, pair_size = MIN_TRIALS, 5, QUICK_PAIR_SIZE[backend]
    plan = Plan(
        backend=backend,
        world_size=world_size,
        pairs_level="node" if nnodes >= 3 else "rank",
        pairs_size=pair_size,
        pairs_trials=trials,
        pairs_iters=iters,
        matrix=dict(NIGHTLY[backend]),
    )
    if not quick:
        return plan
    quick_values = {"sizes": QUICK_SIZES[backend], "dtypes": plan.matrix["dtypes"][:1]}
    return with_matrix(ring_only(plan), trials=MIN_TRIALS, **quick_values)


def cuts(plan: Plan) -> list[tuple[str, Plan]]:
    """The next cut of each kind that still applies, in the order they are taken."""
    m = plan.matrix
    found: list[tuple[str, Plan]] = []
    if m["trials"] > 5:
        found.append((f"trials {m['trials']} -> 5", with_matrix(plan, trials=5)))
    if len(m["dtypes"]) > 1:
        found.append((f"dtypes: {m['dtypes'][0]} only", with_matrix(plan, dtypes=m["dtypes"][:1])))
    if len(m["pattern"]) > 1:
        found.append(("sendrecv: ring pattern only", ring_only(plan)))
    sizes = m["sizes"]
    if len(sizes) > 2:
        thin = sizes[-1::-2][::-1]  # every other size, the largest kept
        cut = f"sizes {','.join(sizes)} -> {','.join(thin)}"
        found.append((cut, with_matrix(plan, sizes=thin)))
    if m["trials"] > MIN_TRIALS:
        found.append((f"trials {m['trials']} -> {MIN_TRIALS}", with_matrix(plan, trials=3)))
    if plan.pairs_trials > MIN_TRIALS:
        cut = f"pairs trials {plan.pairs_trials} -> {MIN_TRIALS}"
        found.append((cut, replace(plan, pairs_trials=MIN_TRIALS)))
    if len(sizes) > 1:
        found.append((f"size {sizes[-1]} dropped", with_matrix(plan, sizes=sizes[:-1])))
    return found


def with_matrix(plan: Plan, **values: Any) -> Plan:
    return replace(plan, matrix=plan.matrix | values)


def ring_only(plan: Plan) -> Plan:
    """sendrecv's ring pattern alone (every rank sends to the next), without the pingpong and
    window options it no longer takes."""
    matrix = {k: v for k, v in plan.matrix.items() if k not in ("pairs", "window")}
    return replace(plan, matrix=matrix | {"pattern": ["ring"]})


def fit_budget(plan: Plan, nnodes: int, budget_min: float | None) -> Plan:
    """The plan cut, one named step after another, until its estimate fits the budget; a budget
    that not even the smallest plan fits is one line (exit 2)."""
    if budget_min is None:
        return plan
    budget_s = budget_min * 60
    taken: list[str] = []
    while plan.estimate_s(nnodes) > budget_s:
        options = cuts(plan)
        if not options:
            need = plan.estimate_s(nnodes) / 60
            raise UsageError(
                f"--budget {budget_min:g} minutes cannot hold the smallest acceptance plan "
                f"(estimated {need:.1f} minutes on {plan.backend}): give --budget "
                f"{math.ceil(need)} or more, or leave --budget out"
            )
        name, plan = options[0]
        taken.append(name)
    return replace(plan, cuts=tuple(taken))


def describe(plan: Plan, nnodes: int) -> str:
    """One line: what runs and the estimate."""
    m = plan.matrix
    return (
        f"pairs at {plan.pairs_level} level ({plan.pairs_size}, {plan.pairs_trials} trials); "
        f"the nightly matrix at {plan.world_size} ranks ({len(m['primitives'])} primitives, "
        f"sizes {','.join(m['sizes'])}, {','.join(m['dtypes'])}, {m['trials']} trials: "
        f"{rows(m)} rows); estimated {plan.estimate_s(nnodes) / 60:.1f} min"
    )
