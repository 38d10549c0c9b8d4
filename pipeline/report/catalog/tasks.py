"""tasks.csv: one row per downstream task (provenance of its data)."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.appendix_tables import tasks_table
from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.contract import TASKS_COLUMNS
from pipeline.report.tables import Table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [tasks_table(frames["tasks"])]


register(
    ResultTable(
        name="tasks",
        description="one row per task (provenance of the downstream data)",
        columns=tuple(TASKS_COLUMNS),
        needs=(),
        build=lambda sources, built: sources.tasks,
        displays=(Display("provenance", 0, display),),
    )
)
