"""A cache of history points keyed by run directory, in one DuckDB file: the run directories stay
the source of truth, and a run is read again (by the report's loader) whenever one of its
results.csv or manifest.json files changed size, modification time or change time (a launch's
included), or the points' definition changed (POINTS_VERSION).

    with PointCache.open(Path("~/.cache/distbench/history.duckdb")) as cache:
        infos, points = cache.load([Path("results/nightly-1"), ...])

A nightly history of 1,000 runs x 500 rows is read once; later runs of `history` read only the new
nights and query the rest in one statement (docs/performance.md has the figures).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from distbench.collectors.schema import MANIFEST_JSON, RESULTS_CSV, SCHEMA_VERSION
from distbench.parse import UsageError
from distbench.reports.history.load import RunInfo, empty_points, read_points
from distbench.stats.changepoint_null import NULL_VERSION, NullPool, columns, pool_for

POINTS_VERSION = 6
"""Bump when read_points' output changes meaning: every cached run is read again (2: the launches
of a night are pooled into one point, not the last launch's; 3: one series per case, the fastest
trial, with the night's launch count and spread; 4: a case is named by the size asked for, 64K
rather than the 65520 an all_gather at 3 ranks measures, so a cached night and a new one name
the same case alike; 5: a case's name leaves out the key's default values, load.QUIET_VALUES;
6: every time statistic of a case, load.STATS, which --metric chooses from)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (path VARCHAR PRIMARY KEY, fingerprint VARCHAR, name VARCHAR,
    started_utc VARCHAR, git_sha VARCHAR, schema_version INTEGER);
CREATE TABLE IF NOT EXISTS points (path VARCHAR, "case" VARCHAR, kind VARCHAR, key VARCHAR,
    metric VARCHAR, value DOUBLE, low DOUBLE, high DOUBLE, launches INTEGER, spread DOUBLE);
