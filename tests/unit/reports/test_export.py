"""`distbench export`: each format of a real gloo run (one 2-rank allreduce launch, the module
fixture) and of the checked-in runs under tests/data, read back by the format's reference reader
or checked against its documented schema; the nccl-tests JSON against a key tree built from
nccl-tests' own writer, field by field, and a mutation of the export must fail that check."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from distbench.reports.export import FORMATS, RENDERERS, export_run
from distbench.reports.export import nccl_tests as nccl_module
from distbench.reports.export.rows import load_export_run
from tests.conftest import usage_error_line
from tests.paths import DATA, ROOT

DOCS = ROOT / "docs" / "exports.md"

# ---- nccl-tests' JSON writer, key by key -------------------------------------------------------
# NVIDIA/nccl-tests src/util.cu at a0b82b2 (NCCL_TESTS_VERSION 2.19.6), JSON_FILE_VERSION 3 (line
# 52). Keys in the order the writer emits them; a value is the Python type json.loads gives for
# what it writes: jsonInt/jsonSize_t -> int, jsonDouble -> float (lines 290-297), jsonStr -> str,
# and jsonBool writes a *string* "true"/"false" (lines 273-275).
DEVICE = {  # jsonRankInfo, lines 440-450
    "rank": int,
    "group": int,
    "pid": int,
    "hostname": str,
    "device": int,
    "device_hex": str,
    "device_info": str,
}
BODY = {  # writeBenchmarkLineBody, lines 516-522 (report_cputime off: "time")
    "time": float,
    "alg_bw": float,
    "bus_bw": float,
    "nwrong": float,  # jsonDouble((double)wrongElts), null without -c (line 521)
}
RESULT = {
    # writeBenchmarkLinePreamble, lines 460-466
    "size": int,
    "count": int,
    "type": str,
    "redop": str,
    "root": str,  # sprintf "%6i" (line 457)
    # writeBenchmarkLineBody twice (common.cu BenchTime: out of place first), or null (line 483)
    "out_of_place": BODY,
    "in_place": BODY,
    # writeBenchmarkLineTerminator, lines 473-475
    "actual_iterations": int,
    "experiment_name": str,
}
WRITER_TREE: dict[str, Any] = {
    # jsonOutputInit, lines 354-378
    "version": int,
    "start_time": str,
    "args": [str],
    "env": [str],
    "nccl_version": int,
    # writeDeviceReport, lines 642-665 and 723-732 (devices inside config: closed at line 731)
    "config": {
        "nthreads": int,
        "ngpus": int,
        "minimum_bytes": int,
        "maximum_bytes": int,
        "step_factor": int,  # or "step_bytes" (lines 649-654): STEP_KEYS
        "warmup_iters": int,
        "iterations": int,
        "aggregated_iterations": int,
        "validation": int,
        "graph": int,
        "blocking_collectives": str,
        "per_iter_timing": str,
        "per_iter_skip": int,
        "parallel_init": str,
        "devices": [DEVICE],
    },
    # writeResultHeader, line 764; an element per size (common.cu TimeTest)
    "results": [RESULT],
    # writeResultFooter, lines 783-792
    "out_of_bounds": {"count": int, "okay": str},
    "average_bus_bandwidth": {"bandwidth": float, "okay": str},
    # writeErrors, lines 846-851; jsonOutputFinalize, lines 391-396
    "errors": [str],
    "end_time": str,
}
STEP_KEYS = {"step_bytes": "step_factor"}
"""The writer emits one of step_factor and step_bytes (lines 649-654)."""
EXTENSION = "distbench"
"""The one key the export adds (last): where its numbers come from."""
NULLABLE = {
    "start_time", "end_time", "nccl_version",
    "config.ngpus", "config.step_factor", "config.warmup_iters", "config.iterations",
    "config.validation", "config.graph", "config.blocking_collectives", "config.parallel_init",
    "config.devices[].group", "config.devices[].pid", "config.devices[].hostname",
    "config.devices[].device", "config.devices[].device_hex", "config.devices[].device_info",
    "results[].out_of_place", "results[].in_place", "results[].actual_iterations",
    "results[].out_of_place.time", "results[].out_of_place.alg_bw",
    "results[].out_of_place.bus_bw", "results[].out_of_place.nwrong",
    "results[].in_place.time", "results[].in_place.alg_bw", "results[].in_place.bus_bw",
    "results[].in_place.nwrong",
    "out_of_bounds.count", "out_of_bounds.okay", "average_bus_bandwidth.bandwidth",
}  # fmt: skip
"""Where the export may write null (distbench has no value): docs/exports.md lists each."""


def shape_errors(value: Any, tree: Any, path: str = "") -> list[str]:
    """Where `value` differs from the writer's key tree: a missing, extra or misplaced key, a
    wrong type, a null where the export documents none."""
    where = path or "(top)"
    if value is None:
        return [] if path in NULLABLE else [f"{where}: null, not documented as nullable"]
    if isinstance(tree, dict):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        keys = [STEP_KEYS.get(k, k) for k in value if not (path == "" and k == EXTENSION)]
        errors = [] if keys == list(tree) else [f"{where}: keys {keys} != writer's {list(tree)}"]
        named = {STEP_KEYS.get(k, k): v for k, v in value.items()}
        for key, sub in tree.items():
            if key in named:
                errors += shape_errors(named[key], sub, f"{path}.{key}" if path else key)
        return errors
    if isinstance(tree, list):
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        return [e for item in value for e in shape_errors(item, tree[0], f"{path}[]")]
    if tree is float and isinstance(value, int) and not isinstance(value, bool):
        return []  # "%lf" of a whole number reads back as a float; json.dumps may write 2.0 as 2
    if not isinstance(value, tree) or isinstance(value, bool):
        return [f"{where}: {value!r} is not {tree.__name__}"]
    return []


def exported(run: Path, fmt: str, sample_timestamps: bool = False) -> str:
    text, _ = export_run(run, fmt, sample_timestamps)
    return text


BMF_SCHEMA = {"value": float, "lower_value": float, "upper_value": float}
"""https://bencher.dev/bmf.json: benchmark -> measure -> these numbers, `value` required."""


