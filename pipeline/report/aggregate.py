"""``python -m pipeline aggregate``: per-run result JSON into tidy CSV tables.

Inputs are the contract with the other stages: ``results/finetune/{task}/{run}/
scores.json``, ``results/pretrain/{run}/summary.json`` and ``results/data/tasks/
{task}/stats.json``, and optionally the learning-curve scores of intermediate
checkpoints, ``results/finetune/{task}/{run}/step-{N}/scores.json``, and the
bag-of-words reference, ``results/baselines/{task}/bag_of_words/scores.json``. Each
is validated here, so a malformed file fails with one line naming the file and key
instead of a pandas traceback three tables later.

Outputs (one directory, written atomically, with ``provenance.json``):

====================  ============================================================
finetune_grid.csv     one row per (task, run, learning_rate, seed)
scores.csv            per (task, run): best LR on validation, test seed mean and CI
family_scores.csv     per (family, run): average of the family's task means
comparison.csv        per (task | family, size): MLM, CLM, MLM − CLM (Welch), winner
baselines.csv         per (task, pretrained run): majority class, bag of words,
                      random init, gain
lr_sensitivity.csv    per (task, run): how much the test score moves over the LR grid
metric_details.csv    per (task, run, key): every number the task's metric gives (QA
                      has-answer / no-answer EM and F1, IR MRR@10, NIAH accuracy per
                      context length and depth) at the best LR, seed mean and CI
objectives.csv        per (task | family, pretrained run, report section): score, Δ vs
                      the CLM and the MLM run of its size or step budget (Welch),
                      masking, CLM share
learning_curves.csv   per (task | family, run with curve scores, pretraining step):
                      score as in scores.csv, step, num_steps, budget_fraction, final
curve_comparison.csv  per (task | family, size, step) where the CLM and the MLM run
                      both have a point: comparison.csv's columns, step, fraction
pretraining.csv       one row per pretraining summary
tasks.csv             one row per task (provenance of the downstream data)
claims.csv            one verdict per claim of the claims file (see :mod:`.claims`)
====================  ============================================================

Scores are in points (0-100). Every interval is a Student-t interval over fine-tuning
seeds at ``ReportSpec.confidence`` (see :mod:`.stats`).

Names. A run is ``{name}-{size}``; ``run`` joins every table. Its ``run_name`` (the
``name``) is what ``scores.json`` calls ``objective``: the fine-tuning stage only knows
the run it was given. ``summary.json``'s ``objective`` is the config name of the
objective the run trained with, kept as ``objective`` in pretraining.csv and
objectives.csv: the same as the name for a from-scratch run (``mlm_20``), the *second*
objective for two-stage and continued runs (``clm25_mlm`` and ``mlm_cpt_on_clm`` train
``mlm``). The headline MLM vs CLM comparison takes the runs *named* ``mlm`` and ``clm``.

objectives.csv groups runs by the report section that shows them (``section``, in
:data:`SECTIONS` order): by objective kind, except masking-ratio and replacement-rule
variants of MLM, two-stage and continued runs, which get sections of their own. The
MLM and CLM runs are also repeated (``repeated`` true) as reference points in the
sections whose runs are measured against them: the 40% point of the masking sweep, the
0% and 100% ends of the two-stage CLM share. ``clm_share`` (two-stage section only) is
the fraction of the step budget trained with CLM: first_step / num_steps for a split, 1
or 0 for a shorter budget's CLM or MLM decay branch, which are that budget's ends and
the references its splits are measured against.

Learning curves. A ``--curve-scores`` file has the schema of a final model's
scores.json plus ``pretraining_step`` (a final model's file has none, or null). A
checkpoint goes through the final model's protocol (LR chosen on validation at that
checkpoint, test seed mean), and every curve ends with its run's final model at step
= num_steps, so its last point is the headline score. A checkpoint must be fine-tuned
on the tasks its final model was, or its family average would average other tasks
than the curve's last point. curve_comparison.csv pairs the headline's CLM and MLM
runs only (those of comparison.csv: a two-stage run with curves is of kind MLM too)
at every step both have. ``budget_fraction`` (step / num_steps) is how the claims
compare steps across scales; it is blank in curve_comparison.csv where the two runs'
budgets differ.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline import strict
from pipeline.config import ReportSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json
from pipeline.finetune.selection import best_on_validation
from pipeline.provenance import write_provenance
from pipeline.report import claims as claim_checks
from pipeline.report.runs import MLM_DEFAULTS, PLACEMENT_COLUMNS, SECTIONS, pick_run, reference_runs, run_placements
from pipeline.report.stats import Estimate, average, ci_side, difference, mean_interval

logger = logging.getLogger(__name__)

NUMBER = (int, float)
OPTIONAL_NUMBER = (int, float, type(None))
OPTIONAL_INT = (int, type(None))
OPTIONAL_STR = (str, type(None))

SCORES_FIELDS: dict[str, Any] = {
    "task": str, "family": str, "metric": str, "higher_is_better": bool, "run": str,
    "objective": str, "objective_kind": str, "size": str, "attention": str, "grid": list,
}  # fmt: skip
GRID_FIELDS: dict[str, Any] = {
    "learning_rate": NUMBER, "seed": int, "validation": NUMBER, "test": NUMBER, "num_steps": int, "seconds": NUMBER,
}  # fmt: skip
SUMMARY_FIELDS: dict[str, Any] = {
    "run": str, "objective": str, "objective_kind": str, "attention": str, "size": str, "study": str, "description": str,
    "started_from": dict, "first_step": int, "num_parameters": int, "num_non_embedding_parameters": int, "num_steps": int,
    "num_tokens": int, "loss_fraction": NUMBER, "final_train_loss": NUMBER, "heldout_loss": NUMBER, "heldout_metric": dict,
    "wall_seconds": NUMBER, "tokens_per_second": NUMBER,
}  # fmt: skip
SUMMARY_CHOICES = {"study": ("objectives", "short_budget", "two_stage", "continued"), "attention": ("causal", "bidirectional", "prefix")}
STARTED_FROM_FIELDS: dict[str, Any] = {"kind": str, "run": OPTIONAL_STR, "step": OPTIONAL_INT, "carry_optimizer": bool}
STARTED_FROM_CHOICES = {"kind": ("initial", "checkpoint", "final")}
# The value is null where the run's loss never trains the LM head the yardstick reads (ELECTRA).
HELDOUT_METRIC_FIELDS: dict[str, Any] = {"name": str, "value": OPTIONAL_NUMBER}
TASK_STATS_FIELDS: dict[str, Any] = {
    "task": str, "family": str, "type": str, "metric": str, "proxy_for": OPTIONAL_STR, "description": str,
    "labels": list, "num_rows": dict, "label_counts": dict, "duplicates_removed": int, "majority_label": OPTIONAL_STR,
    "majority_test_score": OPTIONAL_NUMBER, "source": dict,
}  # fmt: skip
NUM_ROWS_FIELDS: dict[str, Any] = {"train": int, "validation": int, "test": int}

# Claim c06's measure: an LR grid point counts as "as good as the best" when its seed
# mean validation score is within this many points of the best one.
NEAR_BEST_POINTS = 1.0

RUN_COLUMNS = ["task", "family", "metric", "run", "run_name", "objective_kind", "size"]
PRETRAINING_COLUMNS = [
    "run", "run_name", "objective", "objective_kind", "attention", "size", "study", "description",
    "started_from_kind", "started_from_run", "started_from_step", "carry_optimizer", "first_step",
    "num_parameters", "num_non_embedding_parameters", "num_steps", "num_tokens", "loss_fraction", "final_train_loss",
    "heldout_loss", "heldout_metric_name", "heldout_metric_value", "wall_seconds", "tokens_per_second",
]  # fmt: skip

COMPARISON_COLUMNS = [
    "level", "name", "family", "size", "num_parameters", "mlm_run", "clm_run",
    *Estimate.column_names("mlm_"), *Estimate.column_names("clm_"), *Estimate.column_names("difference_"), "winner",
]  # fmt: skip
STEP_COLUMNS = ["step", "budget_fraction", "final"]
LEARNING_CURVE_COLUMNS = [
    "level", "name", "family", "run", "run_name", "objective_kind", "size", "num_steps", *STEP_COLUMNS,
    "best_learning_rate", *Estimate.column_names("test_"),
]  # fmt: skip
CURVE_COMPARISON_COLUMNS = [*COMPARISON_COLUMNS[:4], *STEP_COLUMNS, *COMPARISON_COLUMNS[4:]]
DETAIL_COLUMNS = [*RUN_COLUMNS, "best_learning_rate", "key", *Estimate.column_names("test_")]

OBJECTIVES_COLUMNS = [
    "section", "level", "name", "family", "run", "run_name", "objective", "objective_kind", "study", "size", "num_steps", "repeated",
    "clm_share", *MLM_DEFAULTS, "base_run", "base_kind", *Estimate.column_names("test_"),
    "clm_run", *Estimate.column_names("minus_clm_"), "versus_clm", "mlm_run", *Estimate.column_names("minus_mlm_"), "versus_mlm",
]  # fmt: skip


@dataclass(frozen=True)
class Results:
    """Every aggregated table, plus what the claim checkers need besides them."""

    finetune_grid: pd.DataFrame
    scores: pd.DataFrame
    metric_details: pd.DataFrame
    family_scores: pd.DataFrame
    comparison: pd.DataFrame
    baselines: pd.DataFrame
    lr_sensitivity: pd.DataFrame
    objectives: pd.DataFrame
    learning_curves: pd.DataFrame
    curve_comparison: pd.DataFrame
    pretraining: pd.DataFrame
    tasks: pd.DataFrame
    confidence: float
    objective_configs: Mapping[str, Mapping[str, Any]]  # the config's objectives, for masking ratios

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tables written as CSV, by file stem."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {name: value for name, value in values.items() if isinstance(value, pd.DataFrame)}


# ------------------------------------------------------------------ reading inputs


def validated(
    record: Any, fields: Mapping[str, Any], path: str | Path, prefix: str = "", choices: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """Check that ``record`` is an object with every key of ``fields`` of its type, and
    that each key of ``choices`` holds one of its allowed values.

    ``fields`` maps a key to a type or tuple of types (bool never passes for a number).
    The error names the file and the dotted key, e.g. ``scores.json: missing key
    'grid[2].test'``.
    """
    if not isinstance(record, dict):
        raise PipelineError(f"{path}: {prefix.rstrip('.') or 'the top level'} should be a JSON object")
    for key, kind in fields.items():
        where = f"{prefix}{key}"
        if key not in record:
            raise PipelineError(f"{path}: missing key {where!r}")
        value = record[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise PipelineError(f"{path}: key {where!r} should be {names}, got {value!r:.60}")
    for key, allowed in (choices or {}).items():
        if record[key] not in allowed:
            raise PipelineError(f"{path}: key {prefix + key!r} should be one of {', '.join(map(repr, allowed))}, got {record[key]!r:.60}")
    return record


def name_of_run(run: str, size: str, path: Path) -> str:
    """The name of run ``{name}-{size}``; a run not ending in its size is an error."""
    suffix = f"-{size}"
    if not run.endswith(suffix) or run == suffix:
        raise PipelineError(f"{path}: key 'run' = {run!r} is not '{{name}}-{size}'")
    return run[: -len(suffix)]


def checkpoint_step(record: dict[str, Any], path: Path, budgets: pd.DataFrame | None) -> int | None:
    """The pretraining step a scores.json was fine-tuned from: None for a final model.

    Without ``budgets`` the file must be a final model's (no ``pretraining_step``, or
    null): a checkpoint's scores passed as --scores would silently replace its final
    model. With them (pretraining.csv rows) it must name a step strictly inside its
    run's budget: the final model is step num_steps and comes from --scores, and a
    second stage saves no checkpoint before its split.
    """
    if budgets is None:
        if record.get("pretraining_step") is not None:
            raise PipelineError(f"{path}: key 'pretraining_step' = {record['pretraining_step']!r}: an intermediate checkpoint's scores belong in --curve-scores")
        return None
    step = validated(record, {"pretraining_step": int}, path)["pretraining_step"]
    runs = budgets.set_index("run")
    if record["run"] not in runs.index:
        raise PipelineError(f"{path}: key 'run' = {record['run']!r} has no summary.json among --summaries")
    first, last = runs.loc[record["run"], ["first_step", "num_steps"]]
    if not first < step < last:
        raise PipelineError(f"{path}: key 'pretraining_step' = {step} is not strictly between the first step ({first}) and num_steps ({last}) of run {record['run']!r}")
    return step


def read_finetune_grid(paths: Sequence[Path], budgets: pd.DataFrame | None = None) -> pd.DataFrame:
    """All fine-tuning grid points of all ``scores.json`` files, one row each.

    With ``budgets`` the files are learning-curve scores (see :func:`checkpoint_step`)
    and the rows get their ``pretraining_step``.
    """
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, int | None], Path] = {}
    for path in paths:
        record = validated(read_json(path), SCORES_FIELDS, path)
        step = checkpoint_step(record, path, budgets)
        key = (record["task"], record["run"], step)
        if key in seen:
            at_step = "" if step is None else f" step {step}"
            raise PipelineError(f"{path}: task {key[0]!r} run {key[1]!r}{at_step} is also in {seen[key]}")
        seen[key] = path
        if not record["higher_is_better"]:
            raise PipelineError(f"{path}: key 'higher_is_better' is false; the report compares higher-is-better metrics only")
        if not record["grid"]:
            raise PipelineError(f"{path}: key 'grid' is empty")
        if record["objective"] != name_of_run(record["run"], record["size"], path):
            raise PipelineError(f"{path}: key 'objective' = {record['objective']!r} is not the run's name (the run without '-{record['size']}')")
        points: set[tuple[float, int]] = set()
        for index, point in enumerate(record["grid"]):
            validated(point, GRID_FIELDS, path, f"grid[{index}].")
            for split in ("validation", "test"):
                if not 0 <= point[split] <= 100:
                    raise PipelineError(f"{path}: key 'grid[{index}].{split}' = {point[split]} is not in points (0-100)")
            if (point["learning_rate"], point["seed"]) in points:
                raise PipelineError(f"{path}: grid[{index}] repeats learning_rate {point['learning_rate']} seed {point['seed']}")
            points.add((point["learning_rate"], point["seed"]))
            rows.append({
                **{c: record[c] for c in RUN_COLUMNS if c != "run_name"}, "run_name": record["objective"], "pretraining_step": step,
                **{k: point[k] for k in GRID_FIELDS}, "test_scores": metric_scores(point, path, index),
            })  # fmt: skip
        rates = {rate for rate, _ in points}
        if not any(all((rate, seed) in points for rate in rates) for _, seed in points):
            raise PipelineError(f"{path}: key 'grid' has no seed that ran every learning rate, the seeds the LR choice compares")
    columns = [*RUN_COLUMNS, *(["pretraining_step"] if budgets is not None else []), *GRID_FIELDS, "test_scores"]
    frame = pd.DataFrame(rows, columns=columns)
    families = frame.groupby("task")["family"].unique()
    for task, names in families.items():
        if len(names) > 1:
            raise PipelineError(f"scores.json files disagree on the family of task {task!r}: {', '.join(sorted(names))}")
    return frame


def metric_scores(point: dict[str, Any], path: Path, index: int) -> dict[str, float]:
    """A grid point's whole metric dict (``test_scores``): the headline alone when absent."""
    scores = point.get("test_scores", {"headline": point["test"]})
    if not isinstance(scores, dict) or not all(isinstance(v, NUMBER) and not isinstance(v, bool) for v in scores.values()):
        raise PipelineError(f"{path}: key 'grid[{index}].test_scores' should be an object of numbers")
    return scores


