"""Every result table declared once, in one list: its CSV's name, what a row is, its columns, the
tables its build reads, and the report displays that show it.

The aggregate stage builds each table (:mod:`.table_builds`, by name) in the order their
``needs`` allow, checks its columns against this declaration and writes it as
``results/tables/{name}.csv``; the claim checks read the tables as
:class:`~pipeline.analysis.contract.Results`; the report stage reads each CSV back against the
same columns and renders each display named here (:mod:`pipeline.report.displays`). This
module imports column lists and nothing that builds, so the report stage loads the schema
without the analysis, and an analysis edit that changes no schema reruns no report.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.analysis.contract import (
    BASELINE_COLUMNS,
    BUDGET_FIT_COLUMNS,
    BUDGET_TREND_COLUMNS,
    CELL_COLUMNS,
    CLAIM_COLUMNS,
    COMPARISON_COLUMNS,
    CURVE_COMPARISON_COLUMNS,
    DETAIL_COLUMNS,
    FAMILY_SCORES_COLUMNS,
    FINETUNE_GRID_COLUMNS,
    LEARNING_CURVE_COLUMNS,
    LR_MEANS_COLUMNS,
    LR_SENSITIVITY_COLUMNS,
    MINIMAL_PAIRS_COLUMNS,
    MINIMAL_PAIRS_COMPARISON_COLUMNS,
    OBJECTIVES_COLUMNS,
    PRETRAINING_COLUMNS,
    PUBLISHED_CLAIM_COLUMNS,
    RUN_SCORES_COLUMNS,
    SCORES_COLUMNS,
    STUDY_CURVE_COLUMNS,
    STUDY_HEADLINE_COLUMNS,
    TASKS_COLUMNS,
)
from pipeline.registry import Registry


@dataclass(frozen=True)
class TableSchema:
    name: str  # the CSV's stem, the key in Results.tables and in table_builds.BUILDS
    description: str  # one line: what a row is (aggregate --help lists them)
    columns: tuple[str, ...]
    needs: tuple[str, ...] = ()  # the tables its build reads (built before it)
    displays: tuple[str, ...] = ()  # names of the displays showing it (pipeline/report/displays.py)
    # Its rows' sort keys before and after the size, sizes smallest first (comparisons.in_order), for
    # the tables listed by size; every build of the table, this run's or the published tables', orders so.
    order: tuple[tuple[str, ...], tuple[str, ...]] | None = None


SCHEMAS: Registry[TableSchema] = Registry("result table")

# The tables the claim checks read (pipeline/analysis/claims/), so built before them.
JUDGED = ("comparison", "curve_comparison", "learning_curves", "lr_sensitivity", "objectives", "pretraining", "scores", "tasks")

for schema in (
    TableSchema("pretraining", "one row per pretraining summary", tuple(PRETRAINING_COLUMNS), displays=("scale", "pretraining")),
    TableSchema("tasks", "one row per task (provenance of the downstream data)", tuple(TASKS_COLUMNS), displays=("tasks",)),
    TableSchema(
        "finetune_grid",
        "one row per (task, run, learning_rate, seed)",
        tuple(FINETUNE_GRID_COLUMNS),
        order=(("task",), ("run", "learning_rate", "seed")),
    ),
    TableSchema(
        "run_scores",
        "per (task, run): best LR on validation, test seed mean and CI; every pretraining replicate apart",
        tuple(RUN_SCORES_COLUMNS),
        order=(("task",), ("run",)),
    ),
    TableSchema(
        "scores",
        "per (task, arm): run_scores with an arm's replicates pooled (CI over pretraining seeds, see replicates.py)",
        tuple(SCORES_COLUMNS),
        needs=("run_scores",),
    ),
    TableSchema(
        "family_scores",
        "per (family, arm): average of the family's task means, pooled",
        tuple(FAMILY_SCORES_COLUMNS),
        needs=("run_scores",),
        order=(("family",), ("run",)),
    ),
    TableSchema(
        "outside_scores",
        "per (task, outside model): run_scores' columns, size 'outside'",
        tuple(RUN_SCORES_COLUMNS),
        displays=("outside_scores",),
    ),
    TableSchema(
        "lr_means",
        "per (task, run, learning_rate): the test score's mean over the seeds, with its interval",
        tuple(LR_MEANS_COLUMNS),
        needs=("finetune_grid",),
    ),
    TableSchema(
        "lr_sensitivity",
        "per (task, run): how much the test score moves over the LR grid",
        tuple(LR_SENSITIVITY_COLUMNS),
        displays=("lr_sensitivity",),
        order=(("task",), ("run",)),
    ),
    TableSchema(
        "metric_details",
        "per (task, run, key): every number the task's metric gives (QA has-answer / no-answer EM and F1, "
        "IR MRR@10, NIAH accuracy per context length and depth) at the best LR, seed mean and CI",
        tuple(DETAIL_COLUMNS),
        needs=("run_scores",),
        displays=("metric_details",),
        order=(("task",), ("run", "key")),
    ),
    TableSchema(
        "comparison",
        "per (task | family, size): MLM, CLM, MLM − CLM (Welch), winner, and each against its random-init twin",
        tuple(COMPARISON_COLUMNS),
        needs=("scores", "family_scores"),
        displays=("versus_random", "headline"),
        order=((), ("family", "level", "name")),
    ),
    TableSchema(
        "baselines",
        "per (task, pretrained run): majority class, bag of words, random init, gain",
        tuple(BASELINE_COLUMNS),
        needs=("scores",),
        displays=("baselines",),
        order=(("task",), ("run",)),
    ),
    TableSchema(
        "objectives",
        "per (task | family, pretrained run, report section): score, Δ vs the CLM and the MLM run of its size "
        "or step budget (Welch), masking, CLM share",
        tuple(OBJECTIVES_COLUMNS),
        needs=("scores", "family_scores"),
        order=(("section", "level", "name"), ("trained_steps", "clm_share", "mask_ratio", "run")),
    ),
    TableSchema(
        "learning_curves",
        "per (task | family, run with curve scores, pretraining step): score as in scores.csv, step, schedule_steps, "
        "budget_fraction, final",
        tuple(LEARNING_CURVE_COLUMNS),
        needs=("run_scores",),
        order=((), ("family", "level", "name", "run", "step")),
    ),
    TableSchema(
        "curve_comparison",
        "per (task | family, size, step) where the CLM and the MLM run both have a point: comparison.csv's columns, step, fraction",
        tuple(CURVE_COMPARISON_COLUMNS),
        needs=("run_scores", "comparison"),
        displays=("curve_comparison",),
        order=((), ("family", "level", "name", "step")),
    ),
    TableSchema(
        "minimal_pairs",
        "per (model, scoring method, kind of pair): share of minimal pairs won, and the paired gain over random init",
        tuple(MINIMAL_PAIRS_COLUMNS),
        displays=("minimal_pairs",),
    ),
    TableSchema(
        "minimal_pairs_comparison",
        "per (size, kind): MLM − CLM on minimal pairs",
        tuple(MINIMAL_PAIRS_COMPARISON_COLUMNS),
        needs=("minimal_pairs",),
        displays=("minimal_pairs_comparison",),
    ),
    TableSchema(
        "budget_trend",
        "per (task | family | minimal pairs, size, contrast, budget): MLM − CLM and each minus random init "
        "at every checkpoint's token count",
        tuple(BUDGET_TREND_COLUMNS),
        needs=("learning_curves", "curve_comparison", "comparison", "minimal_pairs", "minimal_pairs_comparison"),
    ),
    TableSchema(
        "budget_fit",
        "per (task | family | minimal pairs, size, contrast): a trend line in log10(tokens) and the budget it says would decide",
        tuple(BUDGET_FIT_COLUMNS),
        needs=("budget_trend",),
        displays=("budget_fit",),
    ),
    TableSchema(
        "published_claims",
        "per claim: its verdict on the study's published Tables 2-17, with the evidence or what they lack",
        tuple(PUBLISHED_CLAIM_COLUMNS),
    ),
    TableSchema(
        "published_reference",
        "per cell of the study's Tables 2-17: its published mean and CI, this run's where it produced it, and the verdict",
        tuple(CELL_COLUMNS),
        needs=("pretraining", "scores", "family_scores", "learning_curves"),
        displays=("published_reference",),
    ),
    TableSchema(
        "study_headline",
        "per headline row (size, level, name) the study published too: its MLM-40 − CLM (Tables 2-5)",
        tuple(STUDY_HEADLINE_COLUMNS),
        needs=("comparison",),
    ),
    TableSchema(
        "study_curve",
        "per (family, step) of the study's 610M data-efficiency tables: its MLM-40 − CLM and the tokens seen",
        tuple(STUDY_CURVE_COLUMNS),
    ),
    TableSchema(
        "claims",
        "one verdict per claim of the claims file",
        tuple(CLAIM_COLUMNS),
        needs=(*JUDGED, "published_claims"),
        displays=("claims",),
    ),
):
    SCHEMAS.add(schema.name, schema, __name__)


def build_order() -> list[TableSchema]:
    """Every declared table after the tables it needs, alphabetical where they allow."""
    done: dict[str, TableSchema] = {}
    pending = sorted(SCHEMAS)
    while pending:
        ready = [name for name in pending if all(need in done for need in SCHEMAS[name].needs)]
        if not ready:
            raise ValueError(f"result tables whose needs are undeclared or circular: {pending}")
        for name in ready:
            done[name] = SCHEMAS[name]
        pending = [name for name in pending if name not in done]
    return list(done.values())
