"""What one side of a comparison is: launches, grouped into nights.

- a run directory (results.csv itself, or a sweep's subdirectories): one night of one launch;
- a night (ci/nightly.sh --launches N: NIGHT/launch-1 ... launch-N): one night of N launches;
- a baseline window (distbench baseline save, reports/compare/window.py): its saved nights, each
  as above; a baseline saved before windows existed is a window of one night.

Between runs the launch is the unit (distbench.stats): a side keeps every launch apart, and the
statistics see how far launches scatter instead of pooling their trials.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from distbench.collectors.manifest import read_manifest
from distbench.parse import UsageError
from distbench.reports.runs import Run, find_results, load_run

LAUNCH = re.compile(r"launch-(\d+)")
"""The name of one launch's folder inside a night (ci/nightly.sh)."""
WINDOW_JSON = "baseline.json"
NIGHTS_DIR = "nights"


@dataclass(frozen=True)
class Launch:
    name: str
    """Unique within its side: NIGHT/launch-N, or NIGHT for a night of one launch."""
    night: str
    run: Run


@dataclass
class Side:
    """One side of a comparison."""

    path: Path
    launches: list[Launch]
    nights: list[str]
    """In the order they were measured (a window's oldest first)."""
    window: bool = False
    """A baseline window (else a run or a night)."""
    notes: list[str] = field(default_factory=list)

    @property
    def last(self) -> Run:
        return self.launches[-1].run

    @property
    def manifest(self) -> dict[str, Any]:
        return self.last.manifest


def launch_folders(path: Path) -> list[Path]:
    """Every launch-N folder of a night, in number order ([] for a run)."""
    if not path.is_dir() or (path / "results.csv").exists():
        return []
    found = [
        (int(match.group(1)), child)
        for child in path.iterdir()
        if child.is_dir() and (match := LAUNCH.fullmatch(child.name))
    ]
    return [child for _number, child in sorted(found)]


def launch_dirs(path: Path) -> list[Path]:
    """The launch-N folders of a night that hold results, in number order ([] for a run)."""
    return [child for child in launch_folders(path) if find_results(child)]


def night_launches(path: Path, night: str) -> list[Launch]:
    """A night's launches: its launch-N folders, else the run itself as one launch."""
    dirs = launch_dirs(path)
    if not dirs:
        return [Launch(night, night, load_run(path))]
    return [Launch(f"{night}/{d.name}", night, load_run(d)) for d in dirs]


def window_nights(path: Path) -> list[str] | None:
    """A window's nights, oldest first; None when `path` is no window (a plain run or night)."""
    info = path / WINDOW_JSON
    if not (path / NIGHTS_DIR).is_dir() or not info.exists():
        return None
    nights = json.loads(info.read_text()).get("nights", [])
    return [str(n["night"]) for n in nights if (path / NIGHTS_DIR / str(n["night"])).is_dir()]


def load_side(path: Path) -> Side:
    """Read one side (module docstring); UsageError (reports/runs.py) for a missing, empty or
    damaged run."""
    path = Path(path)
    nights = window_nights(path)
    if nights:
        launches = [
            launch
            for night in nights
            for launch in night_launches(path / NIGHTS_DIR / night, night)
        ]
        return Side(path, launches, nights, window=True)
    launches = night_launches(path, path.name)
    side = Side(path, launches, [path.name])
    if len(launches) > 1:
        side.notes.append(
            f"{path}: one night of {len(launches)} launches "
            f"({', '.join(launch.name.split('/')[-1] for launch in launches)})"
        )
    side.notes += unfinished(path, launches)
    return side


def unfinished(path: Path, launches: list[Launch]) -> list[str]:
    """A note for each launch that did not complete (cut, failed): its finished rows are judged,
    and rows it never reached count as missing."""
    notes = []
    for launch in launches:
        status = (launch.run.manifest or {}).get("status", "completed")
        where = path / launch.name.split("/", 1)[1] if "/" in launch.name else path
        if status == "wrong_results":
            notes.append(f"{where}: --check found wrong elements in its rows: they are judged")
        elif status != "completed":
            notes.append(
                f"{where} is {status}, not completed: its finished rows are judged, the rest "
                "are missing"
            )
    return notes + rowless(path)


