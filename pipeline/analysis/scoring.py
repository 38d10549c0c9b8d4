"""The study's selection protocol, per (task, run): the LR chosen on mean validation over
the seeds that ran every LR, the test seed mean and CI at it (scores.csv), its metric
breakdowns (metric_details.csv), family averages (family_scores.csv), and how the score
moves over the LR grid (lr_sensitivity.csv).

A grid of this harness carries its choice as its scores.json recorded it (the columns
``chosen_learning_rate`` and ``selection_seed``, :data:`.contract.SELECTION_COLUMNS`); a grid no
record describes (the study's released results) gets them from :func:`with_choice`, by the same rule.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from pipeline.analysis.contract import DETAIL_COLUMNS, LR_MEANS_COLUMNS, RUN_COLUMNS, RUN_FAMILY_SCORES_COLUMNS, RUN_SCORES_COLUMNS
from pipeline.analysis.stats import Estimate, average, mean_interval
from pipeline.finetune.selection import best_on_validation

logger = logging.getLogger(__name__)

# Claim c06's measure: an LR grid point counts as "as good as the best" when its seed
# mean validation score is within this many points of the best one.
NEAR_BEST_POINTS = 1.0


def on_shared_seeds(points: pd.DataFrame, knob: str) -> pd.DataFrame:
    """The points of the seeds that ran at every value of ``knob``: the seeds a choice compares
    values on, read from the grid's shape where no record names them. Every seed on a full grid;
    with ``finetuning.selection_seeds``, those only (the others ran at the chosen LR alone)."""
    values_per_seed = points.groupby("seed")[knob].transform("nunique")
    return points[values_per_seed == points[knob].nunique()]


def choice_on_shared_seeds(points: pd.DataFrame, knob: str) -> tuple[float, pd.DataFrame]:
    """The grid value of ``knob`` with the best mean validation score over the seeds that ran
    every value, and those seeds' points."""
    shared = on_shared_seeds(points, knob)
    return best_on_validation(zip(shared[knob], shared["validation"])), shared


def chosen_on_validation(points: pd.DataFrame, knob: str) -> tuple[float, float, np.ndarray]:
    """The grid value of ``knob`` (LR, C) with the best mean validation score over the
    seeds that ran every value, that mean, and the test scores of all its seeds."""
    best, shared = choice_on_shared_seeds(points, knob)
    validation = shared.loc[shared[knob] == best, "validation"].mean()
    return best, validation, points.loc[points[knob] == best, "test"].to_numpy()


def with_choice(grid: pd.DataFrame) -> pd.DataFrame:
    """``grid`` with the selection columns its points would carry had a scores.json recorded them, per
    (task, run): the LR :func:`chosen_on_validation` takes and whether a point's seed ran every LR."""
    groups = []
    for _, group in grid.groupby(["task", "run"], sort=False):
        chosen, shared = choice_on_shared_seeds(group, "learning_rate")
        groups.append(group.assign(chosen_learning_rate=chosen, selection_seed=group["seed"].isin(shared["seed"])))
    return pd.concat(groups) if groups else grid.assign(chosen_learning_rate=pd.Series(dtype=float), selection_seed=pd.Series(dtype=bool))


def score_table(grid: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, run): the study's protocol, best LR by mean validation (as recorded), test at it.

    Choosing the LR on test would inflate every score by the max over noisy grid
    points; the study selects on validation and so does this table.
    """
    rows = []
    for _, group in grid.groupby(["task", "run"], sort=True):
        best_rate = group["chosen_learning_rate"].iloc[0]
        at_best = group[group["learning_rate"] == best_rate]
        validation, test = at_best.loc[at_best["selection_seed"], "validation"].mean(), at_best["test"].to_numpy()
        rows.append(
            {
                **group.iloc[0][RUN_COLUMNS].to_dict(),
                "best_learning_rate": best_rate,
                "validation_mean": validation,
                "n_seeds": len(test),
                **mean_interval(test, confidence).columns("test_"),
            }
        )
    return pd.DataFrame(rows, columns=RUN_SCORES_COLUMNS)


def lr_means_table(grid: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, run, learning rate): the test score's mean over the seeds there, in the grid's
    order (the learning-rate figure's points)."""
    rows = []
    for _, group in grid.groupby(["task", "run", "learning_rate"], sort=False):
        rows.append(
            {
                **group.iloc[0][[*RUN_COLUMNS, "learning_rate"]].to_dict(),
                "n_seeds": len(group),
                **mean_interval(group["test"].to_numpy(), confidence).columns("test_"),
            }
        )
    return pd.DataFrame(rows, columns=LR_MEANS_COLUMNS)


