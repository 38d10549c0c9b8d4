"""metric_details.csv: every number a task's metric gives besides its headline."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import DETAIL_COLUMNS
from pipeline.analysis.scoring import detail_table

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
        displays=("metric_details",),
    )
)
