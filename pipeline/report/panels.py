"""The figures' shared machinery: their style, a grid of panels drawn one key at a time, and the axes,
error bars and legends several figures share (:mod:`.figures` and :mod:`.study_curve` draw with it).

Matplotlib runs on the Agg backend (no display); fonts are sized for a figure printed at full A4 text width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator  # noqa: E402

STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
DPI = 150
PANEL_SIZE = (3.6, 2.8)  # inches per panel


def panel_grid(count: int, columns: int = 2) -> tuple[plt.Figure, list[plt.Axes]]:
    """A figure with ``count`` panels, at most ``columns`` per row."""
    columns = min(columns, count)
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows), squeeze=False)
    flat = list(axes.flat)
    for unused in flat[count:]:
        unused.set_visible(False)
    return figure, flat[:count]


def panel_figure(
    keys: Sequence[Any],
    draw: Callable[[plt.Axes, Any], None],
    path: Path,
    columns: int = 2,
    finish: Callable[[plt.Figure, list[plt.Axes]], None] = lambda figure, axes: figure.tight_layout(),
) -> Path:
    """One panel per key (at least one panel), each drawn by ``draw(ax, key)``, then
    ``finish`` lays out the whole figure (legends shared by the panels, a colour bar)."""
    with plt.rc_context(STYLE):
        figure, axes = panel_grid(max(1, len(keys)), columns)
        for ax, key in zip(axes, keys):
            draw(ax, key)
        finish(figure, axes)
        return save(figure, path)


def centred(index: int, count: int) -> float:
    """The offset of series ``index`` of ``count`` from their middle: nudging each by it puts
    them side by side, so that error bars at one x do not hide each other."""
    return index - (count - 1) / 2


def half_widths(rows: pd.DataFrame, prefix: str = "test_") -> list[float]:
    """Error-bar half widths of the rows' intervals; 0 where a single seed gives none."""
    return [0.0 if math.isnan(low) else (high - low) / 2 for low, high in zip(rows[f"{prefix}low"], rows[f"{prefix}high"])]


def ring(ax: plt.Axes, x, y, colour: str) -> None:
    """A hollow ring around the points at ``x``, ``y``: the one point of a line that was chosen
    (the learning rate picked on validation, the final model)."""
    ax.plot(x, y, "o", markersize=9, markerfacecolor="none", markeredgecolor=colour)


def log_axis_at(ax: plt.Axes, values: Sequence[float], labels: Sequence[str], right: float | None = None) -> None:
    """A log x-axis labelled at ``values`` alone (the grid's learning rates, the measured token budgets): decade
    ticks label none of them, and their minor labels pile up over a span of under one decade. A margin of a factor 1.5
    either side (to ``right`` if it is further), so a single value is not zoomed into a sliver of one decade."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.xaxis.set_major_formatter(FixedFormatter(list(labels)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(min(values) / 1.5, max(max(values), right or 0) * 1.5)


def legend_under_panels(figure: plt.Figure, axes: list[plt.Axes]) -> None:
    """One legend under the panels with each series once, gathered from every panel: a series missing from the first
    (a size that task was not fine-tuned at, a family the study lacks) is still named."""
    labelled = {label: handle for ax in axes for handle, label in zip(*ax.get_legend_handles_labels())}
    columns = min(len(labelled), 6)
    figure.legend(list(labelled.values()), list(labelled), loc="lower center", ncol=columns, frameon=False, bbox_to_anchor=(0.5, -0.02))
    figure.tight_layout(rect=(0, 0.07 * math.ceil(len(labelled) / columns), 1, 1))


def below_axes_legend(ax: plt.Axes) -> None:
    """The legend under the x axis label, where error bars cannot run into it."""
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)


def save(figure: plt.Figure, path: Path) -> Path:
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    return path
