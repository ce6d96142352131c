"""The fixed grid of the many-panel figures (reports/report/figures/grid.py). The half that launches
or runs for seconds; the in-process half, and the file's whole story:
tests/unit/reports/test_figure_grid.py."""

from __future__ import annotations

from tests.unit.reports.test_figure_grid import collisions, crowded_figures


def test_crowded_figures_keep_every_label_clear() -> None:
    for name, figure in crowded_figures().items():
        assert figure is not None
        assert figure.get_layout_engine() is None, name  # the fixed grid, not constrained layout
        assert collisions(figure) == [], name
