"""The history cache (reports/history/cache.py) in process: a night of two launches that the cache
holds is read again, or skipped as incomplete, when one launch's manifest or results change, even
when the rewrite keeps the file's size and puts its old modification time back; and the points
read from the cache are the same frame, categories in the same order, as the uncached reading.
The CLI's half (a cached run rewritten as interrupted, a night marked partial):
tests/integration/reports/test_history_cli.py."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.unit.reports.test_history import bench_history

NIGHTS = 3


@pytest.fixture()
def nights(tmp_path: Path) -> list[Path]:
    """3 nights of ci/nightly.sh --launches 2 (launch-1, launch-2), 4 rows each, cached."""
    from distbench.reports.history.build import skip_incomplete
    from distbench.reports.history.cache import PointCache

    bench_history().build_history(tmp_path / "runs", NIGHTS, 4, None, seed=1, launches=2)
    paths = sorted((tmp_path / "runs").glob("nightly-*"))
    with PointCache.open(tmp_path / "c.duckdb") as store:
        kept, skipped = skip_incomplete(paths, store.unchanged(paths))
        assert (len(kept), skipped) == (NIGHTS, [])
        store.load(kept)
    time.sleep(0.02)  # past the file clock's tick (a few ms): a rewrite gets another ctime
    return paths


def rewrite_keeping_size_and_mtime(path: Path, old: str, new: str) -> None:
    """`old` replaced by `new` (as long) in the file, its modification time put back."""
    assert len(old) == len(new)
    before = os.stat(path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def skipped_notes(cache: Path, paths: list[Path]) -> list[str]:
    from distbench.reports.history.build import skip_incomplete
    from distbench.reports.history.cache import PointCache

    with PointCache.open(cache) as store:
        return skip_incomplete(paths, store.unchanged(paths))[1]


def test_a_cached_launch_rewritten_as_interrupted_is_skipped(nights: list[Path]) -> None:
    """Runs the cache holds unchanged are not parsed again for their status; a launch's
    manifest rewritten as interrupted changes the night's fingerprint, so it is. Trusting the
    cache's runs (unchanged() returning every path) keeps the night and fails here."""
    manifest = nights[1] / "launch-2" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "interrupted"}))
    cache = nights[0].parent.parent / "c.duckdb"
    assert skipped_notes(cache, nights) == [f"{nights[1]} (status interrupted in launch-2)"]


def test_a_same_size_status_edit_with_its_old_mtime_is_seen(nights: list[Path]) -> None:
    """ "completed" -> "cancelled" (same size) with the modification time put back, as `cp -p`
    or `rsync -a` of an edited launch leave it: the change time still moves, and the night is
    skipped. A fingerprint of size and modification time alone (0.2.0's) misses it."""
    manifest = nights[2] / "launch-1" / "manifest.json"
    rewrite_keeping_size_and_mtime(manifest, '"completed"', '"cancelled"')
    cache = nights[0].parent.parent / "c.duckdb"
    assert skipped_notes(cache, nights) == [f"{nights[2]} (status cancelled in launch-1)"]


def test_a_same_size_results_edit_is_read_again(nights: list[Path]) -> None:
    """A launch's results.csv edited in place (a digit of its first row's time_us_min: same
    size, old modification time): the next load reads that night again and its point moves,
    and only its."""
    from distbench.reports.history.cache import PointCache

    results = nights[0] / "launch-1" / "results.csv"
    header, first, *_ = results.read_text().split("\n")
    cells = first.split(",")
    column = header.split(",").index("time_us_min")
    old = cells[column]
    cells[column] = str(old).replace(old[0], "1" if old[0] != "1" else "2", 1)
    cache = nights[0].parent.parent / "c.duckdb"
    with PointCache.open(cache) as store:
        before = store.load(nights)[1]
    rewrite_keeping_size_and_mtime(results, first, ",".join(cells))
    with PointCache.open(cache) as store:
        assert store.unchanged(nights) == frozenset(nights[1:])
        after = store.load(nights)[1]
    both = before.merge(after, on=["path", "key", "metric"], suffixes=("_before", "_after"))
    assert len(both) == len(before) == len(after)
    moved = both[both["value_before"] != both["value_after"]]
    assert list(moved["path"].astype(str)) == [str(nights[0].resolve())]


def test_cached_points_equal_the_uncached_reading(nights: list[Path]) -> None:
    """The points from the cache (Arrow's dictionary encoding) are read_uncached's frame: the
    same rows, dtypes, and categories in sorted order (the order judged_history sorts series
    by). Categories left in the order the cache returns them fail here."""
    from distbench.reports.history.cache import LABELS, PointCache, read_uncached

    with PointCache.open(nights[0].parent.parent / "c.duckdb") as store:
        infos, cached = store.load(nights)
    uncached_infos, uncached = read_uncached(nights)
    assert infos == uncached_infos
    order = ["path", "key", "metric"]
    cached = cached[list(uncached.columns)].sort_values(order).reset_index(drop=True)
    uncached = uncached.sort_values(order).reset_index(drop=True)
    for column in LABELS:
        names = list(cached[column].cat.categories)
        assert names == sorted(names), column
    pd.testing.assert_frame_equal(cached, uncached, check_dtype=False)


def test_arrow_points_are_as_categories_frame() -> None:
    """arrow_points on labels in no sorted order (as a join returns them) gives as_categories'
    frame: the same values, and each label's categories sorted as astype("category") sorts
    them. Left in the order Arrow meets them, sort_values by key would order series otherwise."""
    import pyarrow as pa

    from distbench.reports.history.cache import COLUMNS, arrow_points, as_categories

    frame = pd.DataFrame(
        {
            "path": ["/r/n2", "/r/n1", "/r/n2", "/r/n1"],
            "case": ["b 64K", "b 64K", "a 1K", "a 1K"],
            "kind": ["comm", "comm", "ddp", "ddp"],
            "key": ['{"s":"65536"}', '{"s":"65536"}', '{"s":"1024"}', '{"s":"1024"}'],
            "metric": ["time_us_min"] * 2 + ["step_time_us_min"] * 2,
            "value": [2.0, 1.0, 4.0, 3.0],
            "low": [2.0, 1.0, 4.0, 3.0],
            "high": [2.0, 1.0, 4.0, 3.0],
            "launches": pd.array([1, 1, 2, 2], dtype="int32"),
            "spread": [float("nan"), float("nan"), 0.5, 0.25],
        }
    )[list(COLUMNS)]
    got = arrow_points(pa.Table.from_pandas(frame, preserve_index=False))
    want = as_categories(frame)
    assert list(got["path"].cat.categories) == ["/r/n1", "/r/n2"]
    pd.testing.assert_frame_equal(got, want)
    assert list(got.sort_values("key")["value"]) == [4.0, 3.0, 2.0, 1.0]
