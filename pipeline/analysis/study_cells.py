"""This run's results set cell by cell beside the study's published ones (its Tables 2-17,
:mod:`pipeline.external.published_tables`): which of the study's 800 cells this run produced, and whether its
number falls within the study's interval.

A run is matched to the study's models by its role, not its scale, so that a shrunk config (the
rehearsal, a CPU tier with the paper's size names) is matched as the paper config would be:

- its size by name (``210m``, ``610m``, ``1b`` are the study's 210M, 610M, 1B);
- its steps in proportion to its config's full budget (``pretraining.budget_steps``, recorded in
  summary.json as ``budget_steps``), which stands for the study's 42,000: a run of 6 steps of 6
  is "42k", a checkpoint at step 3 "21k" (no cell); a run stopped before its schedule's decay
  (``pretraining.stop_at_step``; summary.json's ``stopped_before_decay``) is, like a checkpoint, a
  row of Tables 6-9 at the step it stopped;
- its objective by kind, MLM with its masking ratio (40% is the study's MLM-40);
- a from-scratch run is a row of Tables 2-5 at 42k, a learning-curve checkpoint one of Tables
  6-9, a split or a shorter budget's decayed end one of Tables 10-13, continued pretraining one
  of Tables 14-17 (its base's objective, its own steps as ``cpt_steps``);
- a task by the study's dataset it is (:data:`TASK_DATASETS`), a family's ``Average`` where the
  run has all three of the family's datasets.

Each matched cell says whether it was measured the study's way: at the study's parameters and
tokens, and with its fine-tuning protocol as each task's scores.json records it
(:func:`.study_protocol.protocol_differences`: head, input format, precision, raw text, which
task's fine-tuning an IR model came from). A cell measured otherwise is still shown, marked
not comparable, with every reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from pipeline.analysis.contract import CELL_COLUMNS, NOT_RUN, OUTSIDE, STUDY_CURVE_COLUMNS, STUDY_HEADLINE_COLUMNS, WITHIN
from pipeline.analysis.stats import Estimate
from pipeline.external.published_tables import AVERAGE, FAMILY_DATASETS, FAMILY_ORDER, KEY
from pipeline.external.study_protocol import protocol_differences

STUDY_STEPS = 42_000  # the study's full budget, which a config's pretraining.budget_steps stands for
# The study's sizes: its name, and the parameters of its Table 1 architecture counted as a run's
# num_study_parameters counts them (non-embedding plus one 128,256-row vocabulary matrix, the count
# its "210M" and "610M" round). Its "1B" (28 layers, hidden 1,728, FFN 5,120) holds 966.2M
# non-embedding parameters, 1,187.9M by that count: a name, not a count, so a run is held to the
# architecture's own count.
STUDY_SIZES = {"210m": ("210M", 211_766_016), "610m": ("610M", 607_874_688), "1b": ("1B", 1_187_856_576)}
STUDY_SEEDS = 5  # fine-tuning seeds behind every published mean
STUDY_TOKENS_PER_STEP = 2304 * 1024  # ~2.36M: 2,304 samples of ~1,024 tokens (paper section 2)
# This harness's task names of the study's 12 datasets (config/tasks/paper/).
TASK_DATASETS = {
    "sst2": "SST-2",
    "qqp": "QQP",
    "mnli": "MNLI",
    "conll2003": "CoNLL",
    "ontonotes": "OntoNotes",
    "uner_en": "UNER",
    "squad": "SQuAD",
    "squad_v2": "SQuAD-v2",
    "record": "ReCoRD",
    "msmarco": "MS MARCO",
    "nq": "NQ",
    "mldr_en": "MLDR",
}
SCALE_TOLERANCE = 0.1  # parameters and tokens within 10% of the study's count as its scale
OUR_COLUMNS = [*KEY[1:], "family", "dataset", "run", "step", "task", "mean", "low", "high", "not_comparable_because"]
FAMILY_OF_DATASET = {dataset: family for family, datasets in FAMILY_DATASETS.items() for dataset in datasets}


def scaled(steps: float, budget_steps: int) -> int:
    """Steps of a config whose full budget is ``budget_steps``, as the study's steps."""
    return round(steps * STUDY_STEPS / budget_steps)


