"""The results contract: the columns the tables of ``results/tables/`` are built with, the
verdict words they share, and :class:`Results`, the tables in memory.

Each table is declared once in :mod:`.table_schema` with these columns; the aggregate stage
builds them (:mod:`.aggregate`, :mod:`.table_builds`), the claim checks read :class:`Results`
(:mod:`.claims`), and the report stage reads the CSVs back (:mod:`pipeline.report.render`)
checking every declared column. The claim checks reach neither stage.

Scores are in points (0-100). An ``Estimate`` is five columns, ``{prefix}mean``,
``std_error``, ``df``, ``low`` and ``high`` (:meth:`.stats.Estimate.columns`): a
Student-t interval at ``ReportSpec.confidence``: over fine-tuning seeds for a single
pretraining run, over pretraining seeds for an arm pooled from several (``pretraining_seeds``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.analysis.runs import MASKING_FIELDS
from pipeline.analysis.stats import Estimate
from pipeline.external.published_tables import KEY as PUBLISHED_KEY

# The study's released results recomputed (results/study/, pipeline.analysis.study_results):
# per (model, dataset) at the LR chosen on validation, and paired per-example differences.
STUDY_TASK_COLUMNS = ["model", "family", "dataset", "training_set"]
STUDY_SCORE_COLUMNS = [
    *STUDY_TASK_COLUMNS,
    "best_learning_rate",
    "validation_mean",
    "n_seeds",
    "test_examples",
    *Estimate.column_names("test_"),
]
# ahead: the model the interval puts ahead, or "no difference resolved"
STUDY_PAIRED_COLUMNS = [
    "first",
    "second",
    "family",
    "dataset",
    "training_set",
    "examples",
    *Estimate.column_names("difference_"),
    "ahead",
]
# An outside model fine-tuned here beside the study's own results for it (analysis/study_versus.py);
# examples is 0 and the difference NaN where the two cannot be paired (not_paired_because says why).
STUDY_VERSUS_COLUMNS = [
    "model",
    "study_model",
    "task",
    "dataset",
    "training_set",
    "study_n_seeds",
    *Estimate.column_names("study_test_"),
    "ours_n_seeds",
    *Estimate.column_names("ours_test_"),
    "examples",
    *Estimate.column_names("difference_"),
    "not_paired_because",
]
# What identifies a fine-tuned (task, run) pair in every per-run table.
RUN_COLUMNS = ["task", "family", "metric", "run", "run_name", "objective_kind", "size"]
# One fine-tuning grid point, as scores.json gives it.
GRID_COLUMNS = ["learning_rate", "seed", "validation", "test", "trained_steps", "seconds"]

# What a scores.json records of its grid's LR choice, on each of its points: the rate the study's protocol
# takes (best mean validation over the selection seeds) and whether the point's seed is one of those.
SELECTION_COLUMNS = ["chosen_learning_rate", "selection_seed"]
FINETUNE_GRID_COLUMNS = [*RUN_COLUMNS, *GRID_COLUMNS, *SELECTION_COLUMNS]
# Per (task, run, learning rate): the test score's mean over the seeds there (the LR figure's points).
LR_MEANS_COLUMNS = [*RUN_COLUMNS, "learning_rate", "n_seeds", *Estimate.column_names("test_")]
# pretraining_seeds: 1 for a single run (CI over its fine-tuning seeds); N for an arm pooled
# over N pretraining replicates (CI over replicate means, .replicates).
SCORES_COLUMNS = [*RUN_COLUMNS, "best_learning_rate", "validation_mean", "n_seeds", *Estimate.column_names("test_"), "pretraining_seeds"]
RUN_SCORES_COLUMNS = SCORES_COLUMNS[:-1]
FAMILY_SCORES_COLUMNS = [
    "family",
    "run",
    "run_name",
    "objective_kind",
    "size",
    "num_tasks",
    "tasks",
    *Estimate.column_names("test_"),
    "pretraining_seeds",
]
RUN_FAMILY_SCORES_COLUMNS = FAMILY_SCORES_COLUMNS[:-1]
DETAIL_COLUMNS = [*RUN_COLUMNS, "best_learning_rate", "key", *Estimate.column_names("test_")]
PRETRAINING_COLUMNS = [
    "run",
    "run_name",
    "objective",
    "objective_kind",
    "attention",
    "size",
    "study",
    "description",
    "started_from_kind",
    "started_from_run",
    "started_from_step",
    "carry_optimizer",
    "first_step",
    "num_parameters",
    "num_non_embedding_parameters",
    "num_study_parameters",
    "trained_steps",
    "schedule_steps",
    "stopped_before_decay",
    "budget_steps",
    "num_tokens",
    "loss_fraction",
    "final_train_loss",
    "heldout_loss",
    "heldout_metric_name",
    "heldout_metric_value",
    "wall_seconds",
    "tokens_per_second",
]
TASKS_COLUMNS = [
    "task",
    "family",
    "type",
    "metric",
    "proxy_for",
    "description",
    "derived_labels",
    "labels",
    "num_train",
    "num_validation",
    "num_test",
    "duplicates_removed",
    "majority_label",
    "majority_test_score",
    "num_unanswerable_test",  # extractive QA only (empty elsewhere): test questions without an answer in the passage
]
# Beside a difference: its minimum detectable effect at 80% power, and where its CI spans 0
# the seeds per arm that would detect the observed gap (.comparisons.power_columns): pretraining
# seeds where the arms have several (pretraining_seeds > 1), else fine-tuning seeds.
POWER_COLUMNS = ["difference_mde", "difference_seeds_to_decide"]
# Points a run's CI must clear the trivial baseline by before it counts as having learned a
# task. Without it, a QA model that abstains on all but a handful of questions (3 seeds at
# 33.5 against an always-abstain 33.3, a CI that excludes the floor by 0.04) was judged.
FLOOR_MARGIN = 1.0
# The trivial baseline of a comparison's task (a family: its tasks' highest), and whether
# neither run clears it (.comparisons.comparison_table): such a row is no evidence, not a tie.
FLOOR_COLUMNS = ["floor", "at_floor"]
# Each headline arm against its random-init twin (pooled the same way): what pretraining bought.
VERSUS_RANDOM_COLUMNS = [
    "random_run",
    *Estimate.column_names("random_"),
    *Estimate.column_names("mlm_minus_random_"),
    "mlm_versus_random",
    *Estimate.column_names("clm_minus_random_"),
    "clm_versus_random",
]
COMPARISON_COLUMNS = [
    "level",
    "name",
    "family",
    "size",
    "num_parameters",
    "mlm_run",
    "clm_run",
    *Estimate.column_names("mlm_"),
    *Estimate.column_names("clm_"),
    *Estimate.column_names("difference_"),
    "winner",
    *POWER_COLUMNS,
    *FLOOR_COLUMNS,
    "pretraining_seeds",
    *VERSUS_RANDOM_COLUMNS,
]
BASELINE_COLUMNS = [
    *RUN_COLUMNS,
    "majority_test_score",
    "bag_of_words_examples",
    *Estimate.column_names("bag_of_words_"),
    "random_run",
    *Estimate.column_names("pretrained_"),
    *Estimate.column_names("random_"),
    *Estimate.column_names("minus_random_"),
]
LR_SENSITIVITY_COLUMNS = [
    *RUN_COLUMNS,
    "num_learning_rates",
    "test_spread",
    "test_std",
    "best_validation_mean",
    "num_near_best",
    "num_selection_seeds",
]
OBJECTIVES_COLUMNS = [
    "section",
    "level",
    "name",
    "family",
    "run",
    "run_name",
    "objective",
    "objective_kind",
    "study",
    "size",
    "trained_steps",
    "repeated",
    "clm_share",
    *MASKING_FIELDS,
    "base_run",
    "base_kind",
    *Estimate.column_names("test_"),
    "clm_run",
    *Estimate.column_names("minus_clm_"),
    "versus_clm",
    "mlm_run",
    *Estimate.column_names("minus_mlm_"),
    "versus_mlm",
]
STEP_COLUMNS = ["step", "budget_fraction", "final"]
LEARNING_CURVE_COLUMNS = [
    "level",
    "name",
    "family",
    "run",
    "run_name",
    "objective_kind",
    "size",
    "schedule_steps",
    *STEP_COLUMNS,
    "best_learning_rate",
    *Estimate.column_names("test_"),
]
CURVE_COMPARISON_COLUMNS = [*COMPARISON_COLUMNS[:4], *STEP_COLUMNS, *COMPARISON_COLUMNS[4:]]
# One model's outcome on one minimal pair under one scoring method (1 won, 0.5 tie, 0 lost);
# step is blank for a final model.
MINIMAL_PAIR_OUTCOME_COLUMNS = ["run", "run_name", "size", "step", "method", "pair_id", "kind", "outcome"]
# Per (model, method, kind or "all"): share of pairs won, in points, and the paired
# difference to the random-init weights it started from, scored the same way; an arm of
# several pretraining replicates pooled over them (.zero_shot).
MINIMAL_PAIRS_COLUMNS = [
    "run",
    "run_name",
    "objective_kind",
    "size",
    "step",
    "method",
    "kind",
    "num_pairs",
    *Estimate.column_names("accuracy_"),
    "random_run",
    *Estimate.column_names("minus_random_"),
    "versus_random",
    "minus_random_mde",
    "pretraining_seeds",
]
# Per (size, kind or "all"): the headline MLM and CLM final models, each scored its own way,
# paired by pair (one run per arm) or Welch over replicates; to_decide counts decide_unit.
MINIMAL_PAIRS_COMPARISON_COLUMNS = [
    "size",
    "kind",
    "num_pairs",
    "mlm_run",
    "mlm_method",
    "clm_run",
    "clm_method",
    *Estimate.column_names("mlm_"),
    *Estimate.column_names("clm_"),
    *Estimate.column_names("difference_"),
    "winner",
    "difference_mde",
    "difference_to_decide",
    "decide_unit",
    "pretraining_seeds",
]
# Each headline contrast at every token budget measured (.budget_trend), and its fitted trend.
BUDGET_TREND_COLUMNS = ["level", "name", "size", "contrast", "step", "tokens", *Estimate.column_names("effect_"), "side"]
BUDGET_FIT_COLUMNS = [
    "level",
    "name",
    "size",
    "contrast",
    "num_budgets",
    "final_tokens",
    "final_side",
    "slope_per_decade",
    "intercept",
    "tokens_to_decide",
    "trend",
]
# The study's own MLM-40 − CLM where a headline row (size, level, name) is one it published
# (Tables 2-5, Welch over its 5 fine-tuning seeds a side), shown beside the headline.
STUDY_HEADLINE_COLUMNS = ["size", "level", "name", *Estimate.column_names("difference_")]
# The study's 610M MLM-40 − CLM by family at each step of its data-efficiency tables (6-9), with its tokens.
STUDY_CURVE_COLUMNS = ["family", "step", "tokens", *Estimate.column_names("difference_")]
# published_reference.csv: a cell of the study's Tables 2-17 and this run's number beside it (analysis/study_cells.py).
CELL_COLUMNS = [
    *PUBLISHED_KEY,
    "family",
    "dataset",
    "study_mean",
    "study_ci",
    "run",
    "step",
    "task",
    "mean",
    "low",
    "high",
    "difference",
    "verdict",
    "comparable",
    "not_comparable_because",
]
# published_claims.csv: a claim judged on the published tables alone.
PUBLISHED_CLAIM_COLUMNS = ["id", "verdict", "evidence", "needed"]
# detectable: the largest minimum detectable effect (80% power) among the comparisons a verdict
# judged; to_decide: for an inconclusive one, the decide_unit per arm that would decide them all.
CLAIM_COLUMNS = ["id", "source", "claim", "measure", "status", "verdict", "evidence", "needed", "detectable", "to_decide", "decide_unit"]

# The contrasts budget_trend.csv and budget_fit.csv name in their "contrast" column.
MLM_MINUS_CLM, MLM_MINUS_RANDOM, CLM_MINUS_RANDOM = "MLM − CLM", "MLM − random init", "CLM − random init"
# published_reference.csv's verdicts: a produced cell against the study's interval, or not run.
WITHIN, OUTSIDE, NOT_RUN = "within the study's interval", "outside the study's interval", "not run"
# minimal_pairs.csv's "kind" of the row over every kind of pair.
ALL_KINDS = "all"
# Verdict words per CI side. Not "n/a" for an undefined CI: pandas reads that as NaN.
WINNER = {"above": "MLM", "below": "CLM", "spans": "tie", "undefined": "no CI"}  # of MLM − CLM
VERSUS = {"above": "better", "below": "worse", "spans": "no difference resolved", "undefined": "no CI"}  # of run − reference


@dataclass(frozen=True)
class Results:
    """Every aggregated table by its CSV's stem (:mod:`.table_schema` declares them), plus what
    the claim checks need besides them."""

    tables: Mapping[str, pd.DataFrame]
    confidence: float
    objective_params: Mapping[str, Mapping[str, Any]]  # each run's objective parameters, as summary.json records them
    # Whose runs these are, for the verdicts' evidence: this run's, the study's released results or its published tables.
    measured_by: str = "this run"


def size_parameters(pretraining: pd.DataFrame) -> dict[str, float]:
    """Parameters per size (mean over that size's pretrained runs), smallest first: the
    order every table and figure lists sizes in."""
    return pretraining.groupby("size")["num_parameters"].mean().sort_values().to_dict()