def bmf_errors(document: Any) -> list[str]:
    if not isinstance(document, dict) or not document:
        return ["not a non-empty object of benchmarks"]
    errors = []
    for name, measures in document.items():
        if not isinstance(measures, dict) or not measures or len(name) > 1024:
            errors.append(f"{name}: not an object of measures")
            continue
        for measure, metric in measures.items():
            if "value" not in metric:
                errors.append(f"{name}/{measure}: no value")
            for key, number in metric.items():
                if key not in BMF_SCHEMA or not isinstance(number, int | float):
                    errors.append(f"{name}/{measure}/{key}: {number!r}")
    return errors


GAB_RANGE = re.compile(r"(?P<prefix>(\+-|±)\s*)(?P<value>\d.+)")
"""github-action-benchmark's extractRangeInfo.ts reads `range` with this pattern."""


def gab_errors(entries: Any) -> list[str]:
    if not isinstance(entries, list) or not entries:
        return ["not a non-empty list"]
    errors = []
    for entry in entries:
        types = {"name": str, "unit": str, "value": float, "range": str, "extra": str}
        if not {"name", "unit", "value"} <= set(entry) <= set(types):
            errors.append(f"{entry}: keys")
        for key, value in entry.items():
            kind = (int, float) if types.get(key) is float else types.get(key, type(None))
            if not isinstance(value, kind):
                errors.append(f"{entry.get('name')}: {key}={value!r}")
        if "range" in entry and not GAB_RANGE.search(entry["range"]):
            errors.append(f"{entry['name']}: range {entry['range']!r} is not '± N'")
    if len({e.get("name") for e in entries}) != len(entries):
        errors.append("two entries share a name")
    return errors


