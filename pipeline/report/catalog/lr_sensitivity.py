"""lr_sensitivity.csv: how much a run's test score moves over the learning-rate grid."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.comparisons import by_size
from pipeline.report.contract import LR_SENSITIVITY_COLUMNS
from pipeline.report.scoring import lr_sensitivity_table
from pipeline.report.tables import Table
from pipeline.report.tables import lr_sensitivity_table as lr_table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [lr_table(frames["lr_sensitivity"], frames["run_scores"])]


register(
    ResultTable(
        name="lr_sensitivity",
        description="per (task, run): how much the test score moves over the LR grid",
        columns=tuple(LR_SENSITIVITY_COLUMNS),
        needs=(),
        build=lambda sources, built: by_size(lr_sensitivity_table(sources.grid), sources.pretraining, ["task"], ["run"]),
        displays=(Display("finetuning", 0, display),),
    )
)