def objective_cell(kind: str, mask_ratio: float) -> dict[str, Any] | None:
    """The study's objective and masking columns of an objective kind; None for any other kind."""
    if kind == "clm":
        return {"objective": "CLM", "masking": -1}
    if kind == "mlm" and not math.isnan(mask_ratio):
        return {"objective": "MLM", "masking": round(100 * mask_ratio)}
    return None


def study_keys(run: Mapping[str, Any], step: int | None, budget_steps: int, mask_ratio: float, base_kind: str) -> list[dict[str, Any]]:
    """The study's model keys (:data:`KEY` but ``table``) that ``run`` (a pretraining.csv row) at
    ``step`` (None: its final model) may be, one per experiment it can appear in."""
    if run["size"] not in STUDY_SIZES:
        return []
    size, budget = STUDY_SIZES[run["size"]][0], scaled(run["trained_steps"], budget_steps)
    blank = {"size": size, "masking": -1, "cpt_steps": -1, "clm_steps": -1, "mlm_steps": -1}
    objective = objective_cell(run["objective_kind"], mask_ratio)
    study = run["study"]
    if study == "continued":
        base = objective_cell(base_kind, 0.4)
        if objective is None or base is None or step is not None:
            return []
        return [
            {
                **blank,
                "experiment": "cpt",
                "objective": base["objective"],
                "masking": objective["masking"],
                "steps": STUDY_STEPS,
                "cpt_steps": budget,
            }
        ]
    if study == "two_stage":
        first = scaled(run["first_step"], budget_steps)
        if objective is None or base_kind != "clm" or step is not None:
            return []
        return [
            {
                **blank,
                "experiment": "two_stage",
                "objective": "CLM+MLM",
                "masking": objective["masking"],
                "steps": budget,
                "clm_steps": first,
                "mlm_steps": budget - first,
            }
        ]
    if objective is None or study not in ("objectives", "short_budget"):
        return []
    if step is not None:
        return [{**blank, **objective, "experiment": "data_efficiency", "steps": scaled(step, budget_steps)}]
    ends = (budget, 0) if objective["objective"] == "CLM" else (0, budget)
    keys = [{**blank, **objective, "experiment": "two_stage", "steps": budget, "clm_steps": ends[0], "mlm_steps": ends[1]}]
    if study == "objectives":
        keys += [
            {**blank, **objective, "experiment": "mlm_vs_clm", "steps": budget},
            {**blank, **objective, "experiment": "cpt", "steps": budget, "cpt_steps": 0},
        ]
    return keys


def not_comparable_because(
    run: Mapping[str, Any], step: int | None, budget_steps: int, family: str, tasks: list[str], protocols: Mapping[str, Mapping[str, Any]]
) -> str:
    """Why a cell of ``run`` over ``tasks`` (one, or a family's three) is not measured the study's
    way ("" if it is): its scale, and how each task's grids were fine-tuned (``protocols``)."""
    reasons = []
    study_parameters = STUDY_SIZES[run["size"]][1]  # counted as the run's num_study_parameters count
    # the tokens the model has seen by ``step`` (its last step if None), counted from step 0 at the
    # run's own tokens per step: a run that starts from another's checkpoint at first_step (a
    # two-stage split, a shorter budget's decay) saw that run's first steps too, at the same batch
    steps = run["trained_steps"] if step is None else step
    tokens = run["num_tokens"] / (run["trained_steps"] - run["first_step"]) * steps
    study_tokens = scaled(steps, budget_steps) * STUDY_TOKENS_PER_STEP
    parameters = run["num_study_parameters"]
    if abs(parameters / study_parameters - 1) > SCALE_TOLERANCE or abs(tokens / study_tokens - 1) > SCALE_TOLERANCE:
        reasons.append(f"{parameters / study_parameters:.2g}x the study's parameters, {tokens / study_tokens:.2g}x its tokens")
    for task in tasks:
        protocol = protocols.get(task, {})
        trained_on = protocol.get("trained_on") or task  # a task name of TASK_DATASETS is EncodEval's for IR
        for reason in protocol_differences(family, protocol, trained_on if trained_on in TASK_DATASETS else None):
            if reason not in reasons:
                reasons.append(reason)
    return "; ".join(reasons)


