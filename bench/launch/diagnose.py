"""Why a launch failed, in one message: which rank, what it was measuring (from its log), how it
ended (torchrun's summary and exit codes), and the tail of its log; or which ranks went silent
(their heartbeat stopped). torchrun.py calls these when a group fails."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from distbench.collectors.schema import rank_log_path, rank_map_path, torchrun_log_path
from distbench.spec import LaunchSpec


def describe_silent(
    run_dir: Path, world_size: int, silent: list[tuple[int, float]], timeout_s: float
) -> str:
    """Ranks that stopped responding: who, for how long, what they were measuring, their log."""
    parts = []
    for rank, age in silent:
        path = rank_log_path(run_dir, world_size, rank)
        text = path.read_text(errors="replace") if path.exists() else ""
        parts.append(
            f"rank {rank} stopped responding (no heartbeat for {age:.0f} s, --timeout "
            f"{timeout_s:g}) {position(text)}; the group was stopped; its log: {path}"
        )
    return "\n".join(parts)


def describe_rendezvous_wait(launch: LaunchSpec, world_size: int, waited_s: float) -> str:
    """One line: what a launch whose workers never started waited for, and for how long."""
    log = torchrun_log_path(Path(launch.run_dir), world_size)
    waited = f"waited {waited_s:.0f} s (--timeout {launch.timeout_s:g})"
    if launch.nnodes <= 1:
        return (
            f"{waited} for torchrun to start {world_size} ranks on this node, none started; "
            f"the group was stopped; torchrun's log: {log}"
        )
    if launch.node_rank == 0:
        what = (
            f"for the other {launch.nnodes - 1} of {launch.nnodes} nodes to join this node's "
            f"static rendezvous at {launch.rdzv_endpoint}"
        )
    elif launch.node_rank > 0:
        what = (
            f"as node {launch.node_rank} of {launch.nnodes} for node 0's static rendezvous at "
            f"{launch.rdzv_endpoint}"
        )
    else:
        what = (
            f"for {launch.nnodes} nodes to join the c10d rendezvous '{launch.rdzv_id}' at "
            f"{launch.rdzv_endpoint}"
        )
    return (
        f"{waited} {what}; no worker started, the launch was stopped: run the same command on "
        f"every node (same --nnodes, --rdzv-endpoint reachable from each, --rdzv-id); "
        f"torchrun's log: {log}"
    )


def describe_slow_start(run_dir: Path, world_size: int, waited_s: float) -> str:
    """One line: torchrun did not get as far as its rendezvous (importing torch)."""
    log = torchrun_log_path(run_dir, world_size)
    return (
        f"torchrun did not start within {waited_s:.0f} s (importing torch, before any "
        f"rendezvous); the launch was stopped; its log: {log}"
    )


def tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").rstrip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def exit_description(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


_SUMMARY_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", re.M)


def failed_ranks(torchrun_log: str) -> list[tuple[int, str]]:
    """(rank, exit description) pairs from torchrun's last failure summary, the root cause (the
    first failure torchrun observed) first; the others were mostly stopped by torchrun."""
    start = torchrun_log.rfind("Failures:")
    if start < 0:
        start = torchrun_log.rfind("Root Cause")
    if start < 0:
        return []
    summary = torchrun_log[start:]
    root_at = summary.find("Root Cause")
    sections = [summary[root_at:], summary[:root_at]] if root_at >= 0 else [summary]
    found: list[tuple[int, str]] = []
    for section in sections:
        for match in _SUMMARY_RANK.finditer(section):
            entry = (int(match.group(1)), exit_description(int(match.group(2))))
            if entry not in found:
                found.append(entry)
    return found


def current_attempt(log_text: str) -> str:
    """The part of a rank's log written by its latest process (logs append across --resume)."""
    start = log_text.rfind("] start pid=")
    return log_text[log_text.rfind("\n", 0, start) + 1 :] if start >= 0 else log_text


def last_measurement(log_text: str) -> str | None:
    """The measurement a rank had begun last, from its 'begin ...' log lines."""
    begins = re.findall(r"begin (\S+ .*)", log_text)
    return begins[-1] if begins else None


