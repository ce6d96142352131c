"""What a report compares: the *source* of each row, from what the user gave.

    distbench report fold/cluster-a fold/cluster-b     # two sources: cluster-a and cluster-b
    distbench report results/                          # one source per label, else per host

`--by auto` takes, in this order:

1. `label` when several arguments measured a case in common and each argument carries one label
   of its own (the labels tell the arguments apart);
2. `argument` when several arguments measured a case in common otherwise: each argument is a
   source, named after its folder;
3. `label` when the runs carry different labels;
4. `host` when they ran on different hosts;
5. `run` when two runs measured a case in common (one host, no labels: the runs are compared),
   or there is one run (named after itself);
6. `host` otherwise: runs that measured different things merge into one source, so that
   `report A B C D` and `report PARENT` (holding exactly A, B, C and D) give the same report.

A case is a communication case without its size (COMM_CASE_COLUMNS) or a DDP configuration with
its strategy (DDP_MATCH_KEY). pandas only.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from distbench.collectors.schema import COMM_CASE_COLUMNS, DDP_MATCH_KEY, RESULTS_CSV
from distbench.reports.kinds import MATCH_KEYS
from distbench.reports.load import Loaded

SOURCES = ("auto", "label", "argument", "host", "run")
"""The --by choices."""
NO_LABEL = "unlabelled"
"""The source of runs without a --label (by label), or without a host (by host): it reads as a
name in the headline ("unlabelled and before-upgrade are one launch each")."""
NO_HOST = "unknown host"


def argument_names(paths: list[str]) -> list[str]:
    """'cluster-a', 'cluster-b': each argument's folder name (a results.csv argument: its run's),
    with as many parent folders as it takes to tell two folders apart (a/results, b/results)."""
    folders = [Path(p).resolve() for p in paths]
    parts = [(f.parent if f.name == RESULTS_CSV else f).parts for f in folders]
    names: dict[tuple[str, ...], str] = {}
    for depth in range(1, max(map(len, parts)) + 1):
        names = {p: "/".join(p[-depth:]) for p in set(parts)}
        if len(set(names.values())) == len(names):
            break
    return [names[p] for p in parts]


def shared_case(loaded: Loaded, owner: str) -> bool:
    """Whether one case was measured under two values of `owner` (argument or run)."""
    for frame, key in (
        (loaded.comm, COMM_CASE_COLUMNS),
        (loaded.ddp, DDP_MATCH_KEY),
        (loaded.pipeline, MATCH_KEYS["pipeline"]),
    ):
        if len(frame) and (frame.groupby(list(key), dropna=False)[owner].nunique() > 1).any():
            return True
    return False


def choose_by(loaded: Loaded, rows: pd.DataFrame) -> str:
    """--by auto (module docstring); `rows`: label, host, run and argument of every row."""
    if shared_case(loaded, "argument"):
        labels = [set(group) for _, group in rows.groupby("argument")["label"]]
        own = [next(iter(ls)) for ls in labels if len(ls) == 1 and "" not in ls]
        return "label" if len(own) == len(labels) == len(set(own)) else "argument"
    for column in ("label", "host"):
        if rows[column].nunique() > 1:
            return column
    one_run = rows["run"].nunique() == 1
    return "run" if one_run or shared_case(loaded, "run") else "host"


def source_of(rows: pd.DataFrame, by: str, arguments: list[str]) -> pd.Series:
    """Each row's source name under `by`."""
    if by == "run":
        return rows["run"].astype(str)
    if by == "argument":
        return rows["argument"].map(lambda i: arguments[int(i)]).astype(str)
    return rows[by].where(rows[by] != "", NO_LABEL if by == "label" else NO_HOST).astype(str)


def merged_labels(rows: pd.DataFrame, by: str) -> list[str]:
    """One line per source that merges runs of different labels (never merged in silence)."""
    if by == "label":
        return []
    notes = []
    for source, labels in rows.groupby("source", sort=False)["label"]:
        named = sorted({label or NO_LABEL for label in labels})
        if len(named) > 1:
            notes.append(
                f"--by {by} merges runs labelled {', '.join(named)} into one source, {source}: "
                "a case they share is shown once, from the run that started last "
                "(--by label compares them)"
            )
    return notes


def assign_sources(loaded: Loaded, by: str = "auto") -> str:
    """Add an ordered categorical `source` column to comm and ddp rows (the first source, by
    argument order, is the baseline); return what it was taken from. A note names every source
    that merges labels."""
    frames = [f for f in (loaded.comm, loaded.ddp, loaded.pipeline) if len(f)]
    both = pd.concat([f[["label", "host", "run", "argument"]] for f in frames], ignore_index=True)
    arguments = argument_names(loaded.arguments)
    if by == "auto":
        by = choose_by(loaded, both)
    both["source"] = source_of(both, by, arguments)
    order = both.sort_values("argument", kind="stable")["source"].drop_duplicates().tolist()
    for frame in (loaded.comm, loaded.ddp, loaded.pipeline):
        names = source_of(frame, by, arguments) if len(frame) else frame["run"]
        frame["source"] = pd.Categorical(names, categories=order, ordered=True)
    loaded.notes += merged_labels(both, by)
    return by
