"""finetune_grid.csv: every fine-tuning grid point of the final models."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import FINETUNE_GRID_COLUMNS

register(
    ResultTable(
        name="finetune_grid",
        description="one row per (task, run, learning_rate, seed)",
        columns=tuple(FINETUNE_GRID_COLUMNS),
        needs=(),
        build=lambda sources, built: by_size(
            sources.grid.drop(columns="test_scores"), sources.pretraining, ["task"], ["run", "learning_rate", "seed"]
        ),
    )
)
