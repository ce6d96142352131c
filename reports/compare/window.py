"""Named baselines: a window of recent nights that compare judges a new night against.

    distbench baseline save results/nightly-20261129T0200Z --name nightly   # appends the night
    distbench compare nightly results/nightly-20261130T0200Z

The store is a folder (`--store DIR`, else $DISTBENCH_BASELINES, else `baselines/` in the current
directory). A baseline is `STORE/NAME/`:

    baseline.json              name, keep, and the nights in order (night, source, saved_utc)
    nights/NIGHT/...           each night as it was measured: results.csv, samples.csv (rank -1
                               rows only: the samples every reader uses, never per-rank ones),
                               manifest.json and spec.json, in launch-N folders for a night of
                               several launches, a sweep's subdirectories kept

`save` adds a night and keeps the newest `keep` by when they ran (the window's own keep, 14 for a
new one); a night it holds already changes nothing, and a folder holding launches it has (a
night's launch-1 after the night) is refused; `--force` replaces the whole window by this night.
A folder that is not one night is refused (`refuse_not_a_night`): a folder of runs two of which
measured the same case (runs repeated by hand, or several nights, would enter as one launch, the
last run's rows hiding the others'), launch-N folders that measured different cases, or runs
beside a night's launch-N folders (compare reads the launch-N folders only). A run, a night of
launch-N folders that repeat one sweep, and a folder of runs that each measured cases of their
own (a sweep made of several commands) are nights.
A night that did not complete (cut, failed) or was resumed is refused: it is not a draw of the
noise the window learns. A baseline saved before windows existed
(results.csv at STORE/NAME) reads as a window of one night and becomes one on its next save.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from distbench.collectors.manifest import read_manifest, utc_now
from distbench.collectors.rundir import NIGHT_STATE, read_night_state
from distbench.collectors.schema import MANIFEST_JSON, RESULTS_CSV, SAMPLES_CSV
from distbench.collectors.sink import count_rows
from distbench.parse import UsageError
from distbench.reports.compare.sides import (
    LAUNCH,
    NIGHTS_DIR,
    WINDOW_JSON,
    launch_dirs,
    launch_keys,
    window_nights,
)
from distbench.reports.compare.words import row_name
from distbench.reports.kinds import MATCH_KEYS, kind_of
from distbench.reports.load import read_results_text, schema_version_of
from distbench.reports.runs import find_results, load_run

STORE_ENV = "DISTBENCH_BASELINES"
DEFAULT_STORE = "baselines"
DEFAULT_KEEP = 14
"""Nights a window keeps: two weeks of nightly runs, enough for the noise of a row (its launch
variance from ~28 launches) without reaching back past most upgrades."""
COPIED = (RESULTS_CSV, MANIFEST_JSON, "spec.json")
"""Copied as they are; samples.csv is copied with its rank -1 rows only."""
NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


def resolve_store(store: str | None) -> Path:
    """--store, else $DISTBENCH_BASELINES, else ./baselines."""
    return Path(store or os.environ.get(STORE_ENV) or DEFAULT_STORE)


def parse_name(text: str) -> str:
    if not NAME_RE.fullmatch(text) or text in (".", ".."):
        raise UsageError(
            f"baseline name '{text}' is not allowed: use up to 64 letters, digits, '.', '_' or '-'"
        )
    return text


def parse_keep(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= 365:
        raise UsageError(f"--keep '{text}' must be a number of nights from 1 to 365, e.g. 14")
    return int(text)


def refuse_unfinished(run_dir: Path) -> None:
    """A night that did not complete or was resumed is no draw of the window's noise: by its
    runs' manifests, and by ci/nightly.sh's record of the night (NIGHT_STATE), which also knows
    a night cut between two launches, whose launches so far each completed."""
    values = read_night_state(run_dir)
    if values is not None:
        if values.get("status") != "complete":
            raise UsageError(
                f"{run_dir} is a partial night ({NIGHT_STATE}: status="
                f"{values.get('status', 'unknown')}): a cut night does not enter a baseline "
                f"window; ci/nightly.sh --resume {run_dir} finishes it"
            )
        if values.get("resumed", "0") not in ("0", ""):
            raise UsageError(
                f"{run_dir} was resumed ({NIGHT_STATE}: resumed=1): its launches ran at "
                "different times, so it is no draw of the noise a baseline window learns; save a "
                "night that ran in one go"
            )
    for results in find_results(run_dir):
        manifest = read_manifest(results.parent) or read_manifest(run_dir) or {}
        status = manifest.get("status", "completed")
        where = results.parent
        if status != "completed":
            raise UsageError(
                f"{where} is {status}, not completed: a cut or failed night does not enter a "
                "baseline window (finish it: ci/nightly.sh --resume NIGHT for a night, the "
                "command's --resume for a run; or save a complete night)"
            )
        if manifest.get("resumes"):
            raise UsageError(
                f"{where} was resumed: its launches ran at different times, so it is no draw of "
                "the noise a baseline window learns; save a night that ran in one go"
            )


Case = tuple[tuple[str, str], ...]
"""What a row measured: its kind and match key (reports/kinds.py MATCH_KEYS), as in runs.py."""


def cases_of(run_dir: Path, top: Path) -> list[Case]:
    """The cases one run directory's results.csv measured, in its order (`top`: the folder given,
    whose manifest stands for a run directory without one)."""
    version = schema_version_of(read_manifest(run_dir) or read_manifest(top))
    row_type, frame = read_results_text(run_dir, version)
    kind = kind_of(row_type)
    columns = MATCH_KEYS[kind]
    return [
        (("kind", kind), *((c, str(values[c])) for c in columns))
        for values in frame[list(columns)].to_dict("records")
    ]


def some(paths: list[Path], top: Path, most: int = 3) -> str:
    """'a, b and c', or 'a, b, c and 4 more': run directories named below `top`."""
    names = [str(p.relative_to(top)) for p in paths]
    if len(names) > most + 1:
        names = [*names[:most], f"{len(names) - most} more"]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def refuse_not_a_night(run_dir: Path, name: str) -> None:
    """A folder that is not one night's launches (module docstring) would enter the window as a
    night that never ran: one line naming what it holds and what to save instead."""
    if LAUNCH.fullmatch(run_dir.resolve().name):
        night = run_dir.resolve().parent
        raise UsageError(
            f"{run_dir} is one launch of the night {night}: a night's launches enter a window "
            f"together; save the night (distbench baseline save {night} --name {name})"
        )
    dirs = [results.parent for results in find_results(run_dir)]
    launches = launch_dirs(run_dir)
    each = f"save each run as a night of its own (distbench baseline save RUN_DIR --name {name})"
    if launches:
        beside = [d for d in dirs if not any(d.is_relative_to(folder) for folder in launches)]
        if beside:
            raise UsageError(
                f"{run_dir} is not one night: beside its launch-N folders it holds "
                f"{len(beside)} other run(s) ({some(beside, run_dir)}), which compare would not "
                f"read: save a folder of the night's launch-N folders only, and {each}"
            )
        first = set(cases_of_folder(launches[0], run_dir))
        for other in launches[1:]:
            theirs = set(cases_of_folder(other, run_dir))
            if theirs != first:
                apart = sorted(first ^ theirs)
                raise UsageError(
                    f"{run_dir} is not one night: {other.name} measured other cases than "
                    f"{launches[0].name} ({len(apart)} in one of them only, e.g. "
                    f"{row_name(dict(apart[0]))}), and a night's launch-N folders repeat one "
                    "sweep: run the night again, or save a folder of the launches that measured "
                    "the same cases (saved apart, each launch would be a night of its own, and "
                    "the window would see no nights' spread)"
                )
        return
    if len(dirs) < 2:
        return
    holders: dict[Case, list[Path]] = {}
    for run in dirs:
        for case in dict.fromkeys(cases_of(run, run_dir)):
            holders.setdefault(case, []).append(run)
    repeated = [(case, runs) for case, runs in holders.items() if len(runs) > 1]
    nights = sorted({d.parent for d in dirs if LAUNCH.fullmatch(d.name)})
    if repeated and nights:
        raise UsageError(
            f"{run_dir} is not one night: it holds the launch-N folders of {len(nights)} nights "
            f"({some(nights, run_dir)}): save each night's folder as a night of its own "
            f"(distbench baseline save NIGHT --name {name})"
        )
    if repeated:
        runs = sorted({run for _case, held in repeated for run in held})
        case, held = repeated[0]
        raise UsageError(
            f"{run_dir} is not one night: it holds {len(dirs)} runs, and {some(runs, run_dir)} "
            f"measured the same cases (e.g. {row_name(dict(case))} in {len(held)} of them), "
            f"so they would enter as one launch, the last one's rows hiding the others': {each}, "
            "or the directory of one night (its launches in NIGHT/launch-1 ... launch-N)"
        )


def cases_of_folder(folder: Path, top: Path) -> list[Case]:
    """The cases of every run directory in `folder` (a launch-N folder: usually one)."""
    return [case for results in find_results(folder) for case in cases_of(results.parent, top)]


def copy_rank_samples(source: Path, target: Path) -> None:
    """samples.csv with its header and the rank -1 rows (the maximum over ranks) only."""
    with source.open(newline="") as reader, target.open("w", newline="") as writer:
        rows = csv.reader(reader)
        out = csv.writer(writer, lineterminator="\n")
        header = next(rows, None)
        if header is None:
            return
        out.writerow(header)
        rank = header.index("rank") if "rank" in header else None
        for row in rows:
            if rank is None or (len(row) > rank and row[rank].strip() in ("-1", "-1.0")):
                out.writerow(row)


def copy_night(run_dir: Path, staging: Path) -> None:
    """A night's result files (module docstring) into `staging`, its layout kept."""
    for results in find_results(run_dir):
        relative = results.parent.relative_to(run_dir)
        (staging / relative).mkdir(parents=True, exist_ok=True)
        for name in COPIED:
            if (results.parent / name).exists():
                shutil.copy2(results.parent / name, staging / relative / name)
        if (results.parent / SAMPLES_CSV).exists():
            copy_rank_samples(results.parent / SAMPLES_CSV, staging / relative / SAMPLES_CSV)
    for folder in (run_dir, *launch_dirs(run_dir)):  # a night's and each launch's own manifest
        own = folder / MANIFEST_JSON
        relative = folder.relative_to(run_dir)
        if own.exists() and not (staging / relative / MANIFEST_JSON).exists():
            (staging / relative).mkdir(parents=True, exist_ok=True)
            shutil.copy2(own, staging / relative / MANIFEST_JSON)


