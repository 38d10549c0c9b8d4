"""Reading and validating what the other stages wrote for the report: fine-tuning
``scores.json`` (final models and learning-curve checkpoints), pretraining
``summary.json``, task ``stats.json``, the bag-of-words reference's ``scores.json`` and
the zero-shot minimal pairs' ``scores.json``.

Each file is checked key by key (:func:`.records.validated`) and against the others
(one run, one family per task), so a malformed or misplaced file is a one-line error
naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.contract import (
    GRID_COLUMNS,
    MINIMAL_PAIR_OUTCOME_COLUMNS,
    PRETRAINING_COLUMNS,
    RUN_COLUMNS,
    SELECTION_COLUMNS,
    TASKS_COLUMNS,
)
from pipeline.analysis.pair_outcomes import pair_outcomes
from pipeline.analysis.records import NUMBER, OPTIONAL_INT, OPTIONAL_NUMBER, OPTIONAL_STR, validated
from pipeline.analysis.stats import Estimate, mean_interval
from pipeline.errors import PipelineError
from pipeline.external.study_protocol import PROTOCOL_KEYS
from pipeline.files import read_json
from pipeline.finetune.selection import best_on_validation

SCORES_FIELDS: dict[str, Any] = {
    "task": str,
    "family": str,
    "metric": str,
    "metric_headline": str,
    "higher_is_better": bool,
    "run": str,
    "objective": str,
    "objective_kind": str,
    "size": str,
    "attention": str,
    "selection_seeds": list,
    "chosen_learning_rate": NUMBER,
    "grid": list,
}
GRID_FIELDS: dict[str, Any] = dict(zip(GRID_COLUMNS, (NUMBER, int, NUMBER, NUMBER, int, NUMBER)))
SUMMARY_FIELDS: dict[str, Any] = {
    "run": str,
    "objective": str,
    "objective_kind": str,
    "objective_params": dict,
    "attention": str,
    "size": str,
    "study": str,
    "description": str,
    "started_from": dict,
    "first_step": int,
    "num_parameters": int,
    "num_non_embedding_parameters": int,
    "num_study_parameters": int,
    "trained_steps": int,
    "schedule_steps": int,
    "stopped_before_decay": bool,
    "budget_steps": int,
    "num_tokens": int,
    "loss_fraction": NUMBER,
    "final_train_loss": NUMBER,
    "heldout_loss": NUMBER,
    "heldout_metric": dict,
    "wall_seconds": NUMBER,
    "tokens_per_second": NUMBER,
}
SUMMARY_CHOICES = {"study": ("objectives", "short_budget", "two_stage", "continued"), "attention": ("causal", "bidirectional", "prefix")}
STARTED_FROM_FIELDS: dict[str, Any] = {"kind": str, "run": OPTIONAL_STR, "step": OPTIONAL_INT, "carry_optimizer": bool}
STARTED_FROM_CHOICES = {"kind": ("initial", "checkpoint", "final", "outside")}
# The value is null where it could not be measured (a loss that never trains the LM head the shared yardstick reads
# and measures nothing of its own).
HELDOUT_METRIC_FIELDS: dict[str, Any] = {"name": str, "value": OPTIONAL_NUMBER}
TASK_STATS_FIELDS: dict[str, Any] = {
    "task": str,
    "family": str,
    "type": str,
    "metric": str,
    "proxy_for": OPTIONAL_STR,
    "description": str,
    "labels": list,
    "num_rows": dict,
    "label_counts": dict,
    "duplicates_removed": int,
    "majority_label": OPTIONAL_STR,
    "majority_test_score": OPTIONAL_NUMBER,
    "source": dict,
}
NUM_ROWS_FIELDS: dict[str, Any] = {"train": int, "validation": int, "test": int}


def name_of_run(run: str, size: str, path: Path) -> str:
    """The name of run ``{name}-{size}``; a run not ending in its size is an error."""
    suffix = f"-{size}"
    if not run.endswith(suffix) or run == suffix:
        raise PipelineError(f"{path}: key 'run' = {run!r} is not '{{name}}-{size}'")
    return run[: -len(suffix)]


def checkpoint_step(record: dict[str, Any], path: Path, budgets: pd.DataFrame | None) -> int | None:
    """The pretraining step a scores.json was fine-tuned from: None for a final model.

    Without ``budgets`` the file must be a final model's (no ``pretraining_step``, or
    null): a checkpoint's scores listed as scores would silently replace its final
    model. With them (pretraining.csv rows) it must name a step strictly inside its
    run's steps: the final model is at its trained_steps and comes from the scores, and a
    second stage saves no checkpoint before its split.
    """
    if budgets is None:
        if record.get("pretraining_step") is not None:
            raise PipelineError(
                f"{path}: key 'pretraining_step' = {record['pretraining_step']!r}: an intermediate checkpoint's scores belong in "
                "the manifest's curve_scores"
            )
        return None
    step = validated(record, {"pretraining_step": int}, path)["pretraining_step"]
    runs = budgets.set_index("run")
    if record["run"] not in runs.index:
        raise PipelineError(f"{path}: key 'run' = {record['run']!r} has no summary.json among the summaries")
    first, last = runs.loc[record["run"], ["first_step", "trained_steps"]]
    if not first < step < last:
        raise PipelineError(
            f"{path}: key 'pretraining_step' = {step} is not strictly between the first step ({first}) and trained_steps ({last}) of run "
            f"{record['run']!r}"
        )
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
            raise PipelineError(
                f"{path}: key 'objective' = {record['objective']!r} is not the run's name (the run without '-{record['size']}')"
            )
        points: set[tuple[float, int]] = set()
        headline = record["metric_headline"]
        for index, point in enumerate(record["grid"]):
            validated(point, GRID_FIELDS, path, f"grid[{index}].")
            for split in ("validation", "test"):
                if not 0 <= point[split] <= 100:
                    raise PipelineError(f"{path}: key 'grid[{index}].{split}' = {point[split]} is not in points (0-100)")
            if (point["learning_rate"], point["seed"]) in points:
                raise PipelineError(f"{path}: grid[{index}] repeats learning_rate {point['learning_rate']} seed {point['seed']}")
            points.add((point["learning_rate"], point["seed"]))
            rows.append(
                {
                    **{c: record[c] for c in RUN_COLUMNS if c != "run_name"},
                    "run_name": record["objective"],
                    "pretraining_step": step,
                    **{k: point[k] for k in GRID_FIELDS},
                    "chosen_learning_rate": record["chosen_learning_rate"],
                    "selection_seed": point["seed"] in record["selection_seeds"],
                    "test_scores": metric_scores(point, path, index, headline),
                }
            )
        rates = {rate for rate, _ in points}
        if not any(all((rate, seed) in points for rate in rates) for _, seed in points):
            raise PipelineError(f"{path}: key 'grid' has no seed that ran every learning rate, the seeds the LR choice compares")
        configured = configured_grid(path)
        check_configured_grid(points, configured, path)
        check_recorded_choice(record, configured, path)
    columns = [*RUN_COLUMNS, *(["pretraining_step"] if budgets is not None else []), *GRID_FIELDS, *SELECTION_COLUMNS, "test_scores"]
    frame = pd.DataFrame(rows, columns=columns)
    families = frame.groupby("task")["family"].unique()
    for task, names in families.items():
        if len(names) > 1:
            raise PipelineError(f"scores.json files disagree on the family of task {task!r}: {', '.join(sorted(names))}")
    return frame


def metric_scores(point: dict[str, Any], path: Path, index: int, headline: str) -> dict[str, float]:
    """A grid point's whole metric dict (``test_scores``): the headline alone when absent. Where the
    point carries it, its ``headline`` entry must be the point's ``test`` (and its validation's the
    point's ``validation``): two copies of one score that disagree are refused."""
    for split in ("validation", "test"):
        scores = point.get(f"{split}_scores")
        if scores is None:
            continue
        if not isinstance(scores, dict) or not all(isinstance(v, NUMBER) and not isinstance(v, bool) for v in scores.values()):
            raise PipelineError(f"{path}: key 'grid[{index}].{split}_scores' should be an object of numbers")
        if scores.get(headline) != point[split]:
            copy = f"grid[{index}].{split}_scores.{headline}"
            raise PipelineError(f"{path}: key {copy!r} = {scores.get(headline)!r} is not the point's {split} {point[split]!r}")
    return point.get("test_scores", {"headline": point["test"]})