def our_cells(
    pretraining: pd.DataFrame,
    scores: pd.DataFrame,
    family_scores: pd.DataFrame,
    curves: pd.DataFrame,
    objective_params: Mapping[str, Mapping[str, Any]],
    protocols: Mapping[str, Mapping[str, Any]],
) -> pd.DataFrame:
    """One row per (study key, dataset) this run produced: its run, step, task, mean and interval."""
    if pretraining.empty:
        return pd.DataFrame(columns=OUR_COLUMNS)
    kinds = pretraining.set_index("run")["objective_kind"]
    results = _results(scores, family_scores, curves)
    rows = []
    for _, run in pretraining.iterrows():
        mask_ratio = float(objective_params.get(run["run"], {}).get("mask_ratio", math.nan))
        base_kind = kinds.get(run["started_from_run"], "") if isinstance(run["started_from_run"], str) else ""
        # a run stopped before its schedule's decay (pretraining.stop_at_step): its final model is
        # a learning-curve checkpoint, as the study's undecayed 1k-40k models are
        stopped_at = int(run["trained_steps"]) if run["stopped_before_decay"] else None
        budget_steps = int(run["budget_steps"])
        for (step, dataset, family), result in results.get(run["run"], {}).items():
            step = stopped_at if step is None else step
            keys = study_keys(run, step, budget_steps, mask_ratio, base_kind)
            why = not_comparable_because(run, step, budget_steps, family, result["task"].split(), protocols) if keys else ""
            for key in keys:
                rows.append(
                    {**key, "family": family, "dataset": dataset, "run": run["run"], "step": step, **result, "not_comparable_because": why}
                )
    return pd.DataFrame(rows, columns=OUR_COLUMNS)


def _results(scores: pd.DataFrame, family_scores: pd.DataFrame, curves: pd.DataFrame) -> dict[str, dict[tuple, dict[str, Any]]]:
    """run -> (step or None, the study's dataset or Average, its family) -> task, mean, low, high."""
    found: dict[str, dict[tuple, dict[str, Any]]] = {}

    def add(run: str, step: int | None, dataset: str, task: str, row: pd.Series) -> None:
        family = row["family"] if dataset == AVERAGE else FAMILY_OF_DATASET[dataset]
        result = {"task": task, "mean": row["test_mean"], "low": row["test_low"], "high": row["test_high"]}
        found.setdefault(run, {})[(step, dataset, family)] = result

    for _, row in scores[scores["task"].isin(TASK_DATASETS)].iterrows():
        add(row["run"], None, TASK_DATASETS[row["task"]], row["task"], row)
    for _, row in family_scores.iterrows():
        if _is_study_family(row["family"], str(row["tasks"]).split()):
            add(row["run"], None, AVERAGE, row["tasks"], row)
    checkpoints = curves[~curves["final"].astype(bool)]
    tasks_at = checkpoints[checkpoints["level"] == "task"].groupby(["run", "step", "family"])["name"].agg(list)
    for _, row in checkpoints.iterrows():
        step = int(row["step"])
        if row["level"] == "task" and row["name"] in TASK_DATASETS:
            add(row["run"], step, TASK_DATASETS[row["name"]], row["name"], row)
        elif row["level"] == "family":
            tasks = tasks_at.get((row["run"], row["step"], row["family"]), [])
            if _is_study_family(row["family"], tasks):
                add(row["run"], step, AVERAGE, " ".join(sorted(tasks)), row)
    return found


