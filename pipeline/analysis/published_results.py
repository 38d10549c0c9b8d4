"""The study's published tables (:mod:`pipeline.external.published_tables`) as the tables the claim
checks read (:class:`~pipeline.analysis.contract.Results`), so that one set of checks
(:mod:`.claims`) judges every claim on this run and on the study's own numbers alike.

Each published model becomes a run of this harness, named and placed as a config of the study's
scope would name it: ``clm-610M``, ``mlm-610M`` (MLM-40) and ``mlm_20-610M`` from Tables 2-5; the
610M curves of Tables 6-9 as checkpoints of ``clm-610M`` and ``mlm-610M``; the CLM→MLM splits of
Tables 10-13 as ``clm3k_mlm9k-610M`` started from a ``clm-610M`` checkpoint, MLM and CLM alone at a
shorter budget as its decay branches ``mlm_12k-610M`` (the 42k ends are the headline runs, which the
tables share); MLM continued pretraining of Tables 14-17 as ``mlm_cpt12k_on_clm-610M`` from the
final ``clm-610M``. Whether the shorter budgets branch from the full run's checkpoints is not
published; nothing judged here depends on it.

Each cell is a mean over the study's 5 fine-tuning seeds with a 95% half-width, read as a
Student-t interval with 4 degrees of freedom; a family's score is its published ``Average``. The
tables are then built by this run's own functions (:func:`.comparisons.comparison_table`,
:func:`.comparisons.objectives_table`, :func:`.curves.curve_comparison_rows`), so a difference of
two cells is Welch's everywhere. They hold one score per model at its chosen LR: no LR grid, no
pretraining summary, no objective but CLM and MLM, and their checks say "not measured" for those.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pipeline.analysis.comparisons import comparison_table, in_order, objectives_table
from pipeline.analysis.contract import (
    FAMILY_SCORES_COLUMNS,
    LR_SENSITIVITY_COLUMNS,
    PRETRAINING_COLUMNS,
    SCORES_COLUMNS,
    TASKS_COLUMNS,
    Results,
)
from pipeline.analysis.curves import CurvePoint, curve_comparison_rows, learning_curve_rows
from pipeline.analysis.runs import MASKING_FIELDS, reference_runs, run_placements
from pipeline.analysis.stats import Estimate, t_critical
from pipeline.analysis.study_cells import STUDY_SEEDS, STUDY_SIZES, STUDY_STEPS
from pipeline.external.encodeval import STUDY_METRICS
from pipeline.external.published_tables import AVERAGE, FAMILY_DATASETS, UNANSWERABLE_FREE

MEASURED_BY = "the study's published tables"
PUBLISHED_CONFIDENCE = 0.95  # the level of every published half-width
PARAMETERS = {size: count for size, count in STUDY_SIZES.values()}  # "610M" -> its Table 1 architecture's count
ATTENTION = {"clm": "causal", "mlm": "bidirectional"}


def published_estimate(mean: float, half_width: float, confidence: float) -> Estimate:
    """A published mean and 95% half-width as a t-estimate over the study's 5 fine-tuning seeds, at ``confidence``."""
    return Estimate(mean, half_width / t_critical(PUBLISHED_CONFIDENCE, STUDY_SEEDS - 1), STUDY_SEEDS - 1, confidence)


def thousands(steps: int) -> str:
    return f"{steps // 1000}k"


def model_of(cell: pd.Series) -> tuple[dict[str, Any], int | None]:
    """The run a published cell is of (pretraining.csv's columns, and ``mask_ratio`` for an MLM
    objective) and its step on that run's curve (None: the run's final model)."""
    size, experiment, objective, masking = cell["size"], cell["experiment"], cell["objective"], int(cell["masking"])
    kind = "clm" if objective == "CLM" else "mlm"

    def run(name: str, kind: str, study: str, steps: int, **started: Any) -> dict[str, Any]:
        return {
            "run": f"{name}-{size}",
            "run_name": name,
            "objective": kind,
            "objective_kind": kind,
            "attention": ATTENTION[kind],
            "size": size,
            "study": study,
            "description": f"the study's {size} {name}",
            "started_from_kind": "initial",
            "started_from_run": None,
            "first_step": 0,
            "num_parameters": PARAMETERS[size],
            "num_study_parameters": PARAMETERS[size],
            "trained_steps": steps,
            "schedule_steps": steps,
            "stopped_before_decay": False,  # its checkpoints are points of a curve, its 42k models decayed ends
            "budget_steps": STUDY_STEPS,
            "mask_ratio": masking / 100 if kind == "mlm" else math.nan,
            **started,
        }

    headline = run("clm" if kind == "clm" else "mlm" if masking == 40 else f"mlm_{masking}", kind, "objectives", STUDY_STEPS)
    if experiment == "data_efficiency":
        return headline, int(cell["steps"])
    if experiment == "two_stage" and objective == "CLM+MLM":
        first, rest = int(cell["clm_steps"]), int(cell["mlm_steps"])
        name = f"clm{thousands(first)}_mlm{thousands(rest)}"
        branch = {"started_from_kind": "checkpoint", "started_from_run": f"clm-{size}", "started_from_step": first, "first_step": first}
        return run(name, "mlm", "two_stage", first + rest, **branch), None
    if experiment == "two_stage" and cell["steps"] != STUDY_STEPS:
        return run(f"{kind}_{thousands(int(cell['steps']))}", kind, "short_budget", int(cell["steps"])), None
    if experiment == "cpt" and cell["cpt_steps"] > 0:
        base = "clm" if objective == "CLM" else "mlm"
        continued = {"started_from_kind": "final", "started_from_run": f"{base}-{size}"}
        return run(f"mlm_cpt{thousands(int(cell['cpt_steps']))}_on_{base}", "mlm", "continued", int(cell["cpt_steps"]), **continued), None
    return headline, None  # Tables 2-5, and the 42k ends and bases the other tables share with them


