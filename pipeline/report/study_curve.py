"""Where this run sits on the study's data-efficiency curve: MLM − CLM by task family against
pretraining tokens (log scale), this run's points (budget_trend.csv: the learning-curve
checkpoints and the final models) beside the study's 610M curve (its published Tables 6-9,
:mod:`pipeline.external.published_tables`), one panel per family.

They are different models at different scales on different data, drawn on one axis so that a
reader sees how far along the study's curve a CPU run's token budget lies; the figure says so.
The study's interval at a step is the two published half-widths combined as independent
(sqrt(a² + b²): its CLM and MLM were fine-tuned with separate seeds), over fine-tuning seeds
only; this run's is its own (budget_trend.csv), with the variance its config includes.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pipeline.analysis.budget_trend import MLM_MINUS_CLM
from pipeline.analysis.study_cells import STUDY_TOKENS_PER_STEP  # 1k-40k steps are 2.4B-94B tokens
from pipeline.external.published_tables import AVERAGE, read_published_tables
from pipeline.report.panels import legend_under_panels, panel_figure

STUDY_COLOUR, RUN_COLOUR = "#7f7f7f", "#d62728"


def study_gaps(published: pd.DataFrame) -> pd.DataFrame:
    """The study's 610M MLM-40 − CLM family averages at each step of Tables 6-9:
    family, step, tokens, gap, half_width."""
    curve = published[(published["experiment"] == "data_efficiency") & (published["dataset"] == AVERAGE)]
    mlm = curve[curve["objective"] == "MLM"].set_index(["family", "steps"])
    clm = curve[curve["objective"] == "CLM"].set_index(["family", "steps"])
    gaps = pd.DataFrame({"gap": mlm["mean"] - clm["mean"], "half_width": (mlm["ci"] ** 2 + clm["ci"] ** 2).map(math.sqrt)}).reset_index()
    gaps = gaps.rename(columns={"steps": "step"})
    gaps["tokens"] = gaps["step"] * STUDY_TOKENS_PER_STEP
    return gaps.sort_values(["family", "step"], ignore_index=True)


def run_gaps(trend: pd.DataFrame) -> pd.DataFrame:
    """This run's MLM − CLM family points (budget_trend.csv)."""
    rows = trend[(trend["level"] == "family") & (trend["contrast"] == MLM_MINUS_CLM)]
    return rows.sort_values(["name", "size", "tokens"], ignore_index=True)


def study_curve_figure(trend: pd.DataFrame, path: Path, published: pd.DataFrame | None = None) -> Path | None:
    """The figure, one panel per family this run measured MLM − CLM on; None where it measured none."""
    ours = run_gaps(trend)
    if ours.empty:
        return None
    study = study_gaps(read_published_tables() if published is None else published)
    families = list(dict.fromkeys(ours["name"]))

    def draw(ax: plt.Axes, family: str) -> None:
        theirs = study[study["family"] == family]
        if len(theirs):
            ax.errorbar(
                theirs["tokens"],
                theirs["gap"],
                yerr=theirs["half_width"],
                color=STUDY_COLOUR,
                marker="s",
                markersize=3,
                capsize=2,
                linewidth=1.2,
                label="study: 610M, FineWeb-Edu, Tables 6-9",
            )
        for size, points in ours[ours["name"] == family].groupby("size", sort=False):
            errors = [(points["effect_mean"] - points["effect_low"]).fillna(0), (points["effect_high"] - points["effect_mean"]).fillna(0)]
            ax.errorbar(
                points["tokens"],
                points["effect_mean"],
                yerr=errors,
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