def _is_study_family(family: str, tasks: list[str]) -> bool:
    """Whether ``tasks`` are exactly the study's three datasets of ``family``: then their average is its Average."""
    return family in FAMILY_DATASETS and sorted(TASK_DATASETS.get(t, t) for t in tasks) == sorted(FAMILY_DATASETS[family])


def published_beside(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Every published cell (:data:`CELL_COLUMNS`), with this run's number beside it where it has one.

    A cell several runs could fill (none in a config of the study's scope) takes the first; a
    run's cell the study did not publish (a masking ratio it has no table for) is not shown.
    """
    cells = published.rename(columns={"mean": "study_mean", "ci": "study_ci"})
    ours = ours.astype({"step": object, **dict.fromkeys(["masking", "steps", "cpt_steps", "clm_steps", "mlm_steps"], int)})
    merged = cells.merge(ours, on=[*KEY[1:], "family", "dataset"], how="left").drop_duplicates([*KEY, "dataset"])
    rows = []
    for _, cell in merged.iterrows():
        produced = isinstance(cell["run"], str)
        inside = produced and abs(cell["mean"] - cell["study_mean"]) <= cell["study_ci"]
        why = cell["not_comparable_because"] if produced else ""
        rows.append(
            {
                **{column: cell[column] for column in [*KEY, "family", "dataset", "study_mean", "study_ci"]},
                "run": cell["run"] if produced else "",
                "step": _step(cell["step"]) if produced else None,
                "task": cell["task"] if produced else "",
                "mean": cell["mean"],
                "low": cell["low"],
                "high": cell["high"],
                "difference": cell["mean"] - cell["study_mean"] if produced else math.nan,
                "verdict": (WITHIN if inside else OUTSIDE) if produced else NOT_RUN,
                "comparable": produced and not why,
                "not_comparable_because": why,
            }
        )
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def _step(value: Any) -> int | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


def headline_gaps(comparison: pd.DataFrame, study_comparison: pd.DataFrame) -> pd.DataFrame:
    """study_headline.csv: per headline row (size, level, name) of this run's ``comparison`` the
    study published too, the study's MLM-40 − CLM there (``study_comparison``: the comparison.csv of
    its published tables, :mod:`.published_results`), for the headline's study column."""
    study = study_comparison.set_index(["size", "level", "name", "family"])
    rows = []
    for _, item in comparison.iterrows():
        name = item["family"] if item["level"] == "family" else TASK_DATASETS.get(item["name"])
        key = (STUDY_SIZES[item["size"]][0], item["level"], name, item["family"]) if item["size"] in STUDY_SIZES else None
        if key in study.index:  # not where the row's family is not the study's for that dataset
            gap = study.loc[key]
            rows.append({"size": item["size"], "level": item["level"], "name": item["name"], **gap[Estimate.column_names("difference_")]})
    return pd.DataFrame(rows, columns=STUDY_HEADLINE_COLUMNS)


def curve_gaps(study_curves: pd.DataFrame) -> pd.DataFrame:
    """study_curve.csv: the study's 610M MLM-40 − CLM family averages at each step of Tables 6-9
    (``study_curves``: the curve_comparison.csv of its published tables), with the tokens seen."""
    rows = study_curves[(study_curves["level"] == "family") & ~study_curves["final"].astype(bool)]
    rows = rows.assign(family=pd.Categorical(rows["family"], FAMILY_ORDER), tokens=rows["step"] * STUDY_TOKENS_PER_STEP)
    return rows.sort_values(["family", "step"])[STUDY_CURVE_COLUMNS].astype({"family": str}).reset_index(drop=True)
