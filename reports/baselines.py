"""Named baselines: a pinned copy of a run's results, samples and manifest that nightly jobs
compare against.

The store is a folder (`--store DIR`, else $DISTBENCH_BASELINES, else `baselines/` in the current
directory); each baseline is `STORE/NAME/` holding the run's results.csv, samples.csv,
manifest.json and spec.json (a sweep's subdirectories keep their layout) plus `baseline.json`
(name, source path, when it was saved). Saving over an existing name needs --force;
`baseline delete NAME` removes one (only a folder that holds a baseline, never anything else).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from distbench.collectors.manifest import utc_now
from distbench.collectors.schema import MANIFEST_JSON, RESULTS_CSV, SAMPLES_CSV
from distbench.collectors.sink import count_rows
from distbench.parse import UsageError
from distbench.reports.runs import find_results, load_run, read_manifest_file
from distbench.tables import render_rows

STORE_ENV = "DISTBENCH_BASELINES"
DEFAULT_STORE = "baselines"
INFO_JSON = "baseline.json"
COPIED = (RESULTS_CSV, SAMPLES_CSV, MANIFEST_JSON, "spec.json")


def resolve_store(store: str | None) -> Path:
    """--store, else $DISTBENCH_BASELINES, else ./baselines."""
    return Path(store or os.environ.get(STORE_ENV) or DEFAULT_STORE)


def parse_name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", text) or text in (".", ".."):
        raise UsageError(
            f"baseline name '{text}' is not allowed: use up to 64 letters, digits, '.', '_' or '-'"
        )
    return text


@dataclass(frozen=True)
class Baseline:
    name: str
    path: Path
    saved_utc: str
    source: str
    rows: int
    run_id: str
    host: str
    torch: str
    git_sha: str


def save_baseline(run_dir: Path, name: str, store: Path, force: bool = False) -> Path:
    """Copy a run's result files to STORE/NAME; refuse an existing name unless force."""
    name = parse_name(name)
    run_dir = Path(run_dir)
    load_run(run_dir)  # refuses a missing, empty or foreign-schema run before anything is copied
    target = store / name
    if target.exists():
        if not force:
            raise UsageError(
                f"baseline '{name}' already exists in {store}: pass --force to replace it"
            )
        shutil.rmtree(target)
    staging = store / f".{name}.saving"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        for results in find_results(run_dir):
            relative = results.parent.relative_to(run_dir)
            for file_name in COPIED:
                source = results.parent / file_name
                if source.exists():
                    (staging / relative).mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, staging / relative / file_name)
        top_manifest = run_dir / MANIFEST_JSON
        if top_manifest.exists() and not (staging / MANIFEST_JSON).exists():
            shutil.copy2(top_manifest, staging / MANIFEST_JSON)
        info = {"name": name, "source": str(run_dir.resolve()), "saved_utc": utc_now()}
        (staging / INFO_JSON).write_text(json.dumps(info, indent=2) + "\n")
        staging.rename(target)  # a half-copied baseline is never visible under its name
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise UsageError(f"cannot save baseline '{name}' in {store}: {error}") from None
    return target


def delete_baseline(name: str, store: Path) -> Path:
    """Remove STORE/NAME; refuse a name that is not a saved baseline (nothing is deleted)."""
    target = store / parse_name(name)
    if not target.is_dir():
        known = ", ".join(b.name for b in list_baselines(store)) or "none"
        raise UsageError(f"no baseline '{name}' in {store} (baselines: {known})")
    if not (target / INFO_JSON).exists() and not find_results(target):
        raise UsageError(
            f"{target} does not look like a baseline (no {INFO_JSON}, no {RESULTS_CSV}): "
            "not deleting it"
        )
    try:
        shutil.rmtree(target)
    except OSError as error:
        raise UsageError(f"cannot delete baseline '{name}' in {store}: {error}") from None
    return target


def read_baseline(path: Path) -> Baseline:
    info_path = path / INFO_JSON
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    results = find_results(path)
    manifest_path = path / MANIFEST_JSON
    if not manifest_path.exists() and results:
        manifest_path = results[0].parent / MANIFEST_JSON
    manifest = read_manifest_file(manifest_path) if manifest_path.exists() else {}
    return Baseline(
        name=path.name,
        path=path,
        saved_utc=str(info.get("saved_utc", "?")),
        source=str(info.get("source", "?")),
        rows=sum(count_rows(p) for p in results),
        run_id=str(manifest.get("run_id", "?")),
        host=str(manifest.get("host", "?")),
        torch=str(manifest.get("torch", "?")),
        git_sha=str(manifest.get("distbench_git_sha") or "?")[:10],
    )


def list_baselines(store: Path) -> list[Baseline]:
    if not store.is_dir():
        return []
    return [
        read_baseline(path)
        for path in sorted(store.iterdir())
        if path.is_dir() and not path.name.startswith(".")
    ]


def render_baselines(store: Path, baselines: list[Baseline]) -> str:
    if not baselines:
        return f"no baselines in {store} (save one: distbench baseline save RUN_DIR --name NAME)"
    header = ("name", "saved_utc", "rows", "run_id", "host", "torch", "git")
    lines = [
        (b.name, b.saved_utc, str(b.rows), b.run_id, b.host, b.torch, b.git_sha) for b in baselines
    ]
    return "\n".join([f"baselines in {store}:", *render_rows(header, lines, numeric=("rows",))])


def resolve_run(text: str, store: Path) -> Path:
    """A run directory, else the baseline of that name; UsageError naming both places."""
    path = Path(text)
    if path.is_dir():
        return path
    named = store / text
    if re.fullmatch(r"[A-Za-z0-9._-]{1,64}", text) and named.is_dir():
        return named
    known = ", ".join(b.name for b in list_baselines(store)) or "none"
    raise UsageError(
        f"'{text}' is neither a run directory nor a baseline in {store} (baselines: {known})"
    )
