"""Models and results made outside this harness, in points: checkpoints of ``outside_models``
fine-tuned here beside this run's CLM and MLM, and the study's released results (EncodEval)
recomputed with this protocol (:mod:`pipeline.analysis.study_results`): one table per task
family, a model per row and a dataset per column, the paired per-example comparisons, and
the study's numbers beside this harness's for the checkpoints both fine-tuned."""

from __future__ import annotations

import pandas as pd

from pipeline.analysis.text import interval_text
from pipeline.report.tables import Table, claim_evidence, key, num, row, verdict_cell


def outside_models_table(outside: pd.DataFrame, run_scores: pd.DataFrame) -> Table:
    """Each outside model's test mean [CI over fine-tuning seeds] per task, beside this run's
    CLM and MLM runs (first pretraining replicate) of every size."""
    ours = run_scores[run_scores["run_name"].isin(["clm", "mlm"])]
    tasks = sorted(set(outside["task"]))
    rows = []
    for label, frame in (("outside", outside), ("this harness", ours)):
        for run, at_run in frame.groupby("run", sort=True):
            by_task = at_run.set_index("task")
            cells = [
                num(interval_text(*by_task.loc[task, ["test_mean", "test_low", "test_high"]]) if task in by_task.index else "—")
                for task in tasks
            ]
            rows.append(row(key(str(at_run["run_name"].iloc[0]) if label == "outside" else str(run)), label, *cells))
    return Table(
        caption="Outside models, fine-tuned by this harness",
        header=("model", "made by", *tasks),
        rows=tuple(rows),
        note=(
            "Test score at the learning rate chosen on validation, mean over fine-tuning seeds with its t-interval (each model "
            "is one pretraining run). An outside model is imported as it is (its weights, its tokenizer) and fine-tuned "
            "with the same protocol, tasks and seeds as this run's models."
        ),
    )


def dataset_name(item: pd.Series) -> str:
    return f"{item['dataset']} ({item['training_set']})" if item["training_set"] else str(item["dataset"])


def study_score_tables(scores: pd.DataFrame) -> list[Table]:
    """Per family: each model's test mean [CI over fine-tuning seeds] at its LR chosen on validation."""
    tables = []
    for family, at_family in scores.groupby("family", sort=True):
        datasets = sorted({dataset_name(item) for _, item in at_family.iterrows()})
        cells = {(item["model"], dataset_name(item)): item for _, item in at_family.iterrows()}
        rows = []
        for model in sorted(at_family["model"].unique()):
            texts = []
            for dataset in datasets:
                item = cells.get((model, dataset))
                texts.append(num("—" if item is None else interval_text(item["test_mean"], item["test_low"], item["test_high"])))
            rows.append(row(key(model), *texts))
        seeds = sorted(at_family["n_seeds"].unique())
        tables.append(
            Table(
                caption=f"{family}: the study's released results, recomputed",
                header=("model", *datasets),
                rows=tuple(rows),
                note=(
                    "Test score at the learning rate with the best mean validation score, the mean over fine-tuning seeds "
                    f"({', '.join(map(str, seeds))} per model) with its t-interval over those seeds only: each model is one "
                    "pretraining run, so the interval says nothing about pretraining another."
                ),
            )
        )
    return tables


def difference_of(item: pd.Series) -> tuple[float, float, float]:
    """A row's difference as written: its mean and interval."""
    return item["difference_mean"], item["difference_low"], item["difference_high"]


def study_paired_table(paired: pd.DataFrame, confidence: float) -> Table | None:
    """first − second on the same test examples, each averaged over its seeds at its chosen LR."""
    if paired.empty:
        return None
    rows = []
    for _, item in paired.iterrows():
        rows.append(
            row(
                key(f"{item['first']} − {item['second']}"),
                dataset_name(item),
                num(f"{int(item['examples']):,}"),
                num(interval_text(*difference_of(item), signed=True)),
                item["ahead"],
            )
        )
    return Table(
        caption="The study's models compared example by example",
        header=("difference", "dataset", "test examples", "difference (points)", "ahead"),
        rows=tuple(rows),
        note=(
            "Each example's score averaged over a model's seeds at its chosen learning rate, then the mean difference "
            "over examples with its t-interval: the variance is that of the test examples, with seeds averaged out and "
            "one pretraining run per model."
        ),
    )


def study_versus_table(versus: pd.DataFrame, confidence: float) -> Table | None:
    """Per outside model that is one of the study's checkpoints, and task: the study's number
    and ours side by side, and ours − the study's on the same examples where they pair."""
    if versus.empty:
        return None
    rows = []
    for _, item in versus.iterrows():
        paired = (
            num(interval_text(*difference_of(item), signed=True)) if item["examples"] > 0 else f"not paired: {item['not_paired_because']}"
        )
        rows.append(
            row(
                key(str(item["model"])),
                str(item["task"]),
                dataset_name(item),
                num(interval_text(item["study_test_mean"], item["study_test_low"], item["study_test_high"])),
                num(interval_text(item["ours_test_mean"], item["ours_test_low"], item["ours_test_high"])),
                paired,
            )
        )
    return Table(
        caption="The study's released checkpoints: the study's numbers and this harness's",
        header=("model", "task", "study's dataset", "study", "this harness", "this harness − study (paired)"),
        rows=tuple(rows),
        note=(
            "The same checkpoint fine-tuned by the study (EncodEval) and by this harness, each at the learning rate with its "
            "best mean validation score: test means with t-intervals over each side's fine-tuning seeds. The paired "
            "difference is taken example by example (each side averaged over its seeds) with a t-interval over examples; "
            "it pairs examples by their position in the test split, so it holds where both used the same split in the same "
            "order (the counts are checked, the order cannot be)."
        ),
    )


def study_claims_table(study_claims: pd.DataFrame, this_run_claims: pd.DataFrame) -> Table | None:
    """Every claim judged on the study's own released results, beside this run's verdict."""
    if study_claims.empty:
        return None
    this_run = this_run_claims.set_index("id")["verdict"]
    rows = []
    for _, item in study_claims.iterrows():
        ours = verdict_cell(this_run.get(item["id"], "—"))
        rows.append(row(item["id"], item["claim"], verdict_cell(item["verdict"]), ours, claim_evidence(item)))
    return Table(
        caption="The write-ups' claims against the study's own released results",
        header=("ID", "Claim", "The study's results", "This run", "Evidence from the study's results"),
        rows=tuple(rows),
        note=(
            "The study's headline models (<size>-clm-42k as CLM, <size>-mlm40-42k as MLM), every dataset of its released grid "
            "scored with its own metric, through this harness's protocol and claim checks: intervals over the study's "
            "fine-tuning seeds of one pretraining run per model. Claims that need other runs (learning curves, the objective "
            "zoo, two-stage or continued runs) are not measured on this side."
        ),
        css="wide-text claims",
    )