def configured_grid(path: Path) -> dict[str, Any]:
    """The learning rates, seeds and selection seeds the job that wrote ``path`` was configured with,
    as its provenance.json records its spec (a scored-elsewhere task's: its trainer's)."""
    record = path.parent / "provenance.json"
    spec = read_json(record).get("spec", {})
    if "trained" in spec and "finetuning" not in spec:  # pipeline/finetune/evaluated.py: the trainer's grid
        record = Path(spec["trained"]) / "provenance.json"
        spec = read_json(record).get("spec", {})
    finetuning = spec.get("finetuning")
    if not isinstance(finetuning, dict):
        raise PipelineError(f"{path}: {record} records no fine-tuning spec, so nothing says which grid the job was to run")
    return validated(finetuning, {"learning_rates": list, "seeds": list, "selection_seeds": (list, type(None))}, record, "spec.finetuning.")


def check_recorded_choice(record: dict[str, Any], configured: dict[str, Any], path: Path) -> None:
    """The selection seeds are the configured ones, and the recorded rate is the one their validation
    scores choose (the study's rule, :func:`pipeline.finetune.selection.best_on_validation`)."""
    selecting = configured["selection_seeds"] or configured["seeds"]
    if sorted(record["selection_seeds"]) != sorted(selecting):
        raise PipelineError(f"{path}: key 'selection_seeds' = {record['selection_seeds']} is not the job's configured {selecting}")
    chosen = best_on_validation((p["learning_rate"], p["validation"]) for p in record["grid"] if p["seed"] in record["selection_seeds"])
    if record["chosen_learning_rate"] != chosen:
        raise PipelineError(
            f"{path}: key 'chosen_learning_rate' = {record['chosen_learning_rate']} is not the rate its selection seeds'"
            f" validation scores choose ({chosen})"
        )


