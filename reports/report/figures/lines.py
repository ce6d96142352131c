"""Many lines of a panel as a few collections: what `ax.plot` per line draws, built at once.

A 10,000-row report draws ~3,000 lines with markers on ~70 panels; `ax.plot` builds a Line2D per
line (~1 ms each) and each is drawn on its own. Here a panel's lines become one LineCollection
for the solid ones and one for the dashed ones (with matplotlib's cap and join styles of each),
and all its markers one PathCollection (a marker path, size and colours per point, as scatter
draws them), at the Line2D's zorder. Each named line keeps a Line2D in its panel with its colour,
style and marker and no points (LegendEntry: it draws nothing): the legend draws its handle from
those properties, as it did from the plotted line, and a panel's lines are still its get_lines().

What differs from Line2D, by a pixel at most: markers sit at their exact positions (a Line2D
snaps them to the pixel grid), and a panel's lines are drawn before its markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np
from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.path import Path
from matplotlib.transforms import IdentityTransform
from matplotlib.typing import ColorType

LINE_ZORDER = 2.0
"""Line2D's zorder: lines and their markers above the bands (PolyCollection, zorder 1)."""


@dataclass(frozen=True)
class Line:
    """One line as `ax.plot(x, y, style, marker=..., ...)` would take it."""

    x: np.ndarray
    y: np.ndarray
    color: ColorType
    style: str = "-"
    """'-', '--', '-.', ':' or '' (markers only)."""
    marker: str = ""
    size: float | None = None
    """Marker size (points); None: rcParams lines.markersize."""
    width: float | None = None
    """Line width (points); None: rcParams lines.linewidth."""
    face: ColorType | None = None
    """Marker face colour; None: the line's colour."""
    edge: ColorType | None = None
    """Marker edge colour; None: the line's colour."""
    label: str = ""
    """'' for no legend entry."""


def shown(line: Line) -> np.ndarray:
    """The line's points (n x 2). A missing one is a gap, as in a Line2D; one at or below 0 on
    a log axis is left to the axis's transform, which clips it as it clips a Line2D's."""
    return np.column_stack([np.asarray(line.x, dtype=float), np.asarray(line.y, dtype=float)])


def segments(points: np.ndarray) -> list[np.ndarray]:
    """The line's runs of finite points (Line2D breaks a line at a missing point)."""
    finite = np.isfinite(points).all(axis=1)
    if finite.all():
        return [points]
    runs = np.split(points, np.flatnonzero(np.diff(finite.astype(int))) + 1)
    return [run for run in runs if np.isfinite(run).all() and len(run)]


def draw_many(ax: Axes, lines: Sequence[Line], entries: set[str] | None = None) -> None:
    """Draw `lines` on `ax` as a few collections (module docstring).

    `entries`: the labels that already have a legend entry in another panel of the figure, for a
    figure whose one legend takes each label's first entry (collectives.shared_legend): a line
    so named gets none here, and the labels given entries here are added. Each entry is a Line2D
    (~0.5 ms with its marker): one per label instead of one per panel and label."""
    width = float(rcParams["lines.linewidth"])
    for solid in (True, False):
        drawn = [line for line in lines if line.style and (line.style == "-") == solid]
        parts = [(part, line) for line in drawn for part in segments(shown(line))]
        if not parts:
            continue
        ax.add_collection(
            LineCollection(
                [part for part, _line in parts],
                colors=[line.color for _part, line in parts],
                linestyles=[line.style for _part, line in parts],
                linewidths=[line.width if line.width is not None else width for _p, line in parts],
                capstyle=rcParams["lines.solid_capstyle" if solid else "lines.dash_capstyle"],
                joinstyle=rcParams["lines.solid_joinstyle" if solid else "lines.dash_joinstyle"],
                zorder=LINE_ZORDER,
            )
        )
    size, edge_width = float(rcParams["lines.markersize"]), float(rcParams["lines.markeredgewidth"])
    finite = ((line, shown(line)) for line in lines if line.marker)
    marked = [(line, p[np.isfinite(p).all(axis=1)]) for line, p in finite]
    marked = [(line, points) for line, points in marked if len(points)]
    if marked:  # every marker of the panel: one PathCollection, a path and size per point
        counts = [len(points) for _line, points in marked]
        paths = [marker_path(line.marker) for line, _points in marked]
        colors = [(to_rgba(line.face or line.color), to_rgba(line.edge or line.color),
                   MarkerStyle(line.marker).is_filled()) for line, _points in marked]  # fmt: skip
        # an unfilled marker (x) is stroked in its edge colour, as scatter strokes it
        faces = [face if filled else edge for face, edge, filled in colors]
        collection = PathCollection(
            [path for path, count in zip(paths, counts, strict=True) for _ in range(count)],
            np.repeat([(line.size or size) ** 2 for line, _points in marked], counts),
            facecolors=np.repeat(faces, counts, axis=0),
            edgecolors=np.repeat([edge for _face, edge, _filled in colors], counts, axis=0),
            linewidths=edge_width, offsets=np.concatenate([points for _line, points in marked]),
            offset_transform=ax.transData, zorder=LINE_ZORDER,
        )  # fmt: skip
        collection.set_transform(IdentityTransform())
        ax.add_collection(collection)
    for line in lines:
        if line.label and (entries is None or line.label not in entries):
            if entries is not None:
                entries.add(line.label)
            style = cast(Any, line.style or "none")
            ax.add_artist(  # not add_line: an entry without points has no data limits
                LegendEntry([], [], linestyle=style, marker=line.marker or "None",
                            markersize=line.size, linewidth=line.width, color=line.color,
                            markerfacecolor=line.face, markeredgecolor=line.edge, label=line.label)
            )  # fmt: skip


@lru_cache(maxsize=32)
def marker_path(marker: str) -> Path:
    """The marker's outline in points at size 1, as scatter builds it."""
    style = MarkerStyle(marker)
    return style.get_path().transformed(style.get_transform())


class LegendEntry(Line2D):
    """A named line's legend entry in its panel: its colour, style and marker, no points (its
    points are in the panel's collections), so it draws nothing; the legend draws its own copy."""

    def draw(self, renderer: RendererBase) -> None:
        return None

    def get_in_layout(self) -> bool:
        """Out of every layout box: with no points its extent is the figure's corner, which made
        each panel's tight box reach (0, 0) and every crowded panel overlap its neighbours."""
        return False

    def set_clip_path(self, path: Any, transform: Any = None) -> None:
        """Nothing drawn, nothing to clip (the axes clip every child: ~1 ms an entry)."""
