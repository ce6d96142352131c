"""The report's "What differs": only the manifest fields that differ between the runs compared,
per node with the node named, next to the performance comparison; and a warning for node-level
fields that differ within one run (collectors/nodefacts_diff.py does the comparing)."""

from __future__ import annotations

import pandas as pd

from distbench.collectors.nodefacts_diff import ABSENT, node_differences, scoped_fields
from distbench.reports.load import Loaded
from distbench.reports.render import Section, TableOut

MAX_ROWS = 200


def differs_frame(loaded: Loaded) -> pd.DataFrame:
    """scope, field, then one column per run: the rows whose values are not all equal."""
    runs = [run for run in loaded.runs if run.manifest]
    fields = {run.name: scoped_fields(run.manifest or {}) for run in runs}
    keys = sorted({key for f in fields.values() for key in f}, key=lambda k: (k[0] != "run", k))
    rows = []
    for scope, name in keys:
        values = [fields[run.name].get((scope, name), ABSENT) for run in runs]
        if len(set(values)) > 1:
            rows.append({"where": scope, "field": name, **dict(zip(fields, values, strict=True))})
    return pd.DataFrame(rows, columns=["where", "field", *fields])


def within_run_notes(loaded: Loaded) -> list[str]:
    notes = []
    for run in loaded.runs:
        for name, values in node_differences(run.manifest or {}):
            shown = "; ".join(f"{label}: {value}" for label, value in values.items())
            notes.append(f"warning: {run.name}: the nodes of one run differ in {name} ({shown})")
    return notes


def section_differs(loaded: Loaded, notes: list[str]) -> list[Section]:
    """The section when two or more runs have manifests, or a run's nodes differ; else none."""
    warnings = within_run_notes(loaded)
    notes += warnings
    tables = []
    if sum(1 for run in loaded.runs if run.manifest) > 1:
        frame = differs_frame(loaded)
        if len(frame) == 0:
            return [Section("What differs", "The manifests agree on every compared field.")]
        note = f"First {MAX_ROWS} of {len(frame)} rows." if len(frame) > MAX_ROWS else ""
        tables.append(TableOut("Manifest fields that differ", frame.head(MAX_ROWS), note=note))
    if not tables and not warnings:
        return []
    text = (
        "Only the manifest fields whose values differ: `run` rows are run-wide (software, "
        "environment), `node K` rows come from that node's own facts (GPUs, PCIe, NICs, "
        "firmware, environment). IDs, serials, times and paths are left out."
    )
    if warnings:
        text += " Within one run, nodes differ: " + " ".join(warnings)
    return [Section("What differs", text, tables=tables)]
