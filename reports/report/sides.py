"""Each source of a report as a side of compare (reports/compare/sides.py): its launches, grouped
into nights, so that the report judges the launches compare would judge.

- a source that is one argument as given (`report A B`; `--by argument`; `--by label` with a label
  of its own per argument): `load_side(argument)`, what `distbench compare A B` reads: a run, a
  night of launch-N folders, or a baseline window;
- any other source (`--by label`, `host` or `run` over folders that mix them): its run
  directories; the launch-N folders of a night are that night's launches, and every other run
  directory of the source is read as one launch, as compare reads a folder of runs (a sweep's
  subdirectories; the run that started last wins a repeated row).

    sides = source_sides(loaded)      # source name -> Side, after sources.assign_sources
"""

from __future__ import annotations

from pathlib import Path

from distbench.reports.compare.sides import Launch, Side, launch_dirs, load_side
from distbench.reports.load import Loaded, RunData
from distbench.reports.repeats import run_order
from distbench.reports.report.launch_frames import night_of
from distbench.reports.runs import Run, load_run


def run_dirs(run: RunData) -> list[Path]:
    """The run directories behind one of the report's runs: a night's launch-N folders where the
    report drew the night as one run (reports/report/launch_frames.py), else the run's own."""
    return launch_dirs(Path(run.path)) or [Path(run.path)]


def runs_by_source(loaded: Loaded) -> dict[str, set[str]]:
    """Source -> the names of the runs that hold its rows (every kind of row)."""
    found: dict[str, set[str]] = {}
    for frame in (loaded.comm, loaded.ddp, loaded.pipeline):
        if len(frame) and "source" in frame:
            pairs = frame[["source", "run"]].astype(str).drop_duplicates()
            for source, run in pairs.itertuples(index=False):
                found.setdefault(source, set()).add(run)
    return found


def argument_of(source: str, by_source: dict[str, set[str]], loaded: Loaded) -> int | None:
    """The argument that is exactly this source: every run of the source comes from it, and no
    run of it holds another source's rows."""
    arguments = {run.argument for run in loaded.runs if run.name in by_source[source]}
    if len(arguments) != 1:
        return None
    (argument,) = arguments
    for other, runs in by_source.items():
        if other != source and any(
            run.argument == argument for run in loaded.runs if run.name in runs
        ):
            return None
    return argument


def merged_run(path: Path, dirs: list[Path]) -> Run:
    """Run directories read as one launch (reports/runs.py load_run's rule for a folder of runs:
    every row, the run that started last winning a repeated one)."""
    runs = sorted((load_run(d) for d in dirs), key=lambda r: run_order(r.manifest, r.path))
    merged = Run(
        path=path, manifest=runs[-1].manifest, schema_version=min(r.schema_version for r in runs)
    )
    for run in runs:
        for key, row in run.rows.items():
            merged.duplicates += key in merged.rows
            merged.rows[key] = row
    return merged


def built_side(source: str, dirs: list[Path]) -> Side:
    """A side from the run directories of a source that is no argument (module docstring)."""
    launches: list[Launch] = []
    plain: list[Path] = []
    for run_dir in sorted(dirs):
        found = night_of(run_dir)
        if found is None:
            plain.append(run_dir)
            continue
        night, number = found
        launches.append(Launch(f"{night}/launch-{number}", str(night), load_run(run_dir)))
    if plain:
        launches.append(Launch(source, source, merged_run(Path(source), plain)))
    nights = list(dict.fromkeys(launch.night for launch in launches))
    side = Side(Path(source), launches, nights)
    if len(launches) > 1:
        side.notes.append(f"{source}: {len(launches)} launches of {len(nights)} night(s)")
    return side


def argument_path(text: str) -> Path:
    """A report argument as compare takes it: a results.csv file stands for its run directory."""
    path = Path(text)
    return path.parent if path.is_file() else path


def source_sides(loaded: Loaded) -> dict[str, Side]:
    """Every source's side (module docstring), in the sources' order."""
    by_source = runs_by_source(loaded)
    by_name = {run.name: run for run in loaded.runs}
    frames = [f for f in (loaded.comm, loaded.ddp, loaded.pipeline) if len(f) and "source" in f]
    order = [str(s) for s in frames[0]["source"].cat.categories] if frames else []
    sides: dict[str, Side] = {}
    for source in (s for s in order if s in by_source):
        argument = argument_of(source, by_source, loaded)
        if argument is not None:
            sides[source] = load_side(argument_path(loaded.arguments[argument]))
            continue
        dirs = sorted({d for name in by_source[source] for d in run_dirs(by_name[name])})
        sides[source] = built_side(source, dirs)
    return sides
