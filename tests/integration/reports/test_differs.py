""" "What differs" in a two-label report (copies of the frozen v1 fixtures tests/data/cluster-a and
cluster-b, their manifests edited in tmp. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/reports/test_differs.py."""

from __future__ import annotations

from pathlib import Path

from distbench.reports.report.page.build import build_report
from tests.unit.reports.test_differs import edited_copy, node


def test_two_label_report_says_what_differs(tmp_path: Path) -> None:
    a = edited_copy(
        tmp_path,
        "cluster-a",
        {"nccl": "2.21.5", "nodes": {"0": node("a0", "28.39"), "1": node("a1", "28.39")}},
    )
    b_nodes = {
        "0": node("b0", "28.41", NCCL_PROTO="Simple"),
        "1": node("b1", "28.41", driver="535.1"),
    }
    b = edited_copy(tmp_path, "cluster-b", {"nccl": "2.27.3", "nodes": b_nodes})
    files = build_report([str(a), str(b)], str(tmp_path / "report"), by="label")
    text = files.markdown.read_text()
    assert "What differs" in text
    section = text[text.index("What differs") :]
    for expected in ("2.21.5", "2.27.3", "infiniband[mlx5_0].fw_ver", "28.39", "28.41"):
        assert expected in section, expected
    assert "| node 0 | env.NCCL_PROTO |" in section  # set on one cluster only
    assert "| node 1 | host | a1 | b1 |" in section  # the differing nodes named
    assert "cpu_model" not in section  # equal on both: not listed
    assert "gpus[0].uuid" not in section
    # cluster-b's node 1 runs another driver than its node 0: a warning within that run
    assert "the nodes of one run differ in gpus[0].driver_version" in text
    assert "node 1 (b1): 535.1" in text