def read_info(target: Path) -> dict:
    path = target / WINDOW_JSON
    return json.loads(path.read_text()) if path.exists() else {}


def write_info(target: Path, info: dict) -> None:
    temporary = target / f".{WINDOW_JSON}.new"
    temporary.write_text(json.dumps(info, indent=2) + "\n")
    temporary.replace(target / WINDOW_JSON)


def upgrade_single(target: Path) -> None:
    """A baseline of the single-run layout becomes a window of that one night."""
    if window_nights(target) is not None or not find_results(target):
        return
    info = read_info(target)
    night = Path(str(info.get("source", "night-1"))).name or "night-1"
    staging = target / f".{night}.moving"
    staging.mkdir()
    for child in list(target.iterdir()):
        if child.name not in (WINDOW_JSON, staging.name):
            child.rename(staging / child.name)
    (target / NIGHTS_DIR).mkdir()
    staging.rename(target / NIGHTS_DIR / night)
    entry = {
        "night": night,
        "source": info.get("source", "?"),
        "saved_utc": info.get("saved_utc", "?"),
    }
    write_info(target, {"name": target.name, "keep": DEFAULT_KEEP, "nights": [entry]})


def launch_ids(folder: Path) -> set[tuple[str, str, str]]:
    """What knows each launch of a night again (sides.launch_keys: its run id, start and host,
    and its results), all together."""
    keys: set[tuple[str, str, str]] = set()
    for results in find_results(folder):
        keys |= launch_keys(read_manifest(results.parent), results.parent)
    return keys


