"""distbench report on the checked-in fixture runs (tests/data): the page, the Markdown, a real
headless Chromium screenshot, and every kind of bad input (one line, exit 2, no traceback)."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from distbench.cli.app import run_cli as run_in_process
from tests.paths import DATA

CLUSTERS = [DATA / "cluster-a", DATA / "cluster-b"]
FIGURES = {
    "fig-compare.png",
    "fig-time-vs-size.png",
    "fig-busbw-vs-size.png",
    "fig-scaling.png",
    "fig-fit.png",
    "fig-sendrecv-pairs.png",
    "fig-ddp-scaling.png",
    "fig-ddp-strategies.png",
}


class PageParser(HTMLParser):
    """Images, table captions, and every attribute that could fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.captions: list[str] = []
        self.tables = 0
        self.fetches: list[str] = []
        self.tags: set[str] = set()
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        if tag == "img":
            self.images.append(values.get("src") or "")
        if tag == "table":
            self.tables += 1
        if tag == "caption":
            self._in_caption = True
            self.captions.append("")
        for name in ("src", "href", "srcset", "poster", "data"):
            value = values.get(name)
            if value is not None and not value.startswith("data:"):
                self.fetches.append(f"{tag} {name}={value}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "caption":
            self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._in_caption:
            self.captions[-1] += data


def copy_run(tmp_path: Path, name: str = "allreduce", cluster: str = "cluster-a") -> Path:
    run = tmp_path / f"{cluster}-{name}"
    shutil.copytree(DATA / cluster / name, run)
    return run


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])


def shorten_last_line(path: Path) -> None:
    lines = path.read_text().splitlines()
    lines[-1] = ",".join(lines[-1].split(",")[:10])
    path.write_text("\n".join(lines) + "\n")


def set_schema_version(path: Path) -> None:
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 99
    path.write_text(json.dumps(manifest))


BAD = {
    "missing": (lambda run: shutil.rmtree(run), "does not exist"),
    "empty": (lambda run: (run / "results.csv").write_text(""), "results.csv is empty"),
    "header only": (
        lambda run: (run / "results.csv").write_text(
            (run / "results.csv").read_text().splitlines()[0] + "\n"
        ),
        "nothing to report",
    ),
    "truncated": (lambda run: truncate(run / "results.csv"), "results.csv is truncated"),
    "short line": (
        lambda run: shorten_last_line(run / "results.csv"),
        "results.csv is truncated or damaged: line 21 has too few fields",
    ),
    "truncated samples": (lambda run: truncate(run / "samples.csv"), "samples.csv is truncated"),
    "foreign": (
        lambda run: (run / "results.csv").write_text("a,b,c\n1,2,3\n"),
        "is not a distbench results.csv",
    ),
    "not a number": (
        lambda run: (run / "results.csv").write_text(
            (run / "results.csv")
            .read_text()
            .replace(",throughput,", ",throughput,", 1)
            .replace("perf_counter,5,2,5,5,", "perf_counter,5,2,5,five,", 1)
        ),
        "column samples holds 'five', not a number",
    ),
    "schema version": (
        lambda run: set_schema_version(run / "manifest.json"),
        "written by a newer distbench (schema v99)",
    ),
    "bad manifest": (
        lambda run: (run / "manifest.json").write_text("{not json"),
        "manifest.json is not readable JSON",
    ),
    "no run inside": (
        lambda run: (run / "results.csv").rename(run / "other.csv"),
        "holds no run: no results.csv",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_run(tmp_path)
    damage, message = BAD[case]
    damage(run)
    code = run_in_process(["report", str(run), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("distbench: error: "), err
    assert message in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--by", "rack"], "unknown --by 'rack'"), ([], "is a file: give a directory")],
)
def test_bad_options(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.write_text("a file")
    code = run_in_process(["report", str(DATA / "cluster-a"), "--out", str(out), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
