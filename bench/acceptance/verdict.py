"""The acceptance verdict, one per node, from the rows the runs wrote: pure and torch-free, so the
tests check each reason on numbers.

A node fails for any of:
- pairs: one of its ranks (or the node itself, at node level) is an outlier of ranks.csv;
- reference: a row of the full-world sweep has a busbw below `share` x the --reference file's
  value for its primitive, world size and size. Every rank takes part in such a row, so which
  node made it slow cannot be told: the reason is given to every node;
- wrong results: --check found wrong elements in a row (every node, as above);
- facts: a node-level fact of the manifest (driver, link, firmware, NCCL, environment ...) differs
  from the other nodes'. Where most nodes agree, the others fail; where no value has a majority
  (two nodes), every node holding a differing value fails, since which one is wrong cannot be
  told.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from distbench.collectors.nodefacts_diff import flatten, natural
from distbench.parse import format_size

Row = Mapping[str, str]
PER_NODE = ("node_rank", "NODE_RANK")
"""Facts that differ by nature between the nodes of one launch beyond nodefacts_diff's NATURAL
(SkyPilot's node rank, torchrun's PET_NODE_RANK): never a reason."""
MAX_REASONS = 6
"""Reasons of one kind listed per node; the rest are counted."""


class Expected(Protocol):
    """A --reference entry (reports/report/reference.py Reference)."""

    primitive: str
    world_size: int
    size_bytes: int
    busbw_GBps: float
    backend: str


@dataclass(frozen=True)
class NodeVerdict:
    node: int
    host: str
    reasons: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        head = f"node {self.node} ({self.host}): "
        return head + ("PASS" if self.passed else "FAIL: " + "; ".join(self.reasons))


@dataclass(frozen=True)
class Verdict:
    nodes: tuple[NodeVerdict, ...]
    checked: tuple[str, ...]
    """What was judged."""
    not_seen: tuple[str, ...]
    """What it could not see."""

    @property
    def passed(self) -> bool:
        return all(n.passed for n in self.nodes)

    @property
    def summary(self) -> str:
        """PASS, or FAIL with how many nodes failed."""
        failed = sum(not n.passed for n in self.nodes)
        return f"FAIL ({failed} of {len(self.nodes)} nodes)" if failed else "PASS"

    def as_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "nodes": [
                {"node": n.node, "host": n.host, "passed": n.passed, "reasons": list(n.reasons)}
                for n in self.nodes
            ],
            "checked": list(self.checked),
            "not_seen": list(self.not_seen),
        }


def percent(share: float) -> str:
    """A share as a percentage that never reads 0% for a real one: 0.283 of 100 is 0.28%."""
    return f"{share:.0%}" if share >= 0.01 else f"{share * 100:.2g}%"


def capped(reasons: list[str]) -> list[str]:
    if len(reasons) <= MAX_REASONS:
        return reasons
    return [*reasons[:MAX_REASONS], f"and {len(reasons) - MAX_REASONS} more"]


def pairs_reasons(standings: Sequence[Row]) -> dict[int, list[str]]:
    """node -> 'pairs: rank R is an outlier (...)' for each outlier of ranks.csv."""
    found: dict[int, list[str]] = {}
    for row in standings:
        if row.get("outlier") != "true":
            continue
        unit = "the node" if row.get("level") == "node" else f"rank {row['rank']}"
        size = format_size(int(row["size_bytes"]))
        found.setdefault(int(row["node"]), []).append(
            f"pairs: {unit} is an outlier ({row['primitive']} {size}: best pair "
            f"{float(row['busbw_GBps']):.3g} GB/s, robust z {float(row['robust_z']):.1f})"
        )
    return found


def _matches(row: Row, ref: Expected) -> bool:
    return (
        row.get("primitive") == ref.primitive
        and row.get("world_size") == str(ref.world_size)
        and row.get("size_bytes") == str(ref.size_bytes)
        and (not ref.backend or row.get("backend") == ref.backend)
    )


def reference_reasons(
    rows: Sequence[Row], references: Sequence[Expected], share: float
) -> tuple[list[str], int]:
    """Rows below share x their reference (every node's reason), and how many rows a reference
    covered."""
    below, covered = [], 0
    for ref in references:
        for row in rows:
            if not _matches(row, ref):
                continue
            covered += 1
            busbw = float(row.get("busbw_GBps") or "nan")
            if not math.isfinite(busbw) or busbw < share * ref.busbw_GBps:
                what = " ".join(
                    v
                    for v in (ref.primitive, format_size(ref.size_bytes), row.get("dtype", ""))
                    if v
                )
                pattern = f" {row['pattern']}" if row.get("pattern") else ""
                below.append(
                    f"reference: {what}{pattern} busbw {busbw:.3g} GB/s is "
                    f"{percent(busbw / ref.busbw_GBps)} of the expected {ref.busbw_GBps:.3g} GB/s "
                    f"(below {share:.0%}; a whole-world row: which node cannot be told)"
                )
    return below, covered


def wrong_reasons(rows: Sequence[Row]) -> list[str]:
    """Rows where --check found wrong elements (every node's reason)."""
    return [
        f"wrong results: {row['primitive']} {format_size(int(row['size_bytes']))} "
        f"{row.get('dtype', '')}: {row['wrong']} wrong elements (--check)"
        for row in rows
        if row.get("wrong") not in (None, "", "0", "-1")
    ]


def facts_reasons(nodes: Mapping[str, Any]) -> dict[int, list[str]]:
    """node -> 'facts: FIELD is A where N of M nodes have B' for each node-level fact in which it
    differs from the others (fields that differ by nature, and the host, left out)."""
    flat = {int(n): flatten(facts) for n, facts in nodes.items()}
    if len(flat) < 2:
        return {}
    names = sorted(
        {
            k
            for f in flat.values()
            for k in f
            if k != "host" and not natural(k) and not any(p in k for p in PER_NODE)
        }
    )
    found: dict[int, list[str]] = {}
    for name in names:
        values = {node: f.get(name, "absent") for node, f in flat.items()}
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        common, count = counts.most_common(1)[0]
        majority = count * 2 > len(values)
        for node, value in values.items():
            if majority and value == common:
                continue
            others = "; ".join(f"node {n}: {v}" for n, v in values.items() if n != node)
            said = (
                f"where {count} of {len(values)} nodes have {common}"
                if majority
                else f"({others}; no value has a majority: which node is odd cannot be told)"
            )
            found.setdefault(node, []).append(f"facts: {name} is {value} {said}")
    return found


def judge(
    hosts: Mapping[int, str],
    standings: Sequence[Row],
    rows: Sequence[Row],
    references: Sequence[Expected] | None,
    share: float,
    node_facts: Mapping[str, Any],
) -> Verdict:
    """Every node's verdict with its reasons; what was judged and what could not be seen."""
    world = {row.get("world_size") for row in rows}
    full = max((int(w) for w in world if w), default=0)
    whole = [row for row in rows if row.get("world_size") == str(full)]
    everyone = wrong_reasons(whole)
    checked = ["pairs: outliers of ranks.csv", "wrong results (--check)", "node facts"]
    not_seen = []
    if references:
        below, covered = reference_reasons(whole, references, share)
        everyone += below
        checked.append(f"busbw against --reference (share {share:.0%}): {covered} rows covered")
        if not covered:
            not_seen.append("no row of the sweep has a --reference entry's primitive and size")
    else:
        not_seen.append("busbw against a reference: no --reference file given")
    levels = {row.get("level") for row in standings}
    units = len({r["rank"] for r in standings})
    if not standings:
        not_seen.append("pairs: ranks.csv holds no standing (no outlier could be named)")
    elif units <= 2:
        not_seen.append("pairs: two units share their one pair, neither can be named slow")
    else:
        unit = "nodes" if "node" in levels else "ranks"
        not_seen.append(
            f"pairs: should more than half of the {unit} be slow, they cannot be named (a "
            "unit is judged against the others)"
        )
    if len(hosts) < 2:
        not_seen.append("node facts: one node, nothing to compare with")
    by_pairs = pairs_reasons(standings)
    by_facts = facts_reasons(node_facts)
    verdicts = tuple(
        NodeVerdict(
            node,
            host,
            (*capped(by_pairs.get(node, [])), *capped(everyone), *capped(by_facts.get(node, []))),
        )
        for node, host in sorted(hosts.items())
    )
    return Verdict(verdicts, tuple(checked), tuple(not_seen))