def position(log_text: str) -> str:
    """Where a rank was, from its log: inside a measurement, between two, or past the last."""
    text = current_attempt(log_text)
    doing = last_measurement(text)
    if doing is None:
        return "before its first measurement"
    ended = re.findall(r"end (\S+) ", text)
    if ended and doing.split(" ", 1)[0] == ended[-1]:
        if re.search(r"\] done$", text.rstrip()):
            return f"after its last measurement ({doing}), while leaving the group"
        return f"after finishing {doing}"
    return f"while measuring {doing}"


RDZV_TIMEOUT = re.compile(r"RendezvousTimeoutError|waiting for clients|Timed out after")
"""torchrun's words when the other nodes never came (c10d, static)."""
PORT_TAKEN = re.compile(r"EADDRINUSE.*?port: (\d+)|port: (\d+).*?EADDRINUSE")
"""torchrun's words when node 0 cannot listen on the --rdzv-endpoint's port (another process, or
a launch still leaving, holds it)."""
PEER_LOST = re.compile(r"Connection (reset|closed) by peer")
"""gloo's words when the rank at the other end of a pair went away first."""


def other_nodes(run_dir: Path, world_size: int, rank: int) -> str:
    """The ranks and hosts of the group that sat on other nodes than `rank`, from the map rank 0
    wrote at the start (groups.gather_placement): where to look when a peer went away."""
    try:
        ranks = json.loads(rank_map_path(run_dir, world_size).read_text())
        mine = ranks[str(rank)]["node"]
        away: dict[tuple[int, str], list[str]] = {}
        for other, where in ranks.items():
            if where["node"] != mine:
                away.setdefault((where["node"], where["host"]), []).append(other)
    except (OSError, ValueError, KeyError, TypeError):
        away = {}
    if not away:
        return "with several nodes, see the other nodes' output"
    listed = "; ".join(
        f"rank{'s' if len(r) > 1 else ''} {','.join(r)} on node {node} (host {host})"
        for (node, host), r in sorted(away.items())
    )
    return f"the group's ranks on other nodes: {listed}: see that node's output"


def describe_failure(run_dir: Path, world_size: int, returncode: int) -> str:
    """The failed rank torchrun saw first: how it ended, what it was measuring, its log and the
    log's tail; then one line for each rank that went down with it."""
    torchrun_log = torchrun_log_path(run_dir, world_size)
    summary = torchrun_log.read_text(errors="replace") if torchrun_log.exists() else ""
    ranks = failed_ranks(summary)
    if not ranks and RDZV_TIMEOUT.search(summary):
        return (
            "the nodes did not all join the rendezvous within --timeout: run the same command "
            "on every node with the same --nnodes, --rdzv-endpoint (reachable from every node) "
            f"and --rdzv-id; see {torchrun_log}"
        )
    taken = PORT_TAKEN.search(summary)
    if not ranks and taken:
        port = taken.group(1) or taken.group(2)
        return (
            f"port {port} of --rdzv-endpoint is taken on this host (address already in use): "
            f"give another port, or wait for what holds it to end; see {torchrun_log}"
        )
    if not ranks:
        return (
            f"the world-size-{world_size} group failed (torchrun exit code {returncode}); "
            f"see {torchrun_log}:\n{tail(torchrun_log, 15)}"
        )
    logs = {rank: rank_log_path(run_dir, world_size, rank) for rank, _ in ranks}
    texts = {
        rank: path.read_text(errors="replace") if path.exists() else ""
        for rank, path in logs.items()
    }
    # torchrun's root cause is the failure it observed first, and a rank whose peer died can be
    # observed before the rank that died: name first a rank that was not a victim, i.e. neither
    # stopped by torchrun's own SIGTERM nor failing because a peer's connection dropped.
    ranks.sort(
        key=lambda entry: (
            bool(PEER_LOST.search(current_attempt(texts[entry[0]])))
            or entry[1] == "killed by SIGTERM"
        )
    )
    parts = []
    for index, (rank, how) in enumerate(ranks):
        path, text = logs[rank], texts[rank]
        if index == 0:
            why = ""
            if PEER_LOST.search(current_attempt(text)):
                why = (
                    " because a peer's connection dropped (another rank died or was stopped first;"
                    f" {other_nodes(run_dir, world_size, rank)})"
                )
            parts.append(
                f"rank {rank} failed ({how}) {position(text)}{why}; its log: {path}\n{tail(path)}"
            )
        else:
            parts.append(f"rank {rank} also ended ({how}) {position(text)}; its log: {path}")
    return "\n".join(parts)
