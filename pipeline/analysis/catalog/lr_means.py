"""lr_means.csv: each run's test score at every fine-tuning learning rate, its mean over the seeds."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import LR_MEANS_COLUMNS
from pipeline.analysis.scoring import lr_means_table

register(
    ResultTable(
        name="lr_means",
        description="per (task, run, learning_rate): the test score's mean over the seeds, with its interval",
        columns=tuple(LR_MEANS_COLUMNS),
        needs=("finetune_grid",),
        build=lambda sources, built: lr_means_table(built["finetune_grid"], sources.confidence),
    )
)
