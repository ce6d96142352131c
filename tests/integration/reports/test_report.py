"""distbench report on the checked-in fixture runs (tests/data). The half that launches or runs for
seconds; the in-process half, and the file's whole story: tests/unit/reports/test_report.py."""

# ruff: noqa: RUF001  (the report's headings use Greek letters on purpose)
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from distbench.cli.app import run_cli as run_in_process
from tests.paths import DATA
from tests.unit.reports.test_report import CLUSTERS, FIGURES, PageParser, copy_run

CHROMIUM = Path("/usr/bin/chromium")


needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (CI installs it, and there this test never skips)",
)


def chromium(tmp_path: Path, *args: str) -> str:
    """Headless Chromium with `args` (a window size, what to write, the page); its stdout."""
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@needs_chromium
def test_headless_chromium_renders_the_page(frozen_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    page = (frozen_report / "report.html").resolve().as_uri()
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,2000", page)
    pixels = matplotlib.image.imread(shot)[..., :3]  # float RGB in [0, 1], 2000 x 1200
    assert pixels.shape[:2] == (2000, 1200)
    not_white = float(np.mean(np.any(pixels < 0.95, axis=-1)))
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert not_white > 0.05, not_white  # text, tables and a figure, not a blank page
    assert colours > 100, colours  # figures are in the first screen, not only black text


MEASURE = """<script>
addEventListener("load", () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const widths = [...document.querySelectorAll("div.scroll")].map((d) =>
    [d.querySelector("caption").textContent, d.scrollWidth, d.clientWidth].join("\\t"));
  const out = document.createElement("pre");
  out.id = "widths";
  out.textContent = widths.join("\\n");
  document.body.append(out);
});
</script>"""
"""Written into a copy of the page (the report itself holds no script): each table's caption,
its scrolling box's scrollWidth and clientWidth, the folded tables opened."""


@needs_chromium
def test_every_table_fits_a_1400_px_window(frozen_report: Path, tmp_path: Path) -> None:
    """The README's example report at 1,400 px: no table scrolls sideways. The speedup summary
    was 1,662 px wide (verdicts on one line, uncapped intervals, the one compared source in
    every row), the manifests of its 10 runs 2,521 px, the fit, DDP strategies and every row
    a few dozen px past the window."""
    page = tmp_path / "measured.html"
    text = (frozen_report / "report.html").read_text(encoding="utf-8")
    page.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1400,900", "--dump-dom", page.as_uri())
    found = re.search(r'<pre id="widths">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    widths = [line.split("\t") for line in html.unescape(found.group(1)).splitlines()]
    assert len(widths) == 12, widths  # every table of the page was measured
    assert {caption for caption, _scroll, _client in widths} >= {
        "Runs and what they ran on",
        "Speedup over cluster-a",
        "Speedup per size",
        "DDP step-time speedup over cluster-a",
        "All results",
    }
    assert 1300 < int(widths[0][2]) <= 1400, widths  # the page's column at this window
    wider = [(c, int(s), int(w)) for c, s, w in widths if int(s) > int(w)]
    assert not wider, wider


def test_reports_never_import_torch() -> None:
    """A report runs where torch is not installed (a laptop reading a cluster's runs)."""
    code = (
        "import sys, distbench.reports.report.page.build\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'torch'], 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_one_run_dir_defaults_to_a_report_folder_next_to_it(tmp_path: Path) -> None:
    run = tmp_path / "allreduce"
    shutil.copytree(DATA / "cluster-a" / "allreduce", run)
    (run / "samples.csv").unlink()
    code = run_in_process(["report", str(run)])
    assert code == 0
    assert not (run / "report").exists()  # never inside an input folder
    text = (tmp_path / "allreduce-report" / "report.md").read_text(encoding="utf-8")
    assert "no samples.csv, so its figures have no sample bands" in text
    assert "Runs compared" not in text  # one label: nothing to compare
    assert (tmp_path / "allreduce-report" / "fig-time-vs-size.png").is_file()
    assert not (tmp_path / "allreduce-report" / "fig-compare.png").exists()


def test_labelled_runs_with_nothing_in_common_are_reported_with_a_note(tmp_path: Path) -> None:
    a = copy_run(tmp_path, "allreduce", "cluster-a")
    b = copy_run(tmp_path, "ddp", "cluster-b")
    assert run_in_process(["report", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "compared by label: cluster-a, cluster-b." in text
    assert "no measurement of cluster-a (same case and size) is in another run" in text
    assert "no DDP step time is compared: cluster-b measured DDP" in text
    assert "**DDP strategies**" in text and "**Key results**" in text


def test_by_host_and_by_run(tmp_path: Path) -> None:
    runs = [str(p / "broadcast") for p in CLUSTERS]
    assert run_in_process(["report", *runs, "--by", "host", "--out", str(tmp_path / "h")]) == 0
    lead = (tmp_path / "h" / "report.md").read_text(encoding="utf-8").splitlines()[2]
    assert lead.endswith("one host, vm: nothing compared (a second host would be).")
    a, b = DATA / "cluster-a" / "broadcast", DATA / "cluster-b" / "broadcast"
    assert (
        run_in_process(["report", str(a), str(b), "--by", "run", "--out", str(tmp_path / "r")]) == 0
    )
    text = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "**Speedup over broadcast**" in text  # run ids: broadcast, broadcast-2
    assert "| broadcast-2 | broadcast | 2 |" in text  # gloo, cpu, 1 node: in the table's note


def test_same_cases_at_other_sizes_are_drawn_with_a_note(tmp_path: Path) -> None:
    a = copy_run(tmp_path, "allreduce", "cluster-a")
    b = copy_run(tmp_path, "allreduce", "cluster-b")
    results = b / "results.csv"
    rows = results.read_text().splitlines()
    header = rows[0].split(",")
    size = header.index("size_bytes")
    shifted = []
    for line in rows[1:]:
        cells = line.split(",")
        cells[size] = str(int(cells[size]) * 2)  # another ladder: 2K, 32K, ... 8M
        shifted.append(",".join(cells))
    results.write_text("\n".join([rows[0], *shifted]) + "\n")
    out = tmp_path / "out"
    assert run_in_process(["report", str(a), str(b), "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "no measurement of cluster-a (same case and size) is in another run" in text
    assert "cluster-b | all_reduce" in text  # its key results are still there


def test_writes_html_markdown_and_every_figure(frozen_report: Path) -> None:
    assert (frozen_report / "report.html").is_file()
    assert (frozen_report / "report.md").is_file()
    assert {p.name for p in frozen_report.glob("fig-*.png")} == FIGURES
    for name in FIGURES:
        assert (frozen_report / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_html_is_self_contained_with_every_figure_and_table(frozen_report: Path) -> None:
    page = PageParser()
    text = (frozen_report / "report.html").read_text(encoding="utf-8")
    page.feed(text)
    assert page.fetches == []  # nothing to fetch: no src/href outside data: URIs
    assert not {"script", "link", "iframe", "object", "embed"} & page.tags
    assert "@import" not in text and "url(" not in text
    assert len(page.images) == len(FIGURES)
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    for name in FIGURES:  # each PNG on disk is the one embedded
        assert name in text
    captions = page.captions
    for expected in (
        "Runs and what they ran on",
        "Speedup over cluster-a",
        "DDP step-time speedup over cluster-a",
        "Key results",
        "Latency-bandwidth fit",
        "DDP strategies",
        "algbw GB/s: cluster-a · 3 ranks · 1M float32",
        "algbw GB/s: cluster-b · 2 ranks · 1M float32",
        "All results",
        "Speedup per size",
    ):
        assert expected in captions, captions
    assert page.tables == len(captions)


def test_markdown_has_the_key_tables(frozen_report: Path) -> None:
    text = (frozen_report / "report.md").read_text(encoding="utf-8")
    for title in (
        "**Runs and what they ran on**",
        "**Speedup over cluster-a**",
        "**Key results**",
        "**Latency-bandwidth fit**",
        "**DDP strategies**",
        "**algbw GB/s: cluster-a · 3 ranks · 1M float32**",
    ):
        assert title in text
    # the source (a cluster, a host), not a run id: the column says which
    assert "| source | primitive | ranks | mode |" in text  # one backend, device, node, dtype:
    assert "every row: gloo, cpu, 1 node(s), float32." in text  # said once, not a column each
    assert "| α µs | α from sizes | β GB/s | β from sizes |" in text
    # the 3-rank all-pairs matrix: 3 rows of src, '—' on the diagonal
    block = text.split("**algbw GB/s: cluster-a · 3 ranks · 1M float32**")[1].split("\n\n")[1]
    rows = block.splitlines()[2:]
    assert [r.split("|")[1].strip() for r in rows] == ["0", "1", "2"]
    assert all(r.split("|")[i + 2].strip() == "—" for i, r in enumerate(rows))
    # every fixture measurement of both labels is compared: 10 lines (all_gather, broadcast and
    # the send/recv ring at 2 world sizes, all_reduce at 2 x 2 modes) and 8 pingpong pairs (2 + 6)
    summary, note = text.split("**Speedup over cluster-a**")[1].split("\n\n")[1:3]
    assert len(summary.splitlines()) == 2 + 18  # the header, its rule and 18 rows of cluster-b:
    assert note.startswith("every row: cluster-b, gloo")  # the one source, said in the note
