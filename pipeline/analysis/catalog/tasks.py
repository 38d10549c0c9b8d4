"""tasks.csv: one row per downstream task (provenance of its data)."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import TASKS_COLUMNS

register(
    ResultTable(
        name="tasks",
        description="one row per task (provenance of the downstream data)",
        columns=tuple(TASKS_COLUMNS),
        needs=(),
        build=lambda sources, built: sources.tasks,
        displays=("tasks",),
    )
)
