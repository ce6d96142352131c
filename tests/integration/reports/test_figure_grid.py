"""The fixed grid of the many-panel figures (reports/report/figures/grid.py). The half that launches
or runs for seconds; the in-process half, and the file's whole story:
tests/unit/reports/test_figure_grid.py."""

from __future__ import annotations

import pytest

from distbench.reports.report.figures import collectives as fg
from distbench.reports.report.figures import grid
from tests.unit.reports.test_figure_grid import collisions, crowded_figures, crowded_points


def test_crowded_figures_keep_every_label_clear() -> None:
    for name, figure in crowded_figures().items():
        assert figure is not None
        assert figure.get_layout_engine() is None, name  # the fixed grid, not constrained layout
        assert collisions(figure) == [], name


def test_the_check_sees_a_grid_without_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grid, "W_GAP_IN", 0.05)
    monkeypatch.setattr(grid, "H_GAP_IN", 0.05)
    figure = fg.plot_vs_size(crowded_points(), "time_us", "time p50 (µs)", "Time vs size")
    assert figure is not None
    assert any("overlaps panel" in c for c in collisions(figure))


def test_the_check_sees_a_legend_over_the_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    real = grid.fixed_grid
    monkeypatch.setattr(
        fg, "fixed_grid", lambda fig, rows, cols, title, legend_in=0.0: real(fig, rows, cols, title)
    )
    figure = fg.plot_vs_size(crowded_points(), "time_us", "time p50 (µs)", "Time vs size")
    assert figure is not None
    assert any("overlaps legend" in c for c in collisions(figure))
