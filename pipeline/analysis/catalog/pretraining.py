"""pretraining.csv: one row per pretraining summary."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import PRETRAINING_COLUMNS

register(
    ResultTable(
        name="pretraining",
        description="one row per pretraining summary",
        columns=tuple(PRETRAINING_COLUMNS),
        needs=(),
        build=lambda sources, built: sources.pretraining,
        displays=("scale", "pretraining"),
    )
)
