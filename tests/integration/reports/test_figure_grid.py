"""The fixed grid of the many-panel figures (reports/report/figures/grid.py): no panel's tick
labels, axis labels or title reach into another panel, the legend below or the figure's title,
and everything stays inside the figure, on crowded figures (10 panels, 40 lines, labels from
1 µs to 1e6 µs). A grid with its gaps taken away must fail the same check."""

from __future__ import annotations

from tests.unit.reports.test_figure_grid import collisions, crowded_figures


def test_crowded_figures_keep_every_label_clear() -> None:
    for name, figure in crowded_figures().items():
        assert figure is not None
        assert figure.get_layout_engine() is None, name  # the fixed grid, not constrained layout
        assert collisions(figure) == [], name
