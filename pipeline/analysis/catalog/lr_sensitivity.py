"""lr_sensitivity.csv: how much a run's test score moves over the learning-rate grid."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import LR_SENSITIVITY_COLUMNS
from pipeline.analysis.scoring import lr_sensitivity_table

register(
    ResultTable(
        name="lr_sensitivity",
        description="per (task, run): how much the test score moves over the LR grid",
        columns=tuple(LR_SENSITIVITY_COLUMNS),
        needs=(),
        build=lambda sources, built: by_size(lr_sensitivity_table(sources.grid), sources.pretraining, ["task"], ["run"]),
        displays=("lr_sensitivity",),
    )
)