def score_rows(cells: pd.DataFrame, confidence: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(every model's run, task scores and family scores), each with its ``step`` (None for a final
    model): scores.csv's and family_scores.csv's columns, one row per (run, step, dataset)."""
    runs, tasks, families = {}, [], []
    for _, cell in cells.iterrows():
        model, step = model_of(cell)
        runs[model["run"]] = model
        estimate = published_estimate(float(cell["mean"]), float(cell["ci"]), confidence).columns("test_")
        row = {c: model[c] for c in ("run", "run_name", "objective_kind", "size")} | estimate
        row |= {"step": step, "n_seeds": STUDY_SEEDS, "pretraining_seeds": 1}
        if cell["dataset"] == AVERAGE:
            datasets = FAMILY_DATASETS[cell["family"]]
            families.append({"family": cell["family"], "num_tasks": len(datasets), "tasks": " ".join(datasets), **row})
        else:
            tasks.append({"task": cell["dataset"], "family": cell["family"], "metric": STUDY_METRICS[cell["family"]], **row})
    # a model two tables share (a 42k end, a continued run's base) is one run: its cells are equal (read_published_tables checks)
    task_frame = pd.DataFrame(tasks).drop_duplicates(["run", "step", "task"])
    family_frame = pd.DataFrame(families).drop_duplicates(["run", "step", "family"])
    return pd.DataFrame(list(runs.values())), task_frame, family_frame


def curve_steps(tasks: pd.DataFrame, families: pd.DataFrame, pretraining: pd.DataFrame) -> list[CurvePoint]:
    """The points of every run with checkpoints (Tables 6-9), each curve ending with its final model."""
    steps = pretraining.set_index("run")["trained_steps"]
    on_curves = set(tasks.loc[tasks["step"].notna(), "run"])

    def at_steps(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame[frame["run"].isin(on_curves)]
        return frame.assign(step=frame["step"].fillna(frame["run"].map(steps)).astype(int))

    tasks, families = at_steps(tasks), at_steps(families)
    return [(int(step), group, families[families["step"] == step]) for step, group in tasks.groupby("step", sort=True)]


def published_results(published: pd.DataFrame, confidence: float) -> Results:
    """The tables the claim checks read, built from the published cells (``read_published_tables()``)."""
    runs, tasks, families = score_rows(published, confidence)
    pretraining = runs.reindex(columns=PRETRAINING_COLUMNS).sort_values(["num_parameters", "run"], ignore_index=True)
    objective_params = {
        row["run"]: {field: row["mask_ratio"] if field == "mask_ratio" else math.nan for field in MASKING_FIELDS}
        for _, row in runs.iterrows()
        if row["objective_kind"] == "mlm"
    }
    datasets = tasks[["task", "family", "metric"]].drop_duplicates("task")
    # a dataset with no unanswerable question says 0; SQuAD-v2's count is not published (blank)
    unanswerable = datasets["task"].map(lambda task: 0 if task in UNANSWERABLE_FREE else math.nan)
    task_table = datasets.assign(proxy_for=None, num_unanswerable_test=unanswerable).reindex(columns=TASKS_COLUMNS)
    final_tasks, final_families = (
        frame[frame["step"].isna()].reindex(columns=columns)
        for frame, columns in ((tasks, SCORES_COLUMNS), (families, FAMILY_SCORES_COLUMNS))
    )
    comparison = in_order("comparison", comparison_table(final_tasks, final_families, pretraining, task_table, confidence), pretraining)
    placements = run_placements(pretraining, objective_params)
    objectives = objectives_table(final_tasks, final_families, placements, reference_runs(pretraining), confidence)
    points = curve_steps(tasks, families, pretraining)
    curve_comparison = curve_comparison_rows(points, comparison, pretraining, task_table, confidence)
    tables = {
        "pretraining": pretraining,
        "tasks": task_table,
        "scores": final_tasks,
        "comparison": comparison,
        "objectives": in_order("objectives", objectives, pretraining).astype({"section": str}),
        "learning_curves": in_order("learning_curves", learning_curve_rows(points, pretraining), pretraining),
        "curve_comparison": in_order("curve_comparison", curve_comparison, pretraining),
        "lr_sensitivity": pd.DataFrame(columns=LR_SENSITIVITY_COLUMNS),
    }
    return Results(tables, confidence, objective_params, MEASURED_BY)