def detail_table(grid: pd.DataFrame, scores: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, run, metric key): the seed mean and CI of that number at the LR
    score_table chose, so breakdowns (QA has-answer / no-answer, NIAH per cell) follow
    the same protocol as the headline."""
    best = scores.set_index(["task", "run"])["best_learning_rate"]
    rows = []
    for (task, run), group in grid.groupby(["task", "run"], sort=True):
        chosen = group[group["learning_rate"] == best[(task, run)]]
        for key in sorted(set().union(*chosen["test_scores"])):
            values = [point[key] for point in chosen["test_scores"] if key in point]
            rows.append(
                {
                    **chosen.iloc[0][RUN_COLUMNS].to_dict(),
                    "best_learning_rate": best[(task, run)],
                    "key": key,
                    **mean_interval(values, confidence).columns("test_"),
                }
            )
    return pd.DataFrame(rows, columns=DETAIL_COLUMNS)


def family_table(scores: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (family, run): the unweighted mean of the family's task test means.

    Tasks are fine-tuned independently, so the family's standard error is
    sqrt(sum se_i^2) / k over its k tasks, with Welch-Satterthwaite degrees of freedom
    (:func:`.stats.average`). A run missing one of the family's tasks (a config may
    fine-tune some runs on some tasks only) would average a different task set than its
    competitors, so it gets no family average, and the log says so.
    """
    rows = []
    for (family, run), group in scores.groupby(["family", "run"], sort=True):
        expected = set(scores.loc[scores["family"] == family, "task"])
        missing = expected - set(group["task"])
        if missing:
            logger.info("run %s has no %s family average: not fine-tuned on %s", run, family, ", ".join(sorted(missing)))
            continue
        estimate = average([Estimate.from_columns(r, confidence, "test_") for _, r in group.iterrows()])
        first = group.iloc[0]
        rows.append(
            {
                "family": family,
                "run": run,
                **{c: first[c] for c in ("run_name", "objective_kind", "size")},
                "num_tasks": len(group),
                "tasks": " ".join(sorted(group["task"])),
                **estimate.columns("test_"),
            }
        )
    return pd.DataFrame(rows, columns=RUN_FAMILY_SCORES_COLUMNS)


def lr_sensitivity_table(grid: pd.DataFrame) -> pd.DataFrame:
    """Per (task, run): spread and std (over LR points, ddof 0: the grid is the whole
    population considered) of the seed-mean test score, and how many LR points have
    a mean validation score within ``NEAR_BEST_POINTS`` of the best one; means over the
    seeds that ran every LR, so that each LR is seen through the same seeds."""
    shared = grid[grid["selection_seed"].astype(bool)]
    by_rate = shared.groupby([*RUN_COLUMNS, "learning_rate"], sort=True)[["validation", "test"]].mean()
    per_run = by_rate.groupby(level=RUN_COLUMNS, sort=True)
    near_best = by_rate["validation"] >= per_run["validation"].transform("max") - NEAR_BEST_POINTS
    table = pd.DataFrame(
        {
            "num_learning_rates": per_run.size(),
            "test_spread": per_run["test"].max() - per_run["test"].min(),
            "test_std": per_run["test"].std(ddof=0),
            "best_validation_mean": per_run["validation"].max(),
            "num_near_best": near_best.groupby(level=RUN_COLUMNS, sort=True).sum().astype(int),
            "num_selection_seeds": shared.groupby(RUN_COLUMNS, sort=True)["seed"].nunique(),
        }
    )
    return table.reset_index()
