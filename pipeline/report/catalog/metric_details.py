"""metric_details.csv: every number a task's metric gives besides its headline."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.appendix_tables import metric_detail_tables
from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.comparisons import by_size
from pipeline.report.contract import DETAIL_COLUMNS
from pipeline.report.scoring import detail_table
from pipeline.report.tables import Table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return metric_detail_tables(frames["metric_details"], frames["tasks"])


register(
    ResultTable(
        name="metric_details",
        description="per (task, run, key): every number the task's metric gives (QA has-answer / no-answer EM and F1, "
        "IR MRR@10, NIAH accuracy per context length and depth) at the best LR, seed mean and CI",
        columns=tuple(DETAIL_COLUMNS),
        needs=("run_scores",),
        build=lambda sources, built: by_size(
            detail_table(sources.grid, built["run_scores"], sources.confidence), sources.pretraining, ["task"], ["run", "key"]
        ),
        displays=(Display("downstream", 0, display, empty="No task's metric gives more than its headline number."),),
    )
)