# ---- in process, on the checked-in runs -------------------------------------------------------
@pytest.mark.parametrize("run", ["cluster-a/allreduce", "cluster-b/sendrecv", "cluster-a"])
def test_every_format_of_the_checked_in_runs_reads_back(run: str) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    from prometheus_client.parser import text_string_to_metric_families as classic_families

    loaded = load_export_run(DATA / run)  # once: each format renders the same rows
    rows = len(loaded.rows)
    document = json.loads(RENDERERS["nccl-tests-json"](loaded))
    assert shape_errors(document, WRITER_TREE) == []
    assert sum(r["out_of_place"] is not None for r in document["results"]) == rows
    text = RENDERERS["openmetrics"](loaded)
    families = list(text_string_to_metric_families(text))
    assert len(next(f for f in families if f.name == "distbench_time_p50_seconds").samples) == rows
    # node_exporter's textfile collector and the Pushgateway read the classic text format
    # (# UNIT and # EOF are comments there): the same file, the same samples
    classic = {f.name: len(f.samples) for f in classic_families(text)}
    assert classic == {f.name: len(f.samples) for f in families}
    bmf = json.loads(RENDERERS["bmf"](loaded))
    assert bmf_errors(bmf) == [] and len(bmf) == rows
    entries = json.loads(RENDERERS["gab"](loaded))
    assert gab_errors(entries) == [] and len(entries) == rows


def test_a_folder_of_runs_spans_its_first_start_to_its_last_end() -> None:
    manifests = [json.loads(p.read_text()) for p in (DATA / "cluster-a").glob("*/manifest.json")]
    loaded = load_export_run(DATA / "cluster-a")
    document = json.loads(RENDERERS["nccl-tests-json"](loaded))
    first = min(m["started_utc"] for m in manifests)
    last = max(m["ended_utc"] for m in manifests)
    assert document["start_time"] == first.replace("T", " ").removesuffix("Z")
    assert document["end_time"] == last.replace("T", " ").removesuffix("Z")
    text = RENDERERS["openmetrics"](loaded)
    assert f"}} {pd.Timestamp(last).timestamp()!r}" in text  # distbench_run_end_timestamp_seconds


def test_gather_type_counts_are_per_rank_and_wrong_checks_counted() -> None:
    document = json.loads(exported(DATA / "cluster-a" / "allgather", "nccl-tests-json"))
    frame = pd.read_csv(DATA / "cluster-a" / "allgather" / "results.csv")
    for result in document["results"]:
        world_size = int(re.search(r"n=(\d+)", result["experiment_name"])[1])  # type: ignore[index]
        row = frame[(frame.size_bytes == result["size"]) & (frame.world_size == world_size)]
        # nccl-tests' all_gather count is one rank's (getCollByteCount's paramcount)
        assert result["count"] == int(row["count"].iloc[0]) // world_size
        assert result["redop"] == "none"


def test_in_place_rows_fill_in_place(tmp_path: Path) -> None:
    """A run with both placements (allgather --placement out,in): one result per size, both
    bodies filled from their own rows."""
    run = tmp_path / "allgather"
    shutil.copytree(DATA / "cluster-a" / "allgather", run)
    frame = pd.read_csv(run / "results.csv", dtype=str, keep_default_na=False)
    in_place = frame.assign(
        placement="in",
        measurement=frame.measurement + "p",
        time_us_mean=(frame.time_us_mean.astype(float) * 2).astype(str),
    )
    pd.concat([frame.assign(placement="out"), in_place]).to_csv(run / "results.csv", index=False)
    document = json.loads(exported(run, "nccl-tests-json"))
    assert shape_errors(document, WRITER_TREE) == []
    assert len(document["results"]) == len(frame)
    for result in document["results"]:
        out, inside = result["out_of_place"], result["in_place"]
        assert inside["time"] == pytest.approx(2 * out["time"])
        assert inside["bus_bw"] == pytest.approx(out["bus_bw"] / 2)


def test_a_world_size_1_row_has_null_bandwidth_not_zero(tmp_path: Path) -> None:
    run = tmp_path / "ws1"
    shutil.copytree(DATA / "cluster-a" / "broadcast", run)
    frame = pd.read_csv(run / "results.csv", dtype=str, keep_default_na=False)
    frame.loc[:, ["algbw_GBps", "busbw_GBps"]] = ""
    frame.to_csv(run / "results.csv", index=False)
    document = json.loads(exported(run, "nccl-tests-json"))
    assert shape_errors(document, WRITER_TREE) == []
    assert all(r["out_of_place"]["bus_bw"] is None for r in document["results"])
    assert document["average_bus_bandwidth"]["bandwidth"] is None
    assert "busbw-gbps" not in json.dumps(json.loads(exported(run, "bmf")))


