"""The study's released results (EncodEval), recomputed with this protocol
(:mod:`pipeline.external.study_results`): one table per task family, a model per row and a
dataset per column, and the paired per-example comparisons, in points."""

from __future__ import annotations

import pandas as pd

from pipeline.report.stats import Estimate, ci_side
from pipeline.report.tables import Table, key, num, row
from pipeline.report.text import interval_text


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
        tables.append(Table(
            caption=f"{family}: the study's released results, recomputed",
            header=("model", *datasets),
            rows=tuple(rows),
            note=(
                "Test score at the learning rate with the best mean validation score, the mean over fine-tuning seeds "
                f"({', '.join(map(str, seeds))} per model) with its t-interval over those seeds only: each model is one "
                "pretraining run, so the interval says nothing about pretraining another."
            ),
        ))  # fmt: skip
    return tables


def study_paired_table(paired: pd.DataFrame, confidence: float) -> Table | None:
    """first − second on the same test examples, each averaged over its seeds at its chosen LR."""
    if paired.empty:
        return None
    rows = []
    for _, item in paired.iterrows():
        estimate = Estimate.from_columns(item, confidence, "difference_")
        side = ci_side(estimate)
        verdict = {"above": item["first"], "below": item["second"], "spans": "no difference resolved"}.get(side, "—")
        rows.append(row(key(f"{item['first']} − {item['second']}"), dataset_name(item), num(f"{int(item['examples']):,}"),
                        num(interval_text(estimate.mean, estimate.low, estimate.high, signed=True)), verdict))  # fmt: skip
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