def started(folder: Path) -> str:
    """When a night's first launch started (UTC ISO text, which sorts by time); '' unknown."""
    manifests = (read_manifest(results.parent) or {} for results in find_results(folder))
    return min((str(m["started_utc"]) for m in manifests if m.get("started_utc")), default="")


def check_store(store: Path) -> None:
    if store.exists() and not store.is_dir():
        raise UsageError(
            f"baseline store {store} is a file, not a folder: give --store a folder (it is made "
            "if missing)"
        )


def save_night(
    run_dir: Path, name: str, store: Path, keep: int | None = None, force: bool = False
) -> tuple[Path, str]:
    """Append the night at `run_dir` to the window STORE/NAME (module docstring); the window's
    path and what happened, in words. `keep`: None keeps the window's own (DEFAULT_KEEP for a new
    one). The nights are kept in the order they ran; a night already in the window changes
    nothing (a retried CI step saves it again)."""
    name, run_dir = parse_name(name), Path(run_dir)
    check_store(store)
    if window_nights(run_dir) is not None:
        raise UsageError(f"{run_dir} is a baseline window itself: save a night's run directory")
    load_run(run_dir)  # refuses a missing, empty or foreign-schema run before anything is copied
    refuse_unfinished(run_dir)
    refuse_not_a_night(run_dir, name)
    target = store / name
    try:
        if force and target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True, exist_ok=True)
        upgrade_single(target)
        (target / NIGHTS_DIR).mkdir(exist_ok=True)
        info = read_info(target) or {"name": name, "nights": []}
        keep = keep or int(info.get("keep", DEFAULT_KEEP))
        night = run_dir.resolve().name
        if any(entry["night"] == night for entry in info["nights"]):
            if launch_ids(run_dir) != launch_ids(target / NIGHTS_DIR / night):
                raise UsageError(
                    f"baseline '{name}' holds another night named '{night}': a night enters by "
                    f"its folder's name; give {run_dir} a folder of its own name"
                )
            count = len(info["nights"])
            plural = "night" if count == 1 else "nights"
            return target, f"night '{night}' is in it already, nothing changed ({count} {plural})"
        refuse_launches_saved(run_dir, target, info)
        entry = {"night": night, "source": str(run_dir.resolve()), "saved_utc": utc_now()}
        entry["started_utc"] = started(run_dir)
        nights = sorted([*info["nights"], entry], key=lambda e: night_time(target, e))
        if len(nights) > keep and nights[0] is entry:
            raise UsageError(
                f"{run_dir} ran before every night of baseline '{name}', which keeps its newest "
                f"{keep}: it would be dropped at once (give --keep {len(nights)} to keep it)"
            )
        staging = target / f".{night}.saving"
        shutil.rmtree(staging, ignore_errors=True)
        copy_night(run_dir, staging)
        staging.rename(target / NIGHTS_DIR / night)  # never visible half-copied
        dropped = nights[:-keep]
        info["nights"], info["keep"] = nights[-keep:], keep
        write_info(target, info)
        for old in dropped:
            shutil.rmtree(target / NIGHTS_DIR / old["night"], ignore_errors=True)
    except OSError as error:
        raise UsageError(f"cannot save baseline '{name}' in {store}: {error}") from None
    count = len(info["nights"])
    gone = f"; dropped the oldest {len(dropped)}" if dropped else ""
    return target, f"{count} of {keep} nights kept{gone}"