def read_pretraining(paths: list[Path]) -> pd.DataFrame:
    """One row per pretraining ``summary.json``, ``started_from`` and the held-out
    metric flattened, the run's name beside its objective's config name."""
    rows = []
    for path in paths:
        record = validated(read_json(path), SUMMARY_FIELDS, path, choices=SUMMARY_CHOICES)
        start = validated(record["started_from"], STARTED_FROM_FIELDS, path, "started_from.", STARTED_FROM_CHOICES)
        metric = validated(record["heldout_metric"], HELDOUT_METRIC_FIELDS, path, "heldout_metric.")
        rows.append({
            **record,
            "run_name": name_of_run(record["run"], record["size"], path),
            **{f"started_from_{k}": start[k] for k in ("kind", "run", "step")}, "carry_optimizer": start["carry_optimizer"],
            "heldout_metric_name": metric["name"], "heldout_metric_value": metric["value"],
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=PRETRAINING_COLUMNS)
    repeated = frame["run"][frame["run"].duplicated()]
    if len(repeated):
        raise PipelineError(f"two pretraining summaries for run {repeated.iloc[0]!r}")
    return frame.sort_values(["num_parameters", "run"], ignore_index=True)


def read_tasks(paths: list[Path]) -> pd.DataFrame:
    """One row per task ``stats.json``: what the task is and how it was built."""
    rows = []
    for path in paths:
        record = validated(read_json(path), TASK_STATS_FIELDS, path)
        counts = validated(record["num_rows"], NUM_ROWS_FIELDS, path, "num_rows.")
        rows.append({
            **{k: record[k] for k in ("task", "family", "type", "metric", "proxy_for", "description")},
            "derived_labels": record.get("derived_labels"),
            "labels": " / ".join(str(label) for label in record["labels"]),
            **{f"num_{split}": counts[split] for split in NUM_ROWS_FIELDS},
            "duplicates_removed": record["duplicates_removed"],
            "majority_label": record["majority_label"],
            "majority_test_score": record["majority_test_score"],
        })  # fmt: skip
    frame = pd.DataFrame(rows)
    repeated = frame["task"][frame["task"].duplicated()]
    if len(repeated):
        raise PipelineError(f"two stats.json files for task {repeated.iloc[0]!r}")
    return frame.sort_values("task", ignore_index=True)


BAG_OF_WORDS_FIELDS = {"task": str, "metric": str, "num_examples": int, "grid": list}
BAG_OF_WORDS_POINT_FIELDS = {"regularization": (int, float), "seed": int, "validation": (int, float), "test": (int, float)}


def read_bag_of_words(paths: Sequence[Path], confidence: float) -> pd.DataFrame:
    """Per task: the bag-of-words reference, C picked by mean validation, test seed mean and CI."""
    rows = []
    for path in paths:
        record = validated(read_json(path), BAG_OF_WORDS_FIELDS, path)
        grid = pd.DataFrame([validated(point, BAG_OF_WORDS_POINT_FIELDS, path, f"grid[{i}].") for i, point in enumerate(record["grid"])])
        if grid.empty:
            raise PipelineError(f"{path}: key 'grid' is empty")
        _, _, test = chosen_on_validation(grid, "regularization")
        rows.append({"task": record["task"], "bag_of_words_examples": record["num_examples"], **mean_interval(test, confidence).columns("bag_of_words_")})
    return pd.DataFrame(rows, columns=["task", "bag_of_words_examples", *Estimate.column_names("bag_of_words_")])


# ------------------------------------------------------------------ the tables


def on_shared_seeds(points: pd.DataFrame, knob: str, keys: Sequence[str] = ()) -> pd.DataFrame:
    """The points of the seeds that ran at every value of ``knob`` (per group of ``keys``):
    the seeds a choice compares values on. Every seed on a full grid; with
    ``finetuning.selection_seeds``, those only (the others ran at the chosen LR alone)."""
    values_per_seed = points.groupby([*keys, "seed"])[knob].transform("nunique")
    values = points.groupby(list(keys))[knob].transform("nunique") if keys else points[knob].nunique()
    return points[values_per_seed == values]


def chosen_on_validation(points: pd.DataFrame, knob: str) -> tuple[float, float, np.ndarray]:
    """The grid value of ``knob`` (LR, C) with the best mean validation score over the
    seeds that ran every value, that mean, and the test scores of all its seeds."""
    shared = on_shared_seeds(points, knob)
    best = best_on_validation(zip(shared[knob], shared["validation"]))
    validation = shared.loc[shared[knob] == best, "validation"].mean()
    return best, validation, points.loc[points[knob] == best, "test"].to_numpy()


def score_table(grid: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, run): the study's protocol, best LR by mean validation, test at it.

    Choosing the LR on test would inflate every score by the max over noisy grid
    points; the study selects on validation and so does this table.
    """
    rows = []
    for _, group in grid.groupby(["task", "run"], sort=True):
        best_rate, validation, test = chosen_on_validation(group, "learning_rate")
        rows.append({
            **group.iloc[0][RUN_COLUMNS].to_dict(),
            "best_learning_rate": best_rate,
            "validation_mean": validation,
            "n_seeds": len(test),
            **mean_interval(test, confidence).columns("test_"),
        })  # fmt: skip
    return pd.DataFrame(rows)


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
            rows.append({
                **chosen.iloc[0][RUN_COLUMNS].to_dict(), "best_learning_rate": best[(task, run)], "key": key,
                **mean_interval(values, confidence).columns("test_"),
            })  # fmt: skip
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
        rows.append({
            "family": family, "run": run,
            **{c: first[c] for c in ("run_name", "objective_kind", "size")},
            "num_tasks": len(group), "tasks": " ".join(sorted(group["task"])),
            **estimate.columns("test_"),
        })  # fmt: skip
    return pd.DataFrame(rows)


# Verdict words per CI side. Not "n/a" for an undefined CI: pandas reads that as NaN.
WINNER = {"above": "MLM", "below": "CLM", "spans": "tie", "undefined": "no CI"}  # of MLM − CLM
VERSUS = {"above": "better", "below": "worse", "spans": "no difference resolved", "undefined": "no CI"}  # of run − reference


def by_level(scores: pd.DataFrame, families: pd.DataFrame) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """(level, task or family name, size, its runs) for every task and every family
    average at every size: the units that comparison.csv and objectives.csv compare."""
    for level, frame in (("task", scores), ("family", families)):
        for (name, size), group in frame.groupby([level, "size"], sort=True):
            yield level, name, size, group


def size_parameters(pretraining: pd.DataFrame) -> dict[str, float]:
    """Parameters per size (mean over that size's pretrained runs), smallest first."""
    return pretraining.groupby("size")["num_parameters"].mean().sort_values().to_dict()


def comparison_table(scores: pd.DataFrame, families: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, size) and per (family, size): MLM, CLM and MLM − CLM with Welch CI."""
    parameters = size_parameters(pretraining)
    rows = []
    for level, name, size, group in by_level(scores, families):
        mlm, clm = pick_run(group, "mlm"), pick_run(group, "clm")
        if mlm is None or clm is None:
            continue
        mlm_score = Estimate.from_columns(mlm, confidence, "test_")
        clm_score = Estimate.from_columns(clm, confidence, "test_")
        gap = difference(mlm_score, clm_score)
        rows.append({
            "level": level, "name": name, "family": group["family"].iloc[0], "size": size,
            "num_parameters": parameters.get(size, math.nan), "mlm_run": mlm["run"], "clm_run": clm["run"],
            **mlm_score.columns("mlm_"), **clm_score.columns("clm_"), **gap.columns("difference_"),
            "winner": WINNER[ci_side(gap)],
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


BASELINE_COLUMNS = [
    *RUN_COLUMNS, "majority_test_score", "bag_of_words_examples", *Estimate.column_names("bag_of_words_"), "random_run",
    *Estimate.column_names("pretrained_"), *Estimate.column_names("random_"), *Estimate.column_names("minus_random_"),
]  # fmt: skip


def baseline_table(scores: pd.DataFrame, tasks: pd.DataFrame, bag_of_words: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, pretrained run): majority class, the bag-of-words reference (NaN where the
    task has none), random init at the same size, and pretrained − random with a Welch CI
    (what pretraining bought at all)."""
    majority = tasks.set_index("task")["majority_test_score"]
    lexical = bag_of_words.set_index("task")
    undefined = Estimate.undefined(confidence)
    rows = []
    for (task, size), group in scores.groupby(["task", "size"], sort=True):
        if task not in majority.index:
            raise PipelineError(f"task {task!r} has scores but no stats.json among --task-stats")
        random = pick_run(group, "random")
        random_score = Estimate.from_columns(random, confidence, "test_") if random is not None else undefined
        for _, run in group[group["objective_kind"] != "random"].iterrows():
            score = Estimate.from_columns(run, confidence, "test_")
            gain = difference(score, random_score) if random is not None else undefined
            rows.append({
                **run[RUN_COLUMNS].to_dict(),
                "majority_test_score": majority[task],
                "bag_of_words_examples": lexical["bag_of_words_examples"].get(task, math.nan),
                **(Estimate.from_columns(lexical.loc[task], confidence, "bag_of_words_") if task in lexical.index else undefined).columns("bag_of_words_"),
                "random_run": random["run"] if random is not None else "",
                **score.columns("pretrained_"), **random_score.columns("random_"), **gain.columns("minus_random_"),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def lr_sensitivity_table(grid: pd.DataFrame) -> pd.DataFrame:
    """Per (task, run): spread and std (over LR points, ddof 0: the grid is the whole
    population considered) of the seed-mean test score, and how many LR points have
    a mean validation score within ``NEAR_BEST_POINTS`` of the best one; means over the
    seeds that ran every LR, so that each LR is seen through the same seeds."""
    shared = on_shared_seeds(grid, "learning_rate", ["task", "run"])
    by_rate = shared.groupby([*RUN_COLUMNS, "learning_rate"], sort=True)[["validation", "test"]].mean()
    per_run = by_rate.groupby(level=RUN_COLUMNS, sort=True)
    near_best = by_rate["validation"] >= per_run["validation"].transform("max") - NEAR_BEST_POINTS
    table = pd.DataFrame({
        "num_learning_rates": per_run.size(),
        "test_spread": per_run["test"].max() - per_run["test"].min(),
        "test_std": per_run["test"].std(ddof=0),
        "best_validation_mean": per_run["validation"].max(),
        "num_near_best": near_best.groupby(level=RUN_COLUMNS, sort=True).sum().astype(int),
        "num_selection_seeds": shared.groupby(RUN_COLUMNS, sort=True)["seed"].nunique(),
    })  # fmt: skip
    return table.reset_index()


def reference_gap(score: Estimate, run: str, reference: pd.Series | None, confidence: float) -> tuple[Estimate, str]:
    """``run`` − ``reference`` with Welch's CI, and the verdict word; none for a missing
    reference, nor for the reference itself (a run is not independent of itself)."""
    if reference is None:
        return Estimate.undefined(confidence), "no reference run"
    if reference["run"] == run:
        return Estimate.undefined(confidence), "reference"
    gap = difference(score, Estimate.from_columns(reference, confidence, "test_"))
    return gap, VERSUS[ci_side(gap)]


def objectives_table(
    scores: pd.DataFrame, families: pd.DataFrame, placements: pd.DataFrame, references: Mapping[str, Mapping[str, str | None]], confidence: float
) -> pd.DataFrame:
    """Per (task | family, pretrained run, section showing it): the score, and its
    difference from its CLM and MLM reference runs (:func:`.runs.reference_runs`: those
    of its size, or of its step budget) with Welch CIs."""
    rows = []
    for level, name, size, group in by_level(scores, families):
        scored = group.set_index("run", drop=False)
        for _, run in group[group["objective_kind"] != "random"].iterrows():
            score = Estimate.from_columns(run, confidence, "test_")
            row = {"level": level, "name": name, **{c: run[c] for c in ("family", "run", "run_name", "objective_kind", "size")}, **score.columns("test_")}
            for kind, reference_run in references[run["run"]].items():
                reference = scored.loc[reference_run] if reference_run in scored.index else None
                gap, verdict = reference_gap(score, run["run"], reference, confidence)
                row.update({f"{kind}_run": "" if reference is None else reference["run"], **gap.columns(f"minus_{kind}_"), f"versus_{kind}": verdict})
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[c for c in OBJECTIVES_COLUMNS if c not in PLACEMENT_COLUMNS or c == "run"])
    placed = frame.merge(placements, on="run")[OBJECTIVES_COLUMNS]
    # Ordered, so that sorting the table follows SECTIONS; build_results writes it back as text.
    return placed.assign(section=pd.Categorical(placed["section"], categories=SECTIONS, ordered=True))


def check_curve_tasks(curve_grid: pd.DataFrame, grid: pd.DataFrame) -> None:
    """Every checkpoint of a run is fine-tuned on exactly its final model's tasks, so
    that a curve's family averages are over one task set from its first point to its last."""
    final = {run: set(tasks) for run, tasks in grid.groupby("run")["task"]}
    for (run, step), points in curve_grid.groupby(["run", "pretraining_step"], sort=True):
        extra, absent = sorted(set(points["task"]) - final.get(run, set())), sorted(final.get(run, set()) - set(points["task"]))
        if extra:
            raise PipelineError(f"run {run!r} has curve scores at step {step} for task {extra[0]!r} but no final-model scores.json for it among --scores")
        if absent:
            raise PipelineError(f"run {run!r} has no curve scores at step {step} for task {absent[0]!r}, which its final model was fine-tuned on")


def curve_points(curve_grid: pd.DataFrame, scores: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> Iterator[tuple[int, pd.DataFrame, pd.DataFrame]]:
    """(step, task scores, family averages) of the runs with curve scores, at every step
    any of them has a point: the checkpoints, scored by :func:`score_table` and
    :func:`family_table` like the final models, and each run's final model from
    ``scores`` at its num_steps."""
    budgets = pretraining.set_index("run")["num_steps"]
    finals = scores[scores["run"].isin(curve_grid["run"])]
    points = [score_table(grid, confidence).assign(step=step) for step, grid in curve_grid.groupby("pretraining_step", sort=True)]
    for step, at_step in pd.concat([*points, finals.assign(step=finals["run"].map(budgets))], ignore_index=True).groupby("step", sort=True):
        yield int(step), at_step, family_table(at_step, confidence)


def learning_curve_tables(
    curve_grid: pd.DataFrame, scores: pd.DataFrame, comparison: pd.DataFrame, pretraining: pd.DataFrame, confidence: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """learning_curves.csv and curve_comparison.csv: every curve point, and MLM − CLM
    (:func:`comparison_table`, restricted to comparison.csv's runs) wherever both of a
    size's headline runs have a point."""
    budgets = pretraining.set_index("run")["num_steps"]
    references = set(comparison["mlm_run"]) | set(comparison["clm_run"])
    curves, gaps = [], []
    for step, at_step, families in curve_points(curve_grid, scores, pretraining, confidence):
        for level, name, _, group in by_level(at_step, families):
            for _, run in group.iterrows():
                budget = budgets[run["run"]]
                curves.append({
                    "level": level, "name": name, **{c: run[c] for c in ("family", "run", "run_name", "objective_kind", "size")},
                    "num_steps": budget, "step": step, "budget_fraction": step / budget, "final": step == budget,
                    "best_learning_rate": run.get("best_learning_rate", math.nan), **{c: run[c] for c in Estimate.column_names("test_")},
                })  # fmt: skip
        headline = comparison_table(at_step[at_step["run"].isin(references)], families[families["run"].isin(references)], pretraining, confidence)
        for _, gap in headline.iterrows():
            mlm_budget, clm_budget = budgets[gap["mlm_run"]], budgets[gap["clm_run"]]
            fraction = step / mlm_budget if mlm_budget == clm_budget else math.nan
            gaps.append({**gap, "step": step, "budget_fraction": fraction, "final": step == mlm_budget == clm_budget})
    return pd.DataFrame(curves, columns=LEARNING_CURVE_COLUMNS), pd.DataFrame(gaps, columns=CURVE_COMPARISON_COLUMNS)


def by_size(frame: pd.DataFrame, pretraining: pd.DataFrame, before: list[str], after: list[str]) -> pd.DataFrame:
    """Sort with sizes by parameter count (unknown sizes last), so that every table
    and figure lists the smaller model first."""
    rank = {size: i for i, size in enumerate(size_parameters(pretraining))}
    ranked = frame.assign(size_rank=frame["size"].map(rank).fillna(len(rank)))
    return ranked.sort_values([*before, "size_rank", "size", *after], kind="stable").drop(columns="size_rank").reset_index(drop=True)


def check_consistent(grid: pd.DataFrame, other: pd.DataFrame, keys: list[str], columns: list[str], name: str) -> None:
    """Files written by different stages must agree on what a run or task is."""
    merged = grid[keys + columns].drop_duplicates().merge(other[keys + columns], on=keys, suffixes=("", "_other"))
    for column in columns:
        differing = merged[merged[column] != merged[f"{column}_other"]]
        if len(differing):
            item = differing.iloc[0]
            raise PipelineError(f"{keys[0]} {item[keys[0]]!r}: scores.json says {column} {item[column]!r}, its {name} says {item[f'{column}_other']!r}")


def build_results(
    scores_paths: Sequence[Path],
    summary_paths: Sequence[Path],
    task_stats_paths: Sequence[Path],
    confidence: float,
    objective_configs: Mapping[str, Mapping[str, Any]],
    curve_paths: Sequence[Path] = (),
    bag_of_words_paths: Sequence[Path] = (),
) -> Results:
    """Read and validate every input, then derive every table."""
    grid = read_finetune_grid(scores_paths)
    pretraining = read_pretraining(summary_paths)
    tasks = read_tasks(task_stats_paths)
    curve_grid = read_finetune_grid(curve_paths, pretraining)
    for scored in (grid, curve_grid):
        check_consistent(scored, pretraining, ["run"], ["run_name", "objective_kind", "size"], "summary.json")
        check_consistent(scored, tasks, ["task"], ["family"], "stats.json")
    pretrained = set(grid.loc[grid["objective_kind"] != "random", "run"])
    missing = sorted(pretrained - set(pretraining["run"]))
    if missing:
        raise PipelineError(f"run {missing[0]!r} has fine-tuning scores but no summary.json among --summaries")
    check_curve_tasks(curve_grid, grid)
    scores = by_size(score_table(grid, confidence), pretraining, ["task"], ["run"])
    families = by_size(family_table(scores, confidence), pretraining, ["family"], ["run"])
    comparison = by_size(comparison_table(scores, families, pretraining, confidence), pretraining, [], ["family", "level", "name"])
    objectives = objectives_table(scores, families, run_placements(pretraining, objective_configs), reference_runs(pretraining), confidence)
    curves, curve_comparison = learning_curve_tables(curve_grid, scores, comparison, pretraining, confidence)
    return Results(
        finetune_grid=by_size(grid.drop(columns="test_scores"), pretraining, ["task"], ["run", "learning_rate", "seed"]),
        scores=scores,
        metric_details=by_size(detail_table(grid, scores, confidence), pretraining, ["task"], ["run", "key"]),
        family_scores=families,
        comparison=comparison,
        baselines=by_size(baseline_table(scores, tasks, read_bag_of_words(bag_of_words_paths, confidence), confidence), pretraining, ["task"], ["run"]),
        lr_sensitivity=by_size(lr_sensitivity_table(grid), pretraining, ["task"], ["run"]),
        objectives=by_size(objectives, pretraining, ["section", "level", "name"], ["num_steps", "clm_share", "mask_ratio", "run"]).astype({"section": str}),
        learning_curves=by_size(curves, pretraining, [], ["family", "level", "name", "run", "step"]),
        curve_comparison=by_size(curve_comparison, pretraining, [], ["family", "level", "name", "step"]),
        pretraining=pretraining,
        tasks=tasks,
        confidence=confidence,
        objective_configs=objective_configs,
    )


# ------------------------------------------------------------------ the stage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="ReportSpec as JSON (confidence, claims_file)")
    parser.add_argument("--scores", nargs="+", type=Path, required=True, help="results/finetune/{task}/{run}/scores.json files")
    parser.add_argument(
        "--curve-scores", nargs="*", type=Path, default=[],
        help="results/finetune/{task}/{run}/step-{N}/scores.json files of intermediate checkpoints (learning curves); none or absent without",
    )  # fmt: skip
    parser.add_argument(
        "--bag-of-words", nargs="*", type=Path, default=[],
        help="results/baselines/{task}/bag_of_words/scores.json files of the lexical reference; none or absent without",
    )  # fmt: skip
    parser.add_argument("--summaries", nargs="+", type=Path, required=True, help="results/pretrain/{run}/summary.json files")
    parser.add_argument("--task-stats", nargs="+", type=Path, required=True, help="results/data/tasks/{task}/stats.json files")
    parser.add_argument("--objectives", required=True, help="the config's objectives as JSON (masking ratios and replacement rules)")
    parser.add_argument("--out", type=Path, required=True, help="output directory, e.g. results/tables")


def run(args: argparse.Namespace) -> None:
    spec: ReportSpec = strict.parse_json(ReportSpec, args.spec, "report")
    objectives = strict.json_argument(args.objectives, "--objectives")
    if not isinstance(objectives, dict) or not all(isinstance(v, dict) for v in objectives.values()):
        raise PipelineError("--objectives: expected a JSON object of name -> {kind: ..., ...}")
    results = build_results(args.scores, args.summaries, args.task_stats, spec.confidence, objectives, args.curve_scores, args.bag_of_words)
    claims = claim_checks.read_claims(spec.claims_file) if spec.claims_file else []
    verdicts = claim_checks.check_claims(claims, results)
    inputs: dict[str, str | Path] = {
        f"{role}:{path}": path
        for role, paths in (
            ("scores", args.scores), ("curve_scores", args.curve_scores), ("bag_of_words", args.bag_of_words),
            ("summary", args.summaries), ("task_stats", args.task_stats),
        )  # fmt: skip
        for path in paths
    }
    if spec.claims_file:
        inputs["claims"] = spec.claims_file
    with atomic_path(args.out) as out:
        out.mkdir()
        for name, frame in {**results.frames(), "claims": verdicts}.items():
            frame.to_csv(out / f"{name}.csv", index=False)
        write_provenance(out, {"report": strict.to_plain(spec), "objectives": objectives}, inputs)