def test_gpu_facts_of_the_manifest_fill_devices(tmp_path: Path) -> None:
    """A CUDA run's manifest (the rank facts merge_facts writes, the node's nvidia-smi GPUs): the
    devices nccl-tests lists, its version code, one GPU per rank."""
    run = tmp_path / "cuda"
    shutil.copytree(DATA / "cluster-a" / "allreduce", run)
    frame = pd.read_csv(run / "results.csv", dtype=str, keep_default_na=False)
    frame.assign(backend="nccl", device="cuda").to_csv(run / "results.csv", index=False)
    manifest = json.loads((run / "manifest.json").read_text())
    gpus = [
        {"index": str(i), "name": "NVIDIA H200", "uuid": f"GPU-{i}", "pci.bus_id": bus}
        for i, bus in enumerate(["00000000:19:00.0", "00000001:3B:00.0"])
    ]
    ranks = {
        str(i): {"node": 0, "host": "n0", "local_rank": i,
                 "gpu": {"index": i, "uuid": f"GPU-{i}", "pci.bus_id": g["pci.bus_id"]}}
        for i, g in enumerate(gpus)
    }  # fmt: skip
    manifest |= {"nccl": "2.21.5", "nodes": {"0": {"host": "n0", "gpus": gpus}}, "ranks": ranks}
    (run / "manifest.json").write_text(json.dumps(manifest))
    document = json.loads(exported(run, "nccl-tests-json"))
    assert shape_errors(document, WRITER_TREE) == []
    assert document["nccl_version"] == 22105 and document["config"]["ngpus"] == 1
    assert document["config"]["devices"] == [
        {"rank": 0, "group": None, "pid": None, "hostname": "n0", "device": 0,
         "device_hex": "0000:19:00", "device_info": "NVIDIA H200"},
        {"rank": 1, "group": None, "pid": None, "hostname": "n0", "device": 1,
         "device_hex": "0001:3b:00", "device_info": "NVIDIA H200"},
    ]  # fmt: skip