CREATE TABLE IF NOT EXISTS nulls (key VARCHAR PRIMARY KEY, stats BLOB, bins BLOB);
"""
COLUMNS = ("path", "case", "kind", "key", "metric", "value", "low", "high", "launches", "spread")
"""The points table's columns; a cache file whose table has others (an older distbench) is
emptied and filled again."""


def fingerprint(run_dir: Path) -> str:
    """Size, modification time and change time of every results.csv and manifest.json at or
    below the run (each launch's of a night), plus the versions the points depend on: any
    rewrite of the run gives another fingerprint. The change time (ctime) is the kernel's: a
    rewrite that keeps the size and puts the old modification time back (`cp -p`, `rsync -a`,
    `touch -r`; a status "completed" edited to "cancelled") still moves it."""
    parts = [f"points v{POINTS_VERSION} schema v{SCHEMA_VERSION}"]
    for root, _dirs, files in sorted(os.walk(run_dir)):
        for name in sorted(f for f in files if f in (RESULTS_CSV, MANIFEST_JSON)):
            stat = os.stat(os.path.join(root, name))
            times = f"{stat.st_mtime_ns}:{stat.st_ctime_ns}"
            parts.append(f"{os.path.relpath(root, run_dir)}/{name}:{stat.st_size}:{times}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def read_uncached(
    paths: list[Path], metrics: frozenset[str] | None = None
) -> tuple[list[RunInfo], pd.DataFrame]:
    """Every run read from disk (--cache off); `metrics`: the points of these metrics only."""
    infos, frames = [], []
    for path in paths:
        info, points = read_points(path)
        infos.append(info)
        if metrics is not None:
            points = points[points["metric"].isin(metrics)]
        frames.append(points.assign(path=info.path))
    return infos, as_categories(concat(frames))


LABELS = ("path", "case", "kind", "key", "metric")
"""Text columns with few distinct values among up to a million points: held as categories, so
grouping and writing them hash each distinct string once, not once per use (docs/performance.md)."""


def as_categories(points: pd.DataFrame) -> pd.DataFrame:
    return points.astype({column: "category" for column in LABELS})


def arrow_points(table: Any) -> pd.DataFrame:
    """The cache's points (a pyarrow Table) as as_categories makes them: the LABELS dictionary-
    encoded by Arrow and their categories sorted, so no Python string is made per point (a
    year of nights: half the memory and two thirds of the time of DuckDB's .df() and astype)."""
    import pyarrow as pa

    columns = {
        name: table[name].combine_chunks().dictionary_encode() if name in LABELS else table[name]
        for name in table.column_names
    }
    points = pa.table(columns).to_pandas()
    for column in LABELS:
        names = points[column].cat.categories
        points[column] = points[column].cat.reorder_categories(sorted(names))
    return points


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else empty_points().assign(path="")


class PointCache:
    """The DuckDB file and the two tables in SCHEMA."""

    def __init__(self, connection: Any) -> None:
        self.db = connection
        self.fingerprints: dict[Path, tuple[str, str]] = {}
        """Each run's resolved path and fingerprint, computed once in this process."""

    def fingerprint(self, path: Path) -> tuple[str, str]:
        """(the resolved path the cache keys on, the run's fingerprint)."""
        if path not in self.fingerprints:
            self.fingerprints[path] = (str(path.resolve()), fingerprint(path))
        return self.fingerprints[path]

    def unchanged(self, paths: list[Path]) -> frozenset[Path]:
        """The paths the cache holds with the same fingerprint (their manifests unchanged)."""
        cached = dict(self.db.execute("SELECT path, fingerprint FROM runs").fetchall())
        return frozenset(
            p for p in paths if cached.get((found := self.fingerprint(p))[0]) == found[1]
        )

    @staticmethod
    @contextmanager
    def open(path: Path) -> Iterator[PointCache]:
        import duckdb

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = duckdb.connect(str(path))
        except (OSError, duckdb.Error) as error:
            first = str(error).strip().splitlines()[0]
            raise UsageError(
                f"cannot open the history cache {path}: {first}; give --cache another file, "
                "or --cache off"
            ) from None
        try:
            found = [row[0] for row in connection.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'points' ORDER BY ordinal_position"
            ).fetchall()]  # fmt: skip
            if found and tuple(found) != COLUMNS:
                connection.execute("DROP TABLE points; DROP TABLE runs")
            connection.execute(SCHEMA)
            yield PointCache(connection)
        finally:
            connection.close()

    def load(
        self, paths: list[Path], metrics: frozenset[str] | None = None
    ) -> tuple[list[RunInfo], pd.DataFrame]:
        """The runs' facts and points: cached where the fingerprint matches, else read and
        stored (replacing the run's older entry, every statistic of it); `metrics`: the points
        of these metrics only, chosen in the query (a year of nights holds six statistics)."""
        db = self.db
        wanted = {(found := self.fingerprint(p))[0]: (p, found[1]) for p in paths}
        cached = dict(db.execute("SELECT path, fingerprint FROM runs").fetchall())
        stale = [key for key, (_, fp) in wanted.items() if cached.get(key) != fp]
        for key in stale:
            info, points = read_points(wanted[key][0])
            db.execute("DELETE FROM runs WHERE path = ?", [key])
            db.execute("DELETE FROM points WHERE path = ?", [key])
            row = {**asdict(info), "path": key}
            db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                [
                    key,
                    wanted[key][1],
                    row["name"],
                    row["started_utc"],
                    row["git_sha"],
                    row["schema_version"],
                ],
            )
            frame = points.assign(path=key)[list(COLUMNS)]
            db.register("new_points", frame)
            db.execute("INSERT INTO points SELECT * FROM new_points")
            db.unregister("new_points")
        keys = pd.DataFrame({"path": list(wanted)})
        db.register("wanted", keys)
        runs = db.execute("SELECT r.* FROM runs r JOIN wanted USING (path)").df()
        query = "SELECT p.* FROM points p JOIN wanted USING (path)"
        if metrics is not None:
            query += " WHERE p.metric IN (" + ", ".join("?" * len(metrics)) + ")"
        chosen = sorted(metrics) if metrics is not None else []
        points = arrow_points(db.sql(query, params=chosen).to_arrow_table())
        db.unregister("wanted")
        by_path = {r.path: r for r in runs.itertuples(index=False)}
        infos = [
            RunInfo(
                str(r.path), str(r.name), str(r.started_utc), str(r.git_sha), int(r.schema_version)
            )
            for r in (by_path[key] for key in wanted)
        ]
        return infos, points

    def null_pool(self, n: int, launches: bool) -> NullPool:
        """changepoint_null.pool_for's pool, kept in the file: a later history of the same
        length reads it instead of simulating it again (docs/performance.md)."""
        key = f"v{NULL_VERSION} n{n} launches{int(launches)}"
        row = self.db.execute("SELECT stats, bins FROM nulls WHERE key = ?", [key]).fetchone()
        if row is not None:
            stats = np.frombuffer(row[0], dtype=np.float32).reshape(-1, columns(n))
            return NullPool(n, launches, stats, np.frombuffer(row[1], dtype=np.int64))
        pool = pool_for(n, launches)
        self.db.execute(
            "INSERT OR REPLACE INTO nulls VALUES (?, ?, ?)",
            [key, pool.stats.tobytes(), pool.bins.astype(np.int64).tobytes()],
        )
        return pool
