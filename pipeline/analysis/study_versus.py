"""This harness's fine-tuning of a released checkpoint beside the study's own, task by task.

For each outside model matched to a model of the study's results (``name:study_model``) and
each task matched to one of its datasets (``task:dataset``): both test means with their
t-intervals over fine-tuning seeds, each side's LR chosen on its own mean validation score
(:func:`pipeline.analysis.scoring.chosen_on_validation`), and, where both sides have
per-example test scores for as many examples, their difference example by example (ours −
the study's, each averaged over its seeds at its LR) with a t-interval over examples: a
paired test. The two sides pair by position in the test split, so the pairing means
something only where both fine-tuned on the same test split in the same order: the test split
each side read (``test_source`` of ours, :data:`.encodeval.STUDY_TEST_SOURCES` of the study's)
and the count are what can be checked here (the study's files carry no example ids), and either
differing is said in the row, not paired. So is
a metric other than the study's for that family (EncodEval's variants: ``STUDY_METRICS``), and a
dataset whose test examples the study draws anew each run (nq): like is paired with like only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.contract import STUDY_VERSUS_COLUMNS
from pipeline.analysis.scoring import chosen_on_validation
from pipeline.analysis.stats import Estimate, mean_interval
from pipeline.errors import PipelineError
from pipeline.external.encodeval import STUDY_METRICS, STUDY_TEST_SOURCES, UNSEEDED_TEST_SPLITS, example_scores
from pipeline.external.study_protocol import PROTOCOL_KEYS, protocol_differences

POINTS = 100.0  # EncodEval's per-example scores are fractions; ours are in points


def read_ours(paths: list[Path]) -> dict[tuple[str, str], pd.DataFrame]:
    """(outside model, task) -> its grid points (learning_rate, seed, validation, test, test_examples),
    with its metric in ``attrs``."""
    found = {}
    for path in paths:
        try:
            record = json.loads(path.read_text())
            key, grid = (record["objective"], record["task"]), pd.DataFrame(record["grid"])
            grid = grid[["learning_rate", "seed", "validation", "test"]].assign(test_examples=grid.get("test_examples"))
            grid.attrs["metric"], grid.attrs["test_source"] = record["metric"], record.get("test_source")
            for setting in PROTOCOL_KEYS:
                grid.attrs[setting] = record.get(setting)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
            raise PipelineError(f"{path}: not a fine-tuning scores.json ({type(error).__name__}: {error})") from None
        found[key] = grid
    return found


def our_example_scores(points: pd.DataFrame) -> np.ndarray | None:
    """(examples,) the mean over these points (one LR's seeds) of their per-example test
    scores; None where any has none (a metric that is not a mean over examples)."""
    lists = list(points["test_examples"])
    if any(not isinstance(values, list) for values in lists) or len({len(values) for values in lists}) != 1:
        return None
    return np.mean(lists, axis=0)


def refusal(points: pd.DataFrame, theirs: pd.Series, mine: np.ndarray | None, trained_on_dataset: str | None) -> str:
    """Why our per-example test scores cannot be paired with the study's for this row; "" if they
    can. ``trained_on_dataset``: the study's dataset our grid's models were fine-tuned on."""
    metric, source, dataset = points.attrs["metric"], points.attrs["test_source"], theirs["dataset"]
    study_metric = STUDY_METRICS.get(theirs["family"])
    if dataset in UNSEEDED_TEST_SPLITS:
        return f"{dataset}: {UNSEEDED_TEST_SPLITS[dataset]}"
    if metric != study_metric:
        return f"metric {metric} here, the study's {theirs['family']} metric is {study_metric}"
    differences = protocol_differences(theirs["family"], points.attrs, trained_on_dataset)
    if differences:
        return differences[0]
    if dataset not in STUDY_TEST_SOURCES:
        return f"the study's test split of {dataset} is not known here"
    if source not in STUDY_TEST_SOURCES[dataset]:
        return f"test split {source or '(not recorded)'} here, the study's is {STUDY_TEST_SOURCES[dataset][0]}"
    if mine is None:
        return "no per-example scores on this side (the metric is not a mean over examples)"
    if len(mine) != theirs["test_examples"]:
        return f"{len(mine)} test examples here, {theirs['test_examples']} in the study's"
    return ""


def versus_table(
    ours: dict[tuple[str, str], pd.DataFrame], study_scores: pd.DataFrame, matches: dict[str, str], tasks: dict[str, str], confidence: float
) -> pd.DataFrame:
    """One row per (outside model, task, study training set) that both sides have."""
    rows = []
    for (name, task), points in sorted(ours.items()):
        if name not in matches or task not in tasks:
            continue
        study = study_scores[(study_scores["model"] == matches[name]) & (study_scores["dataset"] == tasks[task])]
        learning_rate, _, test = chosen_on_validation(points, "learning_rate")
        mine = our_example_scores(points[points["learning_rate"] == learning_rate])
        for _, theirs in study.iterrows():
            paired, why = None, refusal(points, theirs, mine, tasks.get(points.attrs.get("trained_on") or task))
            if not why:
                paired = mean_interval(mine - POINTS * example_scores(theirs["paths"]), confidence)
            rows.append(
                {
                    "model": name,
                    "study_model": matches[name],
                    "task": task,
                    "dataset": theirs["dataset"],
                    "training_set": theirs["training_set"],
                    "study_n_seeds": theirs["n_seeds"],
                    **{f"study_{column}": theirs[column] for column in Estimate.column_names("test_")},
                    "ours_n_seeds": len(test),
                    **mean_interval(test, confidence).columns("ours_test_"),
                    "examples": theirs["test_examples"] if paired is not None else 0,
                    **(paired or Estimate.undefined(confidence)).columns("difference_"),
                    "not_paired_because": why,
                }
            )
    return pd.DataFrame(rows, columns=STUDY_VERSUS_COLUMNS)
