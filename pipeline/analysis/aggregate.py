"""``python -m pipeline aggregate``: per-run result JSON into tidy CSV tables.

Inputs are the contract with the other stages, listed by kind in the manifest ``--results``
(:mod:`pipeline.result_kinds`, written by the workflow from the kind each rule registers):
``results/finetune/{task}/{run}/scores.json``, ``results/pretrain/{run}/summary.json`` and
``results/data/tasks/{task}/stats.json``, and optionally the learning-curve scores of
intermediate checkpoints, the outside models' scores, the bag-of-words reference and the
zero-shot minimal pairs. Each file is verified against the sha256 its job recorded and
validated here, so a malformed file fails with one line naming the file and key instead of a
pandas traceback three tables later.

Outputs (one directory, written atomically, with ``provenance.json``): one CSV per table
declared in :mod:`.table_schema` (what a row is, its columns, the tables it is built from and
where the report shows it) and built by :mod:`.table_builds`; ``python -m pipeline aggregate
--help`` lists them.

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
the fraction of the step budget trained with CLM: first_step / trained_steps for a split, 1
or 0 for a shorter budget's CLM or MLM decay branch, which are that budget's ends and
the references its splits are measured against.

Learning curves. A ``curve_scores`` file has the schema of a final model's
scores.json plus ``pretraining_step`` (a final model's file has none, or null). A
checkpoint goes through the final model's protocol (LR chosen on validation at that
checkpoint, test seed mean), and every curve ends with its run's final model at step
= trained_steps, so its last point is the headline score. A checkpoint must be fine-tuned
on the tasks its final model was, or its family average would average other tasks
than the curve's last point. curve_comparison.csv pairs the headline's CLM and MLM
runs only (those of comparison.csv: a two-stage run with curves is of kind MLM too)
at every step both have. ``budget_fraction`` (step / budget_steps) is how the claims
compare steps across scales; it is blank in curve_comparison.csv where the two runs'
budgets differ.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from pipeline import strict
from pipeline.analysis.claims.spec import Claim, read_claims
from pipeline.analysis.contract import Results
from pipeline.analysis.curves import check_curve_tasks
from pipeline.analysis.inputs import (
    read_bag_of_words,
    read_finetune_grid,
    read_minimal_pairs,
    read_pretraining,
    read_protocols,
    read_tasks,
)
from pipeline.analysis.sources import Sources
from pipeline.analysis.table_builds import BUILDS
from pipeline.analysis.table_schema import SCHEMAS, build_order
from pipeline.config import ReportSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, previous_outputs_kept
from pipeline.integrity import verify_recorded
from pipeline.provenance import write_provenance
from pipeline.result_kinds import RESULT_KINDS, read_manifest


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


def read_sources(files: Mapping[str, Sequence[Path]], confidence: float, claims: Sequence[Claim] = ()) -> Sources:
    """Read every input, ``files`` by result kind (pipeline/result_kinds.py; a kind left out has
    none), and check the files of different stages against each other."""

    def of(kind: str) -> Sequence[Path]:
        return files.get(kind, ())

    grid = read_finetune_grid(of("scores"))
    outside_grid = read_finetune_grid(of("outside_scores"))
    pretraining, objective_params = read_pretraining(of("summaries"))
    tasks = read_tasks(of("task_stats"))
    curve_grid = read_finetune_grid(of("curve_scores"), pretraining)
    for scored in (grid, curve_grid):
        check_consistent(scored, pretraining, ["run"], ["run_name", "objective_kind", "size"], "summary.json")
        check_consistent(scored, tasks, ["task"], ["family"], "stats.json")
    check_consistent(outside_grid, tasks, ["task"], ["family"], "stats.json")
    pretrained = set(grid.loc[grid["objective_kind"] != "random", "run"])
    missing = sorted(pretrained - set(pretraining["run"]))
    if missing:
        raise PipelineError(f"run {missing[0]!r} has fine-tuning scores but no summary.json among the summaries")
    check_curve_tasks(curve_grid, grid)
    return Sources(
        grid=grid,
        outside_grid=outside_grid,
        curve_grid=curve_grid,
        pretraining=pretraining,
        tasks=tasks,
        bag_of_words=read_bag_of_words(of("bag_of_words"), confidence),
        pair_outcomes=read_minimal_pairs(of("minimal_pairs")),
        confidence=confidence,
        objective_params=objective_params,
        claims=claims,
        protocols=read_protocols([*of("scores"), *of("curve_scores")]),
    )


def build_tables(sources: Sources) -> Results:
    """Every declared table, each after the tables it needs, checked against its declared columns."""
    built: dict[str, pd.DataFrame] = {}
    for table in build_order():
        frame = BUILDS[table.name](sources, built)
        if tuple(frame.columns) != table.columns:
            raise PipelineError(f"table {table.name!r}: built with columns {list(frame.columns)}, declared with {list(table.columns)}")
        built[table.name] = frame
    return Results(built, sources.confidence, sources.objective_params, sources.measured_by)


# ------------------------------------------------------------------ the stage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Writes one CSV per result table: " + "; ".join(f"{name}.csv, {SCHEMAS[name].description}" for name in sorted(SCHEMAS)) + "."
    )
    parser.add_argument("--spec", required=True, help="ReportSpec as JSON (confidence, claims_file)")
    parser.add_argument(
        "--results",
        type=Path,
        required=True,
        help="the manifest of result files by kind (results/result_files.json, written by the workflow): "
        + "; ".join(f"{kind}: {what}" for kind, what in RESULT_KINDS.items()),
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory, e.g. results/tables")


def run(args: argparse.Namespace) -> None:
    with previous_outputs_kept(args.out):
        write_tables(args)


def write_tables(args: argparse.Namespace) -> None:
    spec: ReportSpec = strict.parse_json(ReportSpec, args.spec, "report")
    claims = read_claims(spec.claims_file) if spec.claims_file else []
    files = read_manifest(args.results)
    # every result a number depends on, against the sha256 its job recorded, before any table is built
    for paths in files.values():
        for path in paths:
            verify_recorded(path)
    results = build_tables(read_sources(files, spec.confidence, claims))
    inputs: dict[str, str | Path] = {"results": args.results}
    inputs |= {f"{kind}:{path}": path for kind, paths in files.items() for path in paths}
    if spec.claims_file:
        inputs["claims"] = spec.claims_file
    with atomic_path(args.out) as out:
        out.mkdir()
        for name, frame in results.tables.items():
            frame.to_csv(out / f"{name}.csv", index=False)
        write_provenance(out, {"report": strict.to_plain(spec)}, inputs)
