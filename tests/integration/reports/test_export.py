"""`distbench export`: each format of a real gloo run (one 2-rank allreduce launch, the module
fixture) and of the checked-in runs under tests/data, read back by the format's reference reader or
checked ... The half that launches or runs for seconds; the in-process half, and the file's whole
story: tests/unit/reports/test_export.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli
from tests.unit.reports.test_export import (
    EXTENSION,
    WRITER_TREE,
    bmf_errors,
    exported,
    gab_errors,
    shape_errors,
)


# ---- the real run -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny 2-rank gloo allreduce launch, checked (--check: nwrong is a number)."""
    out = tmp_path_factory.mktemp("export") / "run"
    argv = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1K,16K"]
    done = run_cli(*argv, "--trials", "2", "--check", "--quiet", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def results_frame(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "results.csv")


@pytest.mark.slow
def test_nccl_tests_json_of_a_real_run_has_the_writers_shape_and_the_rows_numbers(
    real_run: Path,
) -> None:
    document = json.loads(exported(real_run, "nccl-tests-json"))
    assert shape_errors(document, WRITER_TREE) == []
    rows = results_frame(real_run).sort_values("size_bytes")
    results = document["results"]
    assert [r["size"] for r in results] == [1024, 16384]
    for result, row in zip(results, rows.itertuples(), strict=True):
        body = result["out_of_place"]
        assert result["in_place"] is None  # allreduce has one form (placement out)
        assert (result["count"], result["type"], result["redop"]) == (row.count, "float", "sum")
        assert result["root"] == "    -1" and result["actual_iterations"] == row.iters
        assert body["time"] == pytest.approx(row.time_us_mean)  # the statistic the page names
        assert body["alg_bw"] == pytest.approx(row.size_bytes / row.time_us_mean / 1e3)
        assert body["bus_bw"] == pytest.approx(body["alg_bw"] * row.busbw_factor)
        assert body["nwrong"] == 0.0
    buses = [r["out_of_place"]["bus_bw"] for r in results]
    assert document["average_bus_bandwidth"] == {"bandwidth": pytest.approx(sum(buses) / 2),
                                                 "okay": "unchecked"}  # fmt: skip
    assert document["out_of_bounds"] == {"count": 0, "okay": "true"}
    devices = document["config"]["devices"]
    assert [d["rank"] for d in devices] == [0, 1]  # from the manifest's rank facts
    assert {d["device_info"] for d in devices} == {"cpu"}
    assert document["config"]["validation"] == 1 and document["config"]["step_factor"] == 16
    assert "time_us_mean" in document[EXTENSION]["time"]


@pytest.mark.slow
def test_openmetrics_of_a_real_run_parses_with_prometheus_client(real_run: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    text = exported(real_run, "openmetrics")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    rows = results_frame(real_run).set_index("size_bytes")
    busbw = families["distbench_busbw_bytes_per_second"]
    assert busbw.type == "gauge" and busbw.unit == "bytes_per_second"
    for sample in busbw.samples:
        labels = sample.labels
        assert {"primitive", "size_bytes", "dtype", "world_size", "nnodes", "backend"} <= set(
            labels
        )
        assert {"op", "placement", "api", "mode"} <= set(labels)
        assert not any("run" in name for name in labels)  # no run id: series stay bounded
        assert (labels["primitive"], labels["backend"], labels["world_size"]) == (
            "all_reduce", "gloo", "2",
        )  # fmt: skip
        expected = rows.loc[int(labels["size_bytes"]), "busbw_GBps"] * 1e9
        assert sample.value == pytest.approx(expected)
        assert sample.timestamp is None
    p50 = families["distbench_time_p50_seconds"].samples
    assert sorted(s.value for s in p50) == pytest.approx(sorted(rows["time_us_p50"] * 1e-6))
    assert [s.value for s in families["distbench_wrong_elements"].samples] == [0.0, 0.0]
    manifest = json.loads((real_run / "manifest.json").read_text())
    ended = pd.Timestamp(manifest["ended_utc"]).timestamp()
    (stamp,) = families["distbench_run_end_timestamp_seconds"].samples
    assert stamp.value == pytest.approx(ended)

    stamped = exported(real_run, "openmetrics", sample_timestamps=True)
    for family in text_string_to_metric_families(stamped):
        assert all(float(s.timestamp) == pytest.approx(ended) for s in family.samples)


@pytest.mark.slow
def test_bmf_of_a_real_run_follows_the_bencher_schema(real_run: Path) -> None:
    document = json.loads(exported(real_run, "bmf"))
    assert bmf_errors(document) == []
    rows = results_frame(real_run).set_index("size_bytes")
    run_id = str(rows["run_id"].iloc[0])
    assert len(document) == 2
    for name, measures in document.items():
        size = 1024 if " 1K " in name else 16384
        assert measures["latency"]["value"] == pytest.approx(rows.loc[size, "time_us_p50"] * 1e3)
        assert measures["busbw-gbps"]["value"] == pytest.approx(rows.loc[size, "busbw_GBps"])
        assert run_id not in name.split()  # no run id: the same case lines up across runs


@pytest.mark.slow
def test_gab_of_a_real_run_is_a_custom_smaller_is_better_list(real_run: Path) -> None:
    entries = json.loads(exported(real_run, "gab"))
    assert gab_errors(entries) == []
    rows = results_frame(real_run).set_index("size_bytes")
    values = {1024 if " 1K " in e["name"] else 16384: e["value"] for e in entries}
    assert values == {s: pytest.approx(rows.loc[s, "time_us_p50"]) for s in (1024, 16384)}
    assert all(e["unit"] == "us" for e in entries)