def rowless(path: Path) -> list[str]:
    """A note for each launch-N folder of a night that holds no results.csv (a launch cut before
    its first row, or never started): the night has fewer launches than it ran."""
    notes = []
    for child in launch_folders(path):
        if find_results(child):
            continue
        try:
            status = (read_manifest(child) or {}).get("status", "without a manifest")
        except UsageError:
            status = "an unreadable manifest"
        notes.append(f"{child}: no rows ({status}): this night is judged without that launch")
    return notes


def launch_keys(manifest: dict[str, Any] | None, folder: Path) -> set[tuple[str, str, str]]:
    """What knows a launch again: (run id, start, host) from its manifest (a nightly names its
    launches launch-1 ... every night, so the id alone names none), and the contents of its
    results.csv files (a copy kept in a baseline window is byte for byte the same; a manifest
    lost or hand-made has no start). A folder without results.csv (the report's side of several
    run directories read as one launch, reports/report/sides.py merged_run, is named after its
    source, not a folder) has no contents to know it by: the digest of nothing would make every
    such launch the same launch, and two labels of one folder "a run against itself"."""
    manifest = manifest or {}
    keys: set[tuple[str, str, str]] = set()
    found = find_results(folder)
    if found:
        digest = hashlib.sha1(usedforsecurity=False)
        for results in found:
            digest.update(results.read_bytes())
        keys.add(("results", digest.hexdigest(), ""))
    if manifest.get("started_utc"):
        keys.add(
            (str(manifest.get("run_id")), str(manifest["started_utc"]), str(manifest.get("host")))
        )
    return keys


def run_identities(run: Run) -> list[set[tuple[str, str, str]]]:
    """launch_keys of each run directory of a loaded launch: a folder of runs read as one launch
    (a sweep's subdirectories) is known again by any one of its runs, so that a run of it given
    on its own is found in it; a launch that is no folder (reports/report/sides.py merged_run)
    by its manifest."""
    found = find_results(run.path) if run.path.is_dir() else []
    if len(found) < 2:
        return [launch_keys(run.manifest, run.path)]
    return [
        launch_keys(read_manifest(results.parent) or run.manifest, results.parent)
        for results in found
    ]


def launch_identity(run: Run) -> set[tuple[str, str, str]]:
    """What knows a loaded launch again: the launch_keys of each of its run directories."""
    return set().union(*run_identities(run))


def set_apart(baseline: Side, current: Side) -> Side:
    """The baseline without the nights that hold any of the current side's launches, with a note:
    a night judged against a window that holds it (a CI step retried after --update-baseline
    saved it), or against a window one of whose nights it is part of (a run of a sweep folder
    saved as a night), is judged partly against itself and looks unchanged. A baseline that is
    the same launches as the current side is kept, and said to be so; one the current side is
    part of, or holds part of, likewise."""
    mine = set().union(*(launch_identity(launch.run) for launch in current.launches))
    held = {launch.night for launch in baseline.launches if launch_identity(launch.run) & mine}
    if not held:
        return baseline
    how = overlap(baseline, current, held)
    if not baseline.window or set(baseline.nights) == held:
        if how == "is":
            note = (
                f"{baseline.path} and {current.path} hold the same launches: a run against itself"
            )
        else:
            where = (
                f"night {', '.join(sorted(held))} of baseline {baseline.path.name}, the only "
                "night(s) it holds"
                if baseline.window
                else str(baseline.path)
            )
            note = (
                f"{current.path} {how} {where}: the runs they share are judged against themselves"
            )
        return replace(baseline, notes=[*baseline.notes, note])
    kept = [launch for launch in baseline.launches if launch.night not in held]
    nights = [night for night in baseline.nights if night not in held]
    note = (
        f"{current.path} {how} night {', '.join(sorted(held))} of baseline "
        f"{baseline.path.name}: judged against its other {len(nights)} night(s)"
    )
    return replace(baseline, launches=kept, nights=nights, notes=[*baseline.notes, note])


def overlap(baseline: Side, current: Side, held: set[str]) -> str:
    """How the current side's runs stand to those of the baseline's nights `held`: 'is' (the
    same runs), 'is part of', 'holds' (all of them and more) or 'shares runs with'."""
    mine = [keys for launch in current.launches for keys in run_identities(launch.run)]
    theirs = [
        keys
        for launch in baseline.launches
        if launch.night in held
        for keys in run_identities(launch.run)
    ]
    inside = all(any(keys & other for other in theirs) for keys in mine)
    whole = all(any(keys & other for other in mine) for keys in theirs)
    if inside and whole:
        return "is"
    return "is part of" if inside else "holds" if whole else "shares runs with"