def check_configured_grid(points: set[tuple[float, int]], configured: dict[str, Any], path: Path) -> None:
    """The grid is the one its job was configured to run: every learning rate at every selection seed
    (every seed on a full grid), each other seed once at one of the rates, nothing else."""
    rates, seeds = set(configured["learning_rates"]), set(configured["seeds"])
    selecting = set(configured["selection_seeds"] or seeds)
    stray = sorted((rate, seed) for rate, seed in points if rate not in rates or seed not in seeds)
    if stray:
        raise PipelineError(f"{path}: key 'grid' holds learning rate {stray[0][0]} seed {stray[0][1]}, which its job's config does not")
    missing = sorted((rate, seed) for rate in rates for seed in selecting if (rate, seed) not in points)
    missing += sorted((math.nan, seed) for seed in seeds - selecting if sum(1 for _, s in points if s == seed) != 1)
    if missing:
        rate, seed = missing[0]
        at = "once, at the rate the selection seeds chose" if math.isnan(rate) else f"at learning rate {rate}"
        raise PipelineError(f"{path}: key 'grid' lacks seed {seed} {at}, which its job's config runs")


def read_pretraining(paths: list[Path]) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """One row per pretraining ``summary.json``, ``started_from`` and the held-out
    metric flattened, the run's name beside its objective's config name; and each run's
    objective parameters as its summary records them (parsed, every default filled in)."""
    rows, objective_params = [], {}
    for path in paths:
        record = validated(read_json(path), SUMMARY_FIELDS, path, choices=SUMMARY_CHOICES)
        start = validated(record["started_from"], STARTED_FROM_FIELDS, path, "started_from.", STARTED_FROM_CHOICES)
        metric = validated(record["heldout_metric"], HELDOUT_METRIC_FIELDS, path, "heldout_metric.")
        objective_params[record["run"]] = record["objective_params"]
        rows.append(
            {
                **record,
                "run_name": name_of_run(record["run"], record["size"], path),
                **{f"started_from_{k}": start[k] for k in ("kind", "run", "step")},
                "carry_optimizer": start["carry_optimizer"],
                "heldout_metric_name": metric["name"],
                "heldout_metric_value": metric["value"],
            }
        )
    frame = pd.DataFrame(rows, columns=PRETRAINING_COLUMNS)
    repeated = frame["run"][frame["run"].duplicated()]
    if len(repeated):
        raise PipelineError(f"two pretraining summaries for run {repeated.iloc[0]!r}")
    return frame.sort_values(["num_parameters", "run"], ignore_index=True), objective_params


def unanswerable_test_questions(record: dict) -> int | None:
    """An extractive QA task's test questions with no answer in their passage; None for other task types."""
    return record["label_counts"].get("test", {}).get("unanswerable") if record["type"] == "extractive_qa" else None