def night_time(target: Path, entry: dict) -> str:
    """When a window's night ran (its entry's, else its saved launches'), else when it was saved:
    the window's order."""
    when = entry.get("started_utc") or started(target / NIGHTS_DIR / str(entry["night"]))
    saved = str(entry.get("saved_utc", ""))
    return str(when or (saved if saved != "?" else ""))  # unknown: the oldest


def refuse_launches_saved(run_dir: Path, target: Path, info: dict) -> None:
    """A folder whose launches a night of the window holds already (a night's launch-1 saved
    after the night) would count the same launches twice in the window's noise."""
    mine = launch_ids(run_dir)
    for entry in info["nights"]:
        if mine & launch_ids(target / NIGHTS_DIR / str(entry["night"])):
            raise UsageError(
                f"{run_dir} holds launches that baseline '{target.name}' has already, in night "
                f"'{entry['night']}': each launch enters a window once"
            )


def delete_baseline(name: str, store: Path) -> Path:
    """Remove STORE/NAME; refuse a name that is not a saved baseline (nothing is deleted)."""
    target = store / parse_name(name)
    if not target.is_dir():
        known = ", ".join(b.name for b in list_baselines(store)) or "none"
        raise UsageError(f"no baseline '{name}' in {store} (baselines: {known})")
    if not is_baseline(target):
        raise UsageError(
            f"{target} does not look like a baseline (no {WINDOW_JSON}, no {RESULTS_CSV}): "
            "not deleting it"
        )
    try:
        shutil.rmtree(target)
    except OSError as error:
        raise UsageError(f"cannot delete baseline '{name}' in {store}: {error}") from None
    return target


@dataclass(frozen=True)
class Baseline:
    name: str
    path: Path
    nights: int
    keep: int
    first: str
    last: str
    """The oldest and newest night's names."""
    rows: int
    """results.csv rows of the newest night."""
    host: str
    torch: str


def read_baseline(path: Path) -> Baseline:
    nights = window_nights(path)
    info = read_info(path)
    newest = path / NIGHTS_DIR / nights[-1] if nights else path
    results = find_results(newest)
    manifest = read_manifest(results[0].parent) if results else None
    manifest = manifest or read_manifest(newest) or {}
    names = nights or [Path(str(info.get("source", path.name))).name]
    return Baseline(
        name=path.name, path=path, nights=len(names), keep=int(info.get("keep", DEFAULT_KEEP)),
        first=names[0], last=names[-1], rows=sum(count_rows(p) for p in results),
        host=str(manifest.get("host", "?")), torch=str(manifest.get("torch", "?")),
    )  # fmt: skip


def is_baseline(path: Path) -> bool:
    """A window, or a baseline of the single-run layout: what delete_baseline would remove."""
    return path.is_dir() and ((path / WINDOW_JSON).exists() or bool(find_results(path)))


def list_baselines(store: Path) -> list[Baseline]:
    check_store(store)
    if not store.is_dir():
        return []
    return [
        read_baseline(path)
        for path in sorted(store.iterdir())
        if not path.name.startswith(".") and is_baseline(path)
    ]


def resolve_run(text: str, store: Path) -> Path:
    """A run directory, else the baseline of that name; UsageError naming both places."""
    path = Path(text)
    if path.is_dir():
        return path
    named = store / text
    if NAME_RE.fullmatch(text) and named.is_dir():
        return named
    known = ", ".join(b.name for b in list_baselines(store)) or "none"
    raise UsageError(
        f"'{text}' is neither a run directory nor a baseline in {store} (baselines: {known})"
    )
