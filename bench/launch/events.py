"""What the ranks tell the CLI while a run measures, and how the CLI reads it (launch/progress.py
shows it): results.csv's new rows, and the progress log's `<unix time> begin <measurement>
<what>` and `<unix time> round k of N over M measurements` lines (groups.announce_measurements).
Torch-free: the CLI never imports torch."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from distbench.parse import format_size


def describe(measurement: str, what: str) -> str:
    """A begin line's `<what>` for people: `all_reduce float32 throughput size=1M world_size=2`
    (sizes with their suffix; the world size from the id `[tag]ws<N>/i<k>`)."""
    text = re.sub(r"\bsize=(\d+)\b", lambda m: f"size={format_size(int(m.group(1)))}", what)
    found = re.search(r"ws(\d+)/i\d+$", measurement)
    return f"{text} world_size={found.group(1)}" if found else text


def row_what(row: dict[str, str]) -> str:
    """A finished row whose measurement announced no begin line (init's repetitions): what it
    measured from its own cells, `init env:init_process_group world_size=3 (ws3/i3)`."""
    cells = [row.get(c, "") for c in ("primitive", "pattern", "strategy")]
    text = " ".join(c for c in cells if c)
    size = f" world_size={row['world_size']}" if row.get("world_size") else ""
    return f"{text}{size} ({row.get('measurement', '')})"


def part_of(measurement: str, primitive: str) -> tuple[str, str]:
    """The table a measurement belongs to: its launch's world size (with a sweep's backend tag)
    and its primitive; a DDP row's primitive is `ddp`."""
    return measurement.rsplit("/i", 1)[0], primitive


def row_size(row: dict[str, str]) -> int | None:
    """The size a results.csv row was asked for (requested_bytes, else size_bytes); None
    without one (DDP, init)."""
    for column in ("requested_bytes", "size_bytes"):
        text = row.get(column, "")
        if text and text.replace(".", "", 1).isdigit():
            return int(float(text))
    return None


@dataclass(frozen=True)
class Begin:
    """A measurement that started: `<unix time> begin <measurement> <primitive> <rest>`."""

    measurement: str
    what: str
    unix_s: float

    @property
    def part(self) -> tuple[str, str]:
        return part_of(self.measurement, self.what.split(" ", 1)[0])


@dataclass(frozen=True)
class Round:
    """A round of trials that started: `<unix time> round <k> of <N> over <M> measurements`."""

    number: int
    of: int
    measurements: int
    unix_s: float


ROUND = re.compile(r"(\d+(?:\.\d*)?) round (\d+) of (\d+) over (\d+) measurements$")


def parse_round(line: str) -> Round | None:
    found = ROUND.match(line.strip())
    if found is None:
        return None
    number, of, measurements = (int(found.group(i)) for i in (2, 3, 4))
    return Round(number, of, measurements, float(found.group(1)))


def parse_begin(line: str) -> Begin | None:
    fields = line.split(" ", 3)
    if len(fields) < 4 or fields[1] != "begin":
        return None
    try:
        return Begin(fields[2], fields[3].strip(), float(fields[0]))
    except ValueError:
        return None


class FileTail:
    """The whole lines appended to a file after a point (a line still being written waits)."""

    def __init__(self, path: Path, from_end: bool) -> None:
        self.path = path
        self.offset = path.stat().st_size if from_end and path.exists() else 0

    def read_lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        return data[:end].decode("utf-8", errors="replace").splitlines()


class RowTail:
    """results.csv rows appended after a point, as csv.DictReader reads them."""

    def __init__(self, path: Path) -> None:
        self.header: list[str] | None = None
        self.lines = FileTail(path, from_end=False)
        self.skip = True  # rows already there when the run (or the resume) started
        self.read()
        self.skip = False

    def read(self) -> list[dict[str, str]]:
        lines = self.lines.read_lines()
        if self.header is None and lines:
            self.header, lines = next(csv.reader(lines[:1])), lines[1:]
        if self.skip or self.header is None:
            return []
        return [dict(zip(self.header, values, strict=False)) for values in csv.reader(lines)]
