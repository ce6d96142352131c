"""Where a report goes, and which files in it are the report's: OUT never lies inside an input
folder, and a report replaces only the files it wrote itself.

    check_out(target)                      # before drawing: refuse a file, a foreign report.md
    prepare_out(target)                    # remove what the previous report listed
    record_outputs(target, ["report.html", "report.md", "fig-scaling.png"])

Each report leaves OUT/.distbench-report.json, the list of the files it wrote. The next report into
OUT removes those files and no others: a user's fig-paper-draft.png next to them survives. A
folder with that list (or a report.md that distbench wrote before the list existed) is a report
folder, which the run-directory scan skips.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from distbench.collectors.schema import RESULTS_CSV
from distbench.parse import UsageError

REPORT_LIST = ".distbench-report.json"
"""The report folder's list of the files its report wrote."""
PAGES = ("report.html", "report.md")
MARKDOWN_TITLE = "# distbench report"
"""report.md's first line: how a report written before REPORT_LIST existed is recognised."""
OWN_NAME = re.compile(r"(report\.html|report\.md|fig-[\w.-]+\.png)")
"""The only names a report writes; a list naming anything else is not trusted with it."""


def legacy_names(out: Path) -> list[str] | None:
    """The files an older report (no REPORT_LIST) wrote: its pages and the figures its report.md
    names; None when OUT holds no report.md of distbench."""
    try:
        text = (out / "report.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith(MARKDOWN_TITLE):
        return None
    figures = sorted(set(re.findall(r"fig-[\w.-]+\.png", text)))
    return [name for name in (*PAGES, *figures) if OWN_NAME.fullmatch(name)]


def listed_names(out: Path) -> list[str] | None:
    """The names OUT's REPORT_LIST holds (None without one): plain names of report files only."""
    try:
        data = json.loads((out / REPORT_LIST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return None
    return [str(name) for name in files if OWN_NAME.fullmatch(str(name))]


def report_names(out: Path) -> list[str] | None:
    """What the report already in OUT wrote, or None when OUT holds no distbench report."""
    listed = listed_names(out)
    return listed if listed is not None else legacy_names(out)


def is_report_dir(path: Path) -> bool:
    """A folder a distbench report wrote (and no run directory itself)."""
    return path.is_dir() and not (path / RESULTS_CSV).exists() and report_names(path) is not None


def inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def default_out(paths: list[str]) -> Path:
    """Never inside an input folder: next to the one argument (RUN_DIR-report), ./report for
    several unless that lies inside one of them, then next to the first argument it does not."""
    inputs = [Path(p).resolve() for p in paths]
    inputs = [p.parent if p.is_file() else p for p in inputs]
    candidates = [] if len(paths) == 1 else [Path("report")]
    candidates += [p.parent / f"{p.name}-report" for p in inputs]
    for candidate in candidates:
        if not any(inside(candidate.resolve(), folder) for folder in inputs):
            return candidate
    raise UsageError(
        "every default report folder lies inside an input folder: give --out DIR outside them"
    )


def check_out(out: Path) -> None:
    """Refuse OUT before minutes of drawing: a file, or pages the report did not write."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: give a directory for the report")
    if not out.is_dir():
        return
    ours = report_names(out) or []
    foreign = [name for name in PAGES if (out / name).exists() and name not in ours]
    if foreign:
        raise UsageError(
            f"--out {out} holds {' and '.join(foreign)} that no distbench report wrote: "
            "give another --out, or move the file(s)"
        )


def prepare_out(out: Path) -> Path:
    """Create OUT, or remove the files the previous report in it listed (and nothing else)."""
    check_out(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in report_names(out) or []:
            (out / name).unlink(missing_ok=True)
    except OSError as error:
        raise UsageError(f"cannot write the report to {out}: {error.strerror}") from None
    return out


def record_outputs(out: Path, names: list[str]) -> Path:
    """Write OUT/REPORT_LIST: the files this report wrote, for the next report to replace."""
    path = out / REPORT_LIST
    path.write_text(json.dumps({"files": sorted(names)}, indent=1) + "\n", encoding="utf-8")
    return path
