"""Learning curves: every fine-tuned checkpoint of a run scored like its final model
(learning_curves.csv), and MLM − CLM at every step both headline runs have
(curve_comparison.csv)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import pandas as pd

from pipeline.analysis.comparisons import by_level, comparison_table
from pipeline.analysis.contract import CURVE_COMPARISON_COLUMNS, LEARNING_CURVE_COLUMNS
from pipeline.analysis.replicates import pool_replicates
from pipeline.analysis.scoring import family_table, score_table
from pipeline.analysis.stats import Estimate
from pipeline.errors import PipelineError

# One step of the curves: (step, task scores, family averages), scores.csv's and family_scores.csv's columns.
CurvePoint = tuple[int, pd.DataFrame, pd.DataFrame]


def check_curve_tasks(curve_grid: pd.DataFrame, grid: pd.DataFrame) -> None:
    """Every checkpoint of a run is fine-tuned on one task set, its final model's or part of
    it (``finetuning.by_task.<task>.learning_curves: false`` keeps a task off the curves), so
    that a curve's family averages are over one task set from its first point to its last
    (:func:`curve_points` takes the final point on the same tasks)."""
    final = {run: set(tasks) for run, tasks in grid.groupby("run")["task"]}
    for run, points in curve_grid.groupby("run", sort=True):
        tasks = points.groupby("pretraining_step", sort=True)["task"].agg(lambda names: tuple(sorted(set(names))))
        extra = sorted(set(points["task"]) - final.get(run, set()))
        if extra:
            raise PipelineError(
                f"run {run!r} has curve scores for task {extra[0]!r} but no final-model scores.json for it among the scores"
            )
        if tasks.nunique() > 1:
            step = next(step for step, names in tasks.items() if names != tasks.iloc[0])
            raise PipelineError(
                f"run {run!r} has curve scores for tasks {', '.join(tasks.iloc[0])} at step {tasks.index[0]}"
                f" but {', '.join(tasks[step])} at step {step}"
            )


def curve_points(curve_grid: pd.DataFrame, run_scores: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> Iterator[CurvePoint]:
    """(step, task scores, family averages) of the runs with curve scores, at every step
    any of them has a point: the checkpoints, scored by :func:`score_table` and
    :func:`family_table` like the final models, and each run's final model from
    ``run_scores`` at its trained_steps; pretraining replicates pooled per step as the final
    models' are (:func:`.replicates.pool_replicates`). A run stopped before its schedule's
    decay (pretraining.stop_at_step) is on the curves by its final model alone, an undecayed
    point as a checkpoint is."""
    steps = pretraining.set_index("run")["trained_steps"]
    stopped = pretraining.loc[pretraining["stopped_before_decay"], "run"]
    pairs = [curve_grid[["run", "task"]], run_scores.loc[run_scores["run"].isin(stopped), ["run", "task"]]]
    on_curves = pd.MultiIndex.from_frame(pd.concat(pairs, ignore_index=True).drop_duplicates())
    finals = run_scores[pd.MultiIndex.from_frame(run_scores[["run", "task"]]).isin(on_curves)]
    points = [score_table(grid, confidence).assign(step=step) for step, grid in curve_grid.groupby("pretraining_step", sort=True)]
    for step, at_step in pd.concat([*points, finals.assign(step=finals["run"].map(steps))], ignore_index=True).groupby("step", sort=True):
        pooled = pool_replicates(at_step, ["task"], confidence)
        yield int(step), pooled, pool_replicates(family_table(at_step, confidence), ["family"], confidence)


def learning_curve_table(curve_grid: pd.DataFrame, run_scores: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """learning_curves.csv: every curve point, task and family."""
    return learning_curve_rows(curve_points(curve_grid, run_scores, pretraining, confidence), pretraining)


def learning_curve_rows(points: Iterable[CurvePoint], pretraining: pd.DataFrame) -> pd.DataFrame:
    """learning_curves.csv's rows of ``points`` (:func:`curve_points`' or the study's published ones)."""
    # a curve's budget is its schedule's: a run stopped before the decay (stop_at_step) ends short of it
    budgets = pretraining.set_index("run")["schedule_steps"]
    curves = []
    for step, at_step, families in points:
        for level, name, _, group in by_level(at_step, families):
            for _, run in group.iterrows():
                budget = budgets[run["run"]]
                curves.append(
                    {
                        "level": level,
                        "name": name,
                        **{c: run[c] for c in ("family", "run", "run_name", "objective_kind", "size")},
                        "schedule_steps": budget,
                        "step": step,
                        "budget_fraction": step / budget,
                        "final": step == budget,
                        "best_learning_rate": run.get("best_learning_rate", math.nan),
                        **{c: run[c] for c in Estimate.column_names("test_")},
                    }
                )
    return pd.DataFrame(curves, columns=LEARNING_CURVE_COLUMNS)


def curve_comparison_table(
    curve_grid: pd.DataFrame,
    run_scores: pd.DataFrame,
    comparison: pd.DataFrame,
    pretraining: pd.DataFrame,
    tasks: pd.DataFrame,
    confidence: float,
) -> pd.DataFrame:
    """curve_comparison.csv of this run's curves (:func:`curve_comparison_rows`)."""
    points = curve_points(curve_grid, run_scores, pretraining, confidence)
    return curve_comparison_rows(points, comparison, pretraining, tasks, confidence)


def curve_comparison_rows(
    points: Iterable[CurvePoint], comparison: pd.DataFrame, pretraining: pd.DataFrame, tasks: pd.DataFrame, confidence: float
) -> pd.DataFrame:
    """curve_comparison.csv: MLM − CLM (:func:`comparison_table`, restricted to
    comparison.csv's runs) wherever both of a size's headline runs have a point."""
    budgets = pretraining.set_index("run")["schedule_steps"]
    references = set(comparison["mlm_run"]) | set(comparison["clm_run"])
    gaps = []
    for step, at_step, families in points:
        headline = comparison_table(
            at_step[at_step["run"].isin(references)], families[families["run"].isin(references)], pretraining, tasks, confidence
        )
        for _, gap in headline.iterrows():
            mlm_budget, clm_budget = budgets[gap["mlm_run"]], budgets[gap["clm_run"]]
            fraction = step / mlm_budget if mlm_budget == clm_budget else math.nan
            gaps.append({**gap, "step": step, "budget_fraction": fraction, "final": step == mlm_budget == clm_budget})
    return pd.DataFrame(gaps, columns=CURVE_COMPARISON_COLUMNS)
