"""``python -m pipeline aggregate``: per-run result JSON into tidy CSV tables.

Inputs are the contract with the other stages: ``results/finetune/{task}/{run}/
scores.json``, ``results/pretrain/{run}/summary.json`` and ``results/data/tasks/
{task}/stats.json``, and optionally the learning-curve scores of intermediate
checkpoints, ``results/finetune/{task}/{run}/step-{N}/scores.json``, and the
bag-of-words reference, ``results/baselines/{task}/bag_of_words/scores.json``, and the
zero-shot minimal pairs, ``results/zeroshot/minimal_pairs/{run}/scores.json``. Each
is validated here, so a malformed file fails with one line naming the file and key
instead of a pandas traceback three tables later.

Outputs (one directory, written atomically, with ``provenance.json``):

====================  ============================================================
finetune_grid.csv     one row per (task, run, learning_rate, seed)
run_scores.csv        per (task, run): best LR on validation, test seed mean and CI;
                      every pretraining replicate apart
scores.csv            per (task, arm): run_scores with the replicates of an arm pooled
                      (CI over pretraining seeds, see :mod:`.replicates`)
family_scores.csv     per (family, arm): average of the family's task means, pooled
comparison.csv        per (task | family, size): MLM, CLM, MLM − CLM (Welch), winner,
                      and each against its random-init twin
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
minimal_pairs.csv     per (model, scoring method, kind of pair): share of minimal pairs
                      won, and the paired gain over random init (see :mod:`.zero_shot`)
minimal_pairs_comparison.csv  per (size, kind): MLM − CLM on minimal pairs
budget_trend.csv      per (task | family | minimal pairs, size, contrast, budget): MLM −
                      CLM and each minus random init at every checkpoint's token count
budget_fit.csv        per (task | family | minimal pairs, size, contrast): a trend line in
                      log10(tokens) and the budget it says would decide (:mod:`.budget_trend`)
claims.csv            one verdict per claim of the claims file (see :mod:`.claims`)
====================  ============================================================

Scores are in points (0-100). Every interval is a Student-t interval at
``ReportSpec.confidence`` (see :mod:`.stats`): over fine-tuning seeds for one pretraining
run, over pretraining seeds for an arm with several (``pretraining_seeds``); the zero-shot
tables' are over minimal pairs for one run, over pretraining seeds for several.

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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline import strict
from pipeline.config import ReportSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path
from pipeline.provenance import write_provenance
from pipeline.report.budget_trend import budget_trend_tables
from pipeline.report.claims import check_claims
from pipeline.report.claims.spec import read_claims
from pipeline.report.comparisons import baseline_table, by_size, comparison_table, objectives_table
from pipeline.report.contract import Results
from pipeline.report.curves import check_curve_tasks, learning_curve_tables
from pipeline.report.inputs import read_bag_of_words, read_finetune_grid, read_minimal_pairs, read_pretraining, read_tasks
from pipeline.report.replicates import arm_names, pool_replicates
from pipeline.report.runs import reference_runs, run_placements
from pipeline.report.scoring import detail_table, family_table, lr_sensitivity_table, score_table
from pipeline.report.zero_shot import minimal_pairs_comparison, minimal_pairs_table


def check_consistent(grid: pd.DataFrame, other: pd.DataFrame, keys: list[str], columns: list[str], name: str) -> None:
    """Files written by different stages must agree on what a run or task is."""
    merged = grid[keys + columns].drop_duplicates().merge(other[keys + columns], on=keys, suffixes=("", "_other"))
    for column in columns:
        differing = merged[merged[column] != merged[f"{column}_other"]]
        if len(differing):
            item = differing.iloc[0]
            raise PipelineError(
                f"{keys[0]} {item[keys[0]]!r}: scores.json says {column} {item[column]!r}, its {name} says {item[f'{column}_other']!r}"
            )


def build_results(
    scores_paths: Sequence[Path],
    summary_paths: Sequence[Path],
    task_stats_paths: Sequence[Path],
    confidence: float,
    objective_configs: Mapping[str, Mapping[str, Any]],
    curve_paths: Sequence[Path] = (),
    bag_of_words_paths: Sequence[Path] = (),
    minimal_pairs_paths: Sequence[Path] = (),
    outside_paths: Sequence[Path] = (),
) -> Results:
    """Read and validate every input, then derive every table."""
    grid = read_finetune_grid(scores_paths)
    outside_grid = read_finetune_grid(outside_paths)
    pretraining = read_pretraining(summary_paths)
    tasks = read_tasks(task_stats_paths)
    curve_grid = read_finetune_grid(curve_paths, pretraining)
    for scored in (grid, curve_grid):
        check_consistent(scored, pretraining, ["run"], ["run_name", "objective_kind", "size"], "summary.json")
        check_consistent(scored, tasks, ["task"], ["family"], "stats.json")
    check_consistent(outside_grid, tasks, ["task"], ["family"], "stats.json")
    pretrained = set(grid.loc[grid["objective_kind"] != "random", "run"])
    missing = sorted(pretrained - set(pretraining["run"]))
    if missing:
        raise PipelineError(f"run {missing[0]!r} has fine-tuning scores but no summary.json among --summaries")
    check_curve_tasks(curve_grid, grid)
    run_scores = by_size(score_table(grid, confidence), pretraining, ["task"], ["run"])
    # Families per replicate first, then pooled: a replicate that is good on one task of a
    # family tends to be good on the others, and pooling the family means keeps that.
    scores = pool_replicates(run_scores, ["task"], confidence)
    families = by_size(pool_replicates(family_table(run_scores, confidence), ["family"], confidence), pretraining, ["family"], ["run"])
    comparison = by_size(comparison_table(scores, families, pretraining, tasks, confidence), pretraining, [], ["family", "level", "name"])
    # An arm's pooled row carries replicate 0's name, so the sections place replicate 0 only.
    first_replicates = pretraining[arm_names(pretraining["run_name"]) == pretraining["run_name"]]
    objectives = objectives_table(scores, families, run_placements(first_replicates, objective_configs), reference_runs(first_replicates), confidence)
    curves, curve_comparison = learning_curve_tables(curve_grid, run_scores, comparison, pretraining, tasks, confidence)
    pair_outcomes = read_minimal_pairs(minimal_pairs_paths)
    kinds = {**dict(zip(outside_grid["run"], outside_grid["objective_kind"])), **pretraining.set_index("run")["objective_kind"].to_dict()}
    pairs_table = minimal_pairs_table(pair_outcomes, kinds, confidence)
    pairs_comparison = minimal_pairs_comparison(pair_outcomes, pairs_table, confidence)
    trend, fit = budget_trend_tables(curves, curve_comparison, comparison, pairs_table, pairs_comparison, pretraining, confidence)
    return Results(
        finetune_grid=by_size(grid.drop(columns="test_scores"), pretraining, ["task"], ["run", "learning_rate", "seed"]),
        run_scores=run_scores,
        outside_scores=score_table(outside_grid, confidence),
        scores=scores,
        metric_details=by_size(detail_table(grid, run_scores, confidence), pretraining, ["task"], ["run", "key"]),
        family_scores=families,
        comparison=comparison,
        baselines=by_size(
            baseline_table(scores, tasks, read_bag_of_words(bag_of_words_paths, confidence), confidence), pretraining, ["task"], ["run"]
        ),
        lr_sensitivity=by_size(lr_sensitivity_table(grid), pretraining, ["task"], ["run"]),
        objectives=by_size(objectives, pretraining, ["section", "level", "name"], ["num_steps", "clm_share", "mask_ratio", "run"]).astype(
            {"section": str}
        ),
        learning_curves=by_size(curves, pretraining, [], ["family", "level", "name", "run", "step"]),
        curve_comparison=by_size(curve_comparison, pretraining, [], ["family", "level", "name", "step"]),
        pretraining=pretraining,
        tasks=tasks,
        minimal_pairs=pairs_table,
        minimal_pairs_comparison=pairs_comparison,
        budget_trend=trend,
        budget_fit=fit,
        confidence=confidence,
        objective_configs=objective_configs,
    )


# ------------------------------------------------------------------ the stage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="ReportSpec as JSON (confidence, claims_file)")
    parser.add_argument("--scores", nargs="+", type=Path, required=True, help="results/finetune/{task}/{run}/scores.json files")
    parser.add_argument(
        "--outside-scores", nargs="*", type=Path, default=[],
        help="results/finetune_outside/{task}/{name}/scores.json files of outside models; none or absent without",
    )  # fmt: skip
    parser.add_argument(
        "--curve-scores", nargs="*", type=Path, default=[],
        help="results/finetune/{task}/{run}-step{N}/scores.json files of intermediate checkpoints (learning curves); none or absent without",
    )  # fmt: skip
    parser.add_argument(
        "--bag-of-words", nargs="*", type=Path, default=[],
        help="results/baselines/{task}/bag_of_words/scores.json files of the lexical reference; none or absent without",
    )  # fmt: skip
    parser.add_argument(
        "--minimal-pairs", nargs="*", type=Path, default=[],
        help="results/zeroshot/minimal_pairs/{run}/scores.json files of the zero-shot family; none or absent without",
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
    results = build_results(
        args.scores, args.summaries, args.task_stats, spec.confidence, objectives, args.curve_scores, args.bag_of_words, args.minimal_pairs,
        args.outside_scores,
    )
    claims = read_claims(spec.claims_file) if spec.claims_file else []
    verdicts = check_claims(claims, results)
    inputs: dict[str, str | Path] = {
        f"{role}:{path}": path
        for role, paths in (
            ("scores", args.scores),
            ("outside_scores", args.outside_scores),
            ("curve_scores", args.curve_scores),
            ("bag_of_words", args.bag_of_words),
            ("minimal_pairs", args.minimal_pairs),
            ("summary", args.summaries),
            ("task_stats", args.task_stats),
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