def read_protocols(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Task -> how its grids were fine-tuned (:data:`PROTOCOL_KEYS` of its scores.json files, a key
    a file lacks as None); every file of a task must say the same, or one line names two that differ."""
    protocols: dict[str, dict[str, Any]] = {}
    first: dict[str, Path] = {}
    for path in paths:
        record = read_json(path)
        task, protocol = record.get("task"), {key: record.get(key) for key in PROTOCOL_KEYS}
        if task in protocols and protocols[task] != protocol:
            differing = next(key for key in PROTOCOL_KEYS if protocols[task][key] != protocol[key])
            theirs = protocols[task][differing]
            raise PipelineError(f"{path}: key {differing!r} = {protocol[differing]!r}, but {first[task]} has {theirs!r} for task {task!r}")
        protocols.setdefault(task, protocol)
        first.setdefault(task, path)
    return protocols


def read_tasks(paths: list[Path]) -> pd.DataFrame:
    """One row per task ``stats.json``: what the task is and how it was built."""
    rows = []
    for path in paths:
        record = validated(read_json(path), TASK_STATS_FIELDS, path)
        counts = validated(record["num_rows"], NUM_ROWS_FIELDS, path, "num_rows.")
        rows.append(
            {
                **{k: record[k] for k in ("task", "family", "type", "metric", "proxy_for", "description")},
                "derived_labels": record.get("derived_labels"),
                "labels": " / ".join(str(label) for label in record["labels"]),
                **{f"num_{split}": counts[split] for split in NUM_ROWS_FIELDS},
                "duplicates_removed": record["duplicates_removed"],
                "majority_label": record["majority_label"],
                "majority_test_score": record["majority_test_score"],
                "num_unanswerable_test": unanswerable_test_questions(record),
            }
        )
    frame = pd.DataFrame(rows, columns=TASKS_COLUMNS)
    repeated = frame["task"][frame["task"].duplicated()]
    if len(repeated):
        raise PipelineError(f"two stats.json files for task {repeated.iloc[0]!r}")
    return frame.sort_values("task", ignore_index=True)


BAG_OF_WORDS_FIELDS = {"task": str, "metric": str, "num_examples": int, "best_regularization": (int, float), "grid": list}
BAG_OF_WORDS_POINT_FIELDS = {"regularization": (int, float), "seed": int, "validation": (int, float), "test": (int, float)}


def read_bag_of_words(paths: Sequence[Path], confidence: float) -> pd.DataFrame:
    """Per task: the bag-of-words reference at the C its job chose on validation (as recorded, and
    checked against its grid), test seed mean and CI."""
    rows = []
    for path in paths:
        record = validated(read_json(path), BAG_OF_WORDS_FIELDS, path)
        grid = pd.DataFrame([validated(point, BAG_OF_WORDS_POINT_FIELDS, path, f"grid[{i}].") for i, point in enumerate(record["grid"])])
        if grid.empty:
            raise PipelineError(f"{path}: key 'grid' is empty")
        best = record["best_regularization"]
        chosen = best_on_validation(zip(grid["regularization"], grid["validation"]))
        if best != chosen:
            raise PipelineError(f"{path}: key 'best_regularization' = {best} is not the C its grid's validation scores choose ({chosen})")
        test = grid.loc[grid["regularization"] == best, "test"].to_numpy()
        rows.append(
            {
                "task": record["task"],
                "bag_of_words_examples": record["num_examples"],
                **mean_interval(test, confidence).columns("bag_of_words_"),
            }
        )
    return pd.DataFrame(rows, columns=["task", "bag_of_words_examples", *Estimate.column_names("bag_of_words_")])


MINIMAL_PAIRS_FIELDS: dict[str, Any] = {
    "run": str,
    "objective": str,
    "size": str,
    "pretraining_step": OPTIONAL_INT,
    "not_scored": OPTIONAL_STR,
    "pair_ids": list,
    "kinds": list,
    "methods": dict,
}
MINIMAL_PAIRS_METHOD_FIELDS: dict[str, Any] = {"attention": str, "good": list, "bad": list}


def read_minimal_pairs(paths: Sequence[Path]) -> pd.DataFrame:
    """One row per (model, scoring method, pair): the pair's outcome (1 won, 0.5 tie, 0 lost;
    :func:`pipeline.analysis.pair_outcomes.pair_outcomes`).

    Every file must score the same pairs in the same order, so that two models can be
    compared pair by pair.
    """
    frames, first = [], None
    for path in paths:
        record = validated(read_json(path), MINIMAL_PAIRS_FIELDS, path)
        ids, kinds = record["pair_ids"], record["kinds"]
        if not ids or len(kinds) != len(ids):
            raise PipelineError(f"{path}: keys 'pair_ids' and 'kinds' should be non-empty lists of one length")
        if first is None:
            first = (ids, path)
        elif ids != first[0]:
            raise PipelineError(f"{path}: key 'pair_ids' differs from {first[1]}'s: the models were scored on different pairs")
        run_name = name_of_run(record["run"], record["size"], path)
        for method, scores in record["methods"].items():
            scores = validated(scores, MINIMAL_PAIRS_METHOD_FIELDS, path, f"methods.{method}.")
            good, bad = np.asarray(scores["good"], dtype=float), np.asarray(scores["bad"], dtype=float)
            if not len(good) == len(bad) == len(ids) or not np.isfinite(good).all() or not np.isfinite(bad).all():
                raise PipelineError(f"{path}: key 'methods.{method}' should hold one finite good and bad score per pair ({len(ids)})")
            frames.append(
                pd.DataFrame(
                    {
                        "run": record["run"],
                        "run_name": run_name,
                        "size": record["size"],
                        "step": record["pretraining_step"],
                        "method": method,
                        "pair_id": ids,
                        "kind": kinds,
                        "outcome": pair_outcomes(good, bad),
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=MINIMAL_PAIR_OUTCOME_COLUMNS)
    # Int64: a checkpoint's step stays "10" in the CSV beside the finals' blanks, not "10.0".
    return pd.concat(frames, ignore_index=True)[MINIMAL_PAIR_OUTCOME_COLUMNS].astype({"step": "Int64"})
