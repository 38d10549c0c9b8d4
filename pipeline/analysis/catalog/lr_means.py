"""lr_means.csv: each run's test score at every fine-tuning learning rate, its mean over the seeds."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, Sources, register
from pipeline.analysis.contract import LR_MEANS_COLUMNS, RUN_COLUMNS
from pipeline.analysis.stats import mean_interval


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    grid = built["finetune_grid"]
    rows = [
        {
            **dict(zip([*RUN_COLUMNS, "learning_rate"], key)),
            "n_seeds": len(group),
            **mean_interval(group["test"].to_numpy(), sources.confidence).columns("test_"),
        }
        for key, group in grid.groupby([*RUN_COLUMNS, "learning_rate"], sort=False)
    ]
    return pd.DataFrame(rows, columns=LR_MEANS_COLUMNS)


register(
    ResultTable(
        name="lr_means",
        description="per (task, run, learning_rate): the test score's mean over the seeds, with its interval",
        columns=tuple(LR_MEANS_COLUMNS),
        needs=("finetune_grid",),
        build=build,
    )
)