def with_intervals(target: Path, version: int) -> Path:
    """cluster-a's broadcast run as schema `version` writes it (its columns upgraded by the
    report's loader, then cut to that version's), each row's p50 interval [p50 - 10, p50 + 30]."""
    from distbench.collectors.migrations import columns_at
    from distbench.reports.load import read_results_text

    source = DATA / "cluster-a" / "broadcast"
    shutil.copytree(source, target)
    _, frame = read_results_text(source)
    p50 = frame.time_us_p50.astype(float)
    frame = frame.assign(ci_low_us=(p50 - 10).astype(str), ci_high_us=(p50 + 30).astype(str))
    frame[columns_at("comm", version)].to_csv(target / "results.csv", index=False)
    manifest = json.loads((target / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps({**manifest, "schema_version": version}))
    return target


def test_the_p50_interval_bounds_bmf_and_ranges_gab(tmp_path: Path) -> None:
    from distbench.collectors.schema import SCHEMA_VERSION

    run = with_intervals(tmp_path / "ci", SCHEMA_VERSION)
    for metric in json.loads(exported(run, "bmf")).values():
        latency = metric["latency"]
        assert latency["upper_value"] - latency["value"] == pytest.approx(30e3)
        assert latency["value"] - latency["lower_value"] == pytest.approx(10e3)
    entries = json.loads(exported(run, "gab"))
    assert gab_errors(entries) == []
    assert {e["range"] for e in entries} == {"± 20"}  # half the interval's width


def test_a_lopsided_interval_gets_no_plus_minus_range() -> None:
    """203 ± 469 for an interval of 181 .. 1119 read as reaching -266 us: a range only where
    neither side is more than 3 times the other; the interval stays in `extra`."""
    from distbench.reports.export.gab import symmetric_enough

    assert symmetric_enough(100.0, 80.0, 130.0)  # 20 below, 30 above
    assert not symmetric_enough(203.4, 180.7, 1119.4)
    assert not symmetric_enough(100.0, 110.0, 130.0)  # the value outside its interval


def test_an_older_schemas_interval_is_not_exported_as_95_percent(tmp_path: Path) -> None:
    """v3's ci_low_us/ci_high_us meant another interval (latency: every op independent, 41-56 %
    coverage): bmf and gab leave them out and the notes say why, as compare flags the change."""
    run = with_intervals(tmp_path / "v3", 3)
    text, notes = export_run(run, "bmf")
    assert all("lower_value" not in m["latency"] for m in json.loads(text).values())
    entries = json.loads(exported(run, "gab"))
    assert gab_errors(entries) == [] and not any("95% CI" in e["extra"] for e in entries)
    assert not any("range" in e for e in entries)
    assert any("schema (v3 and before) meant another interval" in note for note in notes), notes


# ---- the shape check bites --------------------------------------------------------------------
def mutations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Copies of a correct export, each with one thing nccl-tests' writer never does."""

    def changed(change: Any) -> dict[str, Any]:
        mutated = copy.deepcopy(document)
        change(mutated)
        return mutated

    def rename(obj: dict[str, Any], old: str, new: str) -> None:
        obj.update({(new if k == old else k): obj.pop(k) for k in list(obj)})

    return {
        "drop results[].in_place": changed(lambda d: d["results"][0].pop("in_place")),
        "rename alg_bw to algbw": changed(
            lambda d: rename(d["results"][0]["out_of_place"], "alg_bw", "algbw")
        ),
        "devices at the top": changed(lambda d: d.update(devices=d["config"].pop("devices"))),
        "okay as a JSON bool": changed(lambda d: d["out_of_bounds"].update(okay=True)),
        "size as a string": changed(lambda d: d["results"][0].update(size="1024")),
        "an extra key": changed(lambda d: d["results"][0].update(time_us_p50=1.0)),
        "null where none is documented": changed(lambda d: d.update(version=None)),
        "keys out of order": changed(lambda d: d.update(version=d.pop("version"))),
    }


def test_the_shape_check_fails_every_mutation_of_a_correct_export() -> None:
    document = json.loads(exported(DATA / "cluster-a" / "allreduce", "nccl-tests-json"))
    assert shape_errors(document, WRITER_TREE) == []
    for what, mutated in mutations(document).items():
        assert shape_errors(mutated, WRITER_TREE), f"the check missed: {what}"


def test_the_shape_check_fails_an_exporter_that_drops_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exporter itself broken from the test side: its results without experiment_name."""
    original = nccl_module.result

    def without_name(rows: Any) -> dict[str, Any]:
        return {k: v for k, v in original(rows).items() if k != "experiment_name"}

    monkeypatch.setattr(nccl_module, "result", without_name)
    document = json.loads(exported(DATA / "cluster-a" / "allreduce", "nccl-tests-json"))
    assert any("experiment_name" in error for error in shape_errors(document, WRITER_TREE))


def test_the_bmf_and_gab_checks_fail_mutated_exports() -> None:
    path = DATA / "cluster-a" / "allreduce"
    bmf = json.loads(exported(path, "bmf"))
    assert bmf_errors(bmf) == []
    name = next(iter(bmf))
    for change in (
        lambda d: d[name]["latency"].pop("value"),
        lambda d: d[name]["latency"].update(value="226"),
        lambda d: d[name]["latency"].update(median=1.0),
        lambda d: d.update({name: {}}),
    ):
        mutated = copy.deepcopy(bmf)
        change(mutated)
        assert bmf_errors(mutated), change
    gab = json.loads(exported(path, "gab"))
    assert gab_errors(gab) == []
    for change in (
        lambda e: e[0].pop("unit"),
        lambda e: e[0].update(value="226"),
        lambda e: e[0].update(range="3.2"),  # the action reads '± N' only
        lambda e: e[1].update(name=e[0]["name"]),
        lambda e: e[0].update(stddev=1.0),
    ):
        mutated = copy.deepcopy(gab)
        change(mutated)
        assert gab_errors(mutated), change


# ---- the command ------------------------------------------------------------------------------
def test_export_writes_the_file_it_is_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from distbench.cli.app import run_cli as run_in_process

    out = tmp_path / "run.json"
    run = str(DATA / "cluster-a" / "allreduce")
    assert run_in_process(["export", run, "--format", "gab", "--out", str(out)]) == 0
    assert gab_errors(json.loads(out.read_text())) == []
    assert str(out) in capsys.readouterr().out
    assert run_in_process(["export", run, "--format", "NCCL-TESTS-JSON"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 3  # stdout: the document alone


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--format", "xml"], "choose one of nccl-tests-json, openmetrics, bmf, gab"),
        (["--format", "bmf", "--sample-timestamps"], "is for --format openmetrics"),
        (["--format", "bmf", "--out", "{tmp}"], "is a directory"),
        (["--format", "bmf", "--out", "{tmp}/no/such.json"], "does not exist"),
        ([], "--format"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(DATA / "cluster-a" / "allreduce")
    line = usage_error_line(["export", run, *(a.format(tmp=tmp_path) for a in argv)], capsys)
    assert says in line


def test_a_run_without_communication_rows_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["export", str(DATA / "cluster-a" / "ddp"), "--format", "bmf"], capsys)
    assert "no communication row" in line
    line = usage_error_line(["export", str(tmp_path / "none"), "--format", "bmf"], capsys)
    assert "not a run directory" in line


def test_help_shows_every_format_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from distbench.cli.app import run_cli as run_in_process

    assert run_in_process(["export", "--help"]) == 0
    text = capsys.readouterr().out
    assert "Examples:" in text and all(fmt in text for fmt in FORMATS)


def test_the_docs_page_names_every_null_and_every_format() -> None:
    page = DOCS.read_text()
    missing = [path for path in sorted(NULLABLE) if f"`{path}`" not in page]
    assert not missing, f"docs/exports.md does not say how these are filled: {missing}"
    assert all(f"--format {fmt}" in page for fmt in FORMATS)
    assert "time_us_mean" in page


def test_the_notes_count_rows_left_out_and_repeated_communication_cases(tmp_path: Path) -> None:
    """A new user's folder of two ddp runs (22 + 11 rows) and one all_reduce run printed `22 ddp
    row(s) left out` (33 were) and `11 repeated case(s)` (the repeats were ddp rows, not
    exported)."""
    folder = tmp_path / "mix"
    for name in ("ddp-1", "ddp-2"):
        shutil.copytree(DATA / "cluster-a" / "ddp", folder / name)
    shutil.copytree(DATA / "cluster-a" / "allreduce", folder / "comm")
    ddp_rows = len(pd.read_csv(DATA / "cluster-a" / "ddp" / "results.csv"))
    notes = load_export_run(folder).notes
    assert notes == [f"{2 * ddp_rows} ddp row(s) left out: the exports hold communication rows"]
    shutil.copytree(DATA / "cluster-a" / "allreduce", folder / "comm-again")
    comm_rows = len(pd.read_csv(DATA / "cluster-a" / "allreduce" / "results.csv"))
    again = load_export_run(folder).notes
    assert again[1] == (
        f"{comm_rows} repeated communication case(s): each exported from the run that started last"
    )


def test_a_written_export_is_readable_as_a_plain_write_would_leave_it(tmp_path: Path) -> None:
    """node_exporter's textfile collector runs as another user: the file replaced at once keeps
    a plain write's mode (0666 less the umask: 0644 under 022), or the mode of the file it
    replaces; tempfile.mkstemp's own 0600 could not be read."""
    import os
    import stat

    from distbench.cli.export import write_whole

    target = tmp_path / "run.prom"
    previous = os.umask(0o022)
    try:
        write_whole(target, "a 1\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        target.chmod(0o640)
        write_whole(target, "a 2\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert target.read_text() == "a 2\n"
    finally:
        os.umask(previous)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
