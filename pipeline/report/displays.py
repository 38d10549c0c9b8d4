"""Where each result table is shown: every display a table's declaration names
(:class:`pipeline.analysis.table_schema.TableSchema`'s ``displays``), its report section, its place
there and the tables it renders from the CSVs the aggregate stage wrote.

The display side of a table lives here, apart from its build, so that changing how a table
looks reruns the report and not the aggregate. A display renders: it reads columns and formats
them, and computes no statistic (those are the aggregate's, in :mod:`pipeline.analysis`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from pipeline.report.appendix_tables import metric_detail_tables, tasks_table
from pipeline.report.evidence_tables import budget_fit_table, versus_random_table
from pipeline.report.outside_tables import outside_models_table
from pipeline.report.published_reference_tables import published_reference_tables
from pipeline.report.tables import (
    Table,
    baselines_table,
    claims_table,
    headline_tables,
    learning_curve_tables,
    lr_sensitivity_table,
    pretraining_table,
    published_claims_table,
    scale_table,
)
from pipeline.report.zero_shot_tables import minimal_pairs_comparison_table, minimal_pairs_table

# (every aggregated table by name, the confidence level) -> the tables one display shows
Renderer = Callable[[Mapping[str, pd.DataFrame], float], list[Table]]


@dataclass(frozen=True)
class Display:
    section: str  # anchor of the report section it goes in (render.report_sections)
    order: int  # its place among that section's tables
    render: Renderer
    empty: str = ""  # said in its place when render gives no table
    css: str = ""  # class of a div around each of its tables, e.g. "headline"


def headline(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """The headline tables, with the study's own MLM − CLM beside each row it published too."""
    study = {(row["size"], row["level"], row["name"]): row for _, row in frames["study_headline"].iterrows()}
    return headline_tables(frames["comparison"], frames["baselines"], confidence, study)


def budget_fit(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    fit = frames["budget_fit"]
    return [budget_fit_table(fit, frames["budget_trend"], confidence)] if len(fit) else []


def claims(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """This run's verdicts beside the published tables' and the released results' (``study_claims``,
    which the report stage adds where the study's results were given), then the tables' evidence."""
    checked, published = frames["claims"], frames["published_claims"]
    return [claims_table(checked, published, frames.get("study_claims")), published_claims_table(published, checked)]


def minimal_pairs(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [minimal_pairs_table(frames["minimal_pairs"], confidence)] if len(frames["minimal_pairs"]) else []


def minimal_pairs_comparison(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    comparison = frames["minimal_pairs_comparison"]
    return [minimal_pairs_comparison_table(comparison, confidence)] if len(comparison) else []


def outside_scores(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [outside_models_table(frames["outside_scores"], frames["run_scores"])] if len(frames["outside_scores"]) else []


DISPLAYS: dict[str, Display] = {
    "headline": Display(
        "headline", 0, headline, empty="No model size has both an MLM and a CLM run, so there is nothing to compare.", css="headline"
    ),
    "versus_random": Display("evidence", 0, lambda f, c: [versus_random_table(f["comparison"], f["minimal_pairs"], c)]),
    "budget_fit": Display(
        "evidence", 1, budget_fit, empty="No token-budget trend: the config fine-tunes no learning-curve checkpoints of both headline runs."
    ),
    "baselines": Display("baselines", 0, lambda f, c: [baselines_table(f["baselines"])]),
    "claims": Display("claims", 0, claims),
    "curve_comparison": Display(
        "learning-curves",
        0,
        lambda f, c: learning_curve_tables(f["curve_comparison"], c),
        empty="No size has learning-curve scores for both its CLM and its MLM run, so no difference is tabulated.",
    ),
    "lr_sensitivity": Display("finetuning", 0, lambda f, c: [lr_sensitivity_table(f["lr_sensitivity"], f["run_scores"])]),
    "metric_details": Display(
        "downstream",
        0,
        lambda f, c: metric_detail_tables(f["metric_details"], f["tasks"]),
        empty="No task's metric gives more than its headline number.",
    ),
    "minimal_pairs": Display("zero-shot", 1, minimal_pairs),
    "minimal_pairs_comparison": Display("zero-shot", 0, minimal_pairs_comparison),
    "outside_scores": Display("outside", 0, outside_scores),
    "scale": Display("scale", 0, lambda f, c: [scale_table(f["pretraining"])]),
    "pretraining": Display("pretraining", 0, lambda f, c: [pretraining_table(f["pretraining"])]),
    "published_reference": Display("published", 0, published_reference_tables),
    "tasks": Display("provenance", 0, lambda f, c: [tasks_table(f["tasks"])]),
}
