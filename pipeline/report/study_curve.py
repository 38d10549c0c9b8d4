"""Where this run sits on the study's data-efficiency curve: MLM − CLM by task family against
pretraining tokens (log scale), this run's points (budget_trend.csv: the learning-curve
checkpoints and the final models) beside the study's 610M curve (study_curve.csv, from its
published Tables 6-9), one panel per family.

They are different models at different scales on different data, drawn on one axis so that a
reader sees how far along the study's curve a CPU run's token budget lies; the figure says so.
Both intervals are the aggregate's: the study's Welch interval over its fine-tuning seeds, this
run's with the variance its config includes. The figure computes nothing; it draws the two tables.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pipeline.analysis.contract import MLM_MINUS_CLM
from pipeline.report.panels import legend_under_panels, panel_figure

STUDY_COLOUR, RUN_COLOUR = "#7f7f7f", "#d62728"


def run_gaps(trend: pd.DataFrame) -> pd.DataFrame:
    """This run's MLM − CLM family points (budget_trend.csv)."""
    rows = trend[(trend["level"] == "family") & (trend["contrast"] == MLM_MINUS_CLM)]
    return rows.sort_values(["name", "size", "tokens"], ignore_index=True)


def error_bars(mean: pd.Series, low: pd.Series, high: pd.Series) -> list[pd.Series]:
    """matplotlib's (below, above) distances of an interval from its mean; none where it is undefined."""
    return [(mean - low).fillna(0), (high - mean).fillna(0)]


def study_curve_figure(trend: pd.DataFrame, study: pd.DataFrame, path: Path) -> Path | None:
    """The figure, one panel per family this run measured MLM − CLM on; None where it measured none.
    ``study``: study_curve.csv."""
    ours = run_gaps(trend)
    if ours.empty:
        return None
    families = list(dict.fromkeys(ours["name"]))

    def draw(ax: plt.Axes, family: str) -> None:
        theirs = study[study["family"] == family].sort_values("step")
        if len(theirs):
            ax.errorbar(
                theirs["tokens"],
                theirs["difference_mean"],
                yerr=error_bars(theirs["difference_mean"], theirs["difference_low"], theirs["difference_high"]),
                color=STUDY_COLOUR,
                marker="s",
                markersize=3,
                capsize=2,
                linewidth=1.2,
                label="study: 610M, FineWeb-Edu, Tables 6-9",
            )
        for size, points in ours[ours["name"] == family].groupby("size", sort=False):
            ax.errorbar(
                points["tokens"],
                points["effect_mean"],
                yerr=error_bars(points["effect_mean"], points["effect_low"], points["effect_high"]),
                color=RUN_COLOUR,
                marker="o",
                markersize=3,
                capsize=2,
                linewidth=1.2,
                label=f"this run: {size}",
            )
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_title(f"{family}: MLM − CLM" + ("" if len(theirs) else " (the study has no such family)"))
        ax.set_xlabel("pretraining tokens (log scale)")
        ax.set_ylabel("MLM − CLM (points)")

    return panel_figure(families, draw, path, finish=legend_under_panels)  # (a family the study lacks has no grey line)
