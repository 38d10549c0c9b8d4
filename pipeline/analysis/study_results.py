"""``python -m pipeline study-results``: the study's released fine-tuning results, recomputed
with this harness's protocol.

From EncodEval's per-run files (:mod:`pipeline.external.encodeval`), three tables in ``--out``:

* ``grid.csv``: every (model, dataset, LR, seed) point with its validation and test score
  (in points, x100, as this harness's tables);
* ``scores.csv``: per (model, dataset), this harness's selection rule (the LR with the best
  mean validation score over the seeds that ran every LR; :mod:`pipeline.analysis.scoring`) and
  the test mean at it with a t-interval over fine-tuning seeds (pretraining is one run per
  model: the interval says nothing about another pretraining seed);
* ``paired.csv``: for each pair of ``--pairs`` (``modelA:modelB``, e.g. the study's CLM and MLM
  at one size) and each dataset both have, the per-example difference of their scores
  (averaged over each model's seeds at its chosen LR), mean and t-interval over examples:
  a paired test on the same test examples, which Welch's interval between two seed means
  cannot be;
* ``claims.csv``: with ``--claims``, every claim of the claims file judged on the study's own
  headline models by this harness's claim checks (:mod:`.study_claims`); empty without;
* ``versus.csv``: with ``--ours``, the scores.json of outside models fine-tuned here,
  each matched (``--matches name:study_model``, ``--tasks task:dataset``) to the study's
  results for the same checkpoint: both numbers side by side and a paired test
  (:mod:`.study_versus`).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pandas as pd

from pipeline.analysis.claims.spec import read_claims
from pipeline.analysis.contract import CLAIM_COLUMNS, STUDY_PAIRED_COLUMNS, STUDY_SCORE_COLUMNS, STUDY_TASK_COLUMNS
from pipeline.analysis.scoring import chosen_on_validation
from pipeline.analysis.stats import ci_side, mean_interval
from pipeline.analysis.study_claims import study_verdicts
from pipeline.analysis.study_versus import read_ours, versus_table
from pipeline.config import model_pair
from pipeline.errors import PipelineError
from pipeline.external.encodeval import UNSEEDED_TEST_SPLITS, example_scores, read_grid
from pipeline.files import atomic_path
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
TASK = STUDY_TASK_COLUMNS
POINTS = 100.0  # EncodEval's scores are fractions; this harness's tables are in points


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", required=True, type=Path, help="EncodEval's results/ directory (branch MLM_vs_CLM)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--pairs", nargs="*", default=[], help="modelA:modelB pairs to compare example by example")
    parser.add_argument(
        "--ours", nargs="*", type=Path, default=[], help="results/finetune_outside/<task>/<name>/scores.json of matched outside models"
    )
    parser.add_argument("--matches", nargs="*", default=[], help="name:study_model: the study's model an outside model is")
    parser.add_argument("--tasks", nargs="*", default=[], help="task:dataset: the study's dataset a task of this harness is")
    parser.add_argument("--claims", type=Path, help="the claims file (config/claims.yaml), judged on the study's headline models too")
    parser.add_argument("--out", required=True, type=Path, help="results/study: grid.csv, scores.csv, paired.csv, versus.csv, claims.csv")


def run(args: argparse.Namespace) -> None:
    grid = read_grid(args.root)
    grid[["validation", "test"]] *= POINTS
    scores = score_table(grid, args.confidence)
    paired = paired_table(grid, scores, [parse_pair(pair, "--pairs") for pair in args.pairs], args.confidence)
    matches, tasks = (
        dict(parse_pair(pair, option) for pair in pairs) for option, pairs in (("--matches", args.matches), ("--tasks", args.tasks))
    )
    versus = versus_table(read_ours(args.ours), scores, matches, tasks, args.confidence)
    claims = study_verdicts(grid, args.confidence, read_claims(args.claims)) if args.claims else pd.DataFrame(columns=CLAIM_COLUMNS)
    with atomic_path(args.out) as out:
        out.mkdir()
        grid.drop(columns="path").to_csv(out / "grid.csv", index=False)
        scores.drop(columns="paths").to_csv(out / "scores.csv", index=False)
        paired.to_csv(out / "paired.csv", index=False)
        versus.to_csv(out / "versus.csv", index=False)
        claims.to_csv(out / "claims.csv", index=False)
        spec = {"confidence": args.confidence, "pairs": args.pairs, "matches": args.matches, "tasks": args.tasks}
        inputs = {"encodeval_results": args.root, **({"claims": args.claims} if args.claims else {})}
        write_provenance(out, spec, {**inputs, **{f"ours_{i}": path for i, path in enumerate(args.ours)}})
    logger.info(
        "%d grid points of %d models on %d datasets -> %d scores, %d paired comparisons, %d beside this harness's",
        len(grid),
        grid["model"].nunique(),
        grid["dataset"].nunique(),
        len(scores),
        len(paired),
        len(versus),
    )


def parse_pair(text: str, option: str) -> tuple[str, str]:
    pair = model_pair(text)
    if pair is None:
        raise PipelineError(f"{option}: {text!r} is not of the form first:second")
    return pair


def score_table(grid: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (model, dataset): the LR chosen on mean validation, the test seed mean and CI at it,
    and the files of its seeds (``paths``, for the paired table)."""
    rows = []
    for keys, points in grid.groupby(TASK, sort=True):
        learning_rate, validation, test = chosen_on_validation(points, "learning_rate")
        chosen = points[points["learning_rate"] == learning_rate]
        rows.append(
            {
                **dict(zip(TASK, keys)),
                "best_learning_rate": learning_rate,
                "validation_mean": validation,
                "n_seeds": len(test),
                "test_examples": int(chosen["test_examples"].iloc[0]),
                **mean_interval(test, confidence).columns("test_"),
                "paths": list(chosen["path"]),
            }
        )
    return pd.DataFrame(rows, columns=[*STUDY_SCORE_COLUMNS, "paths"])


def paired_table(grid: pd.DataFrame, scores: pd.DataFrame, pairs: list[tuple[str, str]], confidence: float) -> pd.DataFrame:
    """Per pair and shared dataset: first − second, example by example, at each one's chosen LR."""
    models = set(grid["model"])
    rows = []
    for first, second in pairs:
        for name in (first, second):
            if name not in models:
                raise PipelineError(f"--pairs: no model {name!r} in the results (models: {', '.join(sorted(models))})")
        by_model = {name: scores[scores["model"] == name].set_index(TASK[1:]) for name in (first, second)}
        for task in sorted(set(by_model[first].index) & set(by_model[second].index)):
            if task[1] in UNSEEDED_TEST_SPLITS:
                logger.info("%s vs %s on %s: not paired, %s", first, second, task[1], UNSEEDED_TEST_SPLITS[task[1]])
                continue
            a, b = (POINTS * example_scores(by_model[name].loc[task, "paths"]) for name in (first, second))
            if len(a) != len(b):
                raise PipelineError(f"{task[1]}: {first} has {len(a)} test examples and {second} {len(b)}: they cannot be paired")
            difference = mean_interval(a - b, confidence)
            ahead = {"above": first, "below": second, "spans": "no difference resolved"}.get(ci_side(difference), "—")
            rows.append(
                {
                    "first": first,
                    "second": second,
                    **dict(zip(TASK[1:], task)),
                    "examples": len(a),
                    **difference.columns("difference_"),
                    "ahead": ahead,
                }
            )
    return pd.DataFrame(rows, columns=STUDY_PAIRED_COLUMNS)
