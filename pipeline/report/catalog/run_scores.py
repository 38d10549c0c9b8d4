"""run_scores.csv: each final model's score per task by the study's protocol."""

from pipeline.report.catalog.base import ResultTable, register
from pipeline.report.comparisons import by_size
from pipeline.report.contract import RUN_SCORES_COLUMNS
from pipeline.report.scoring import score_table

register(
    ResultTable(
        name="run_scores",
        description="per (task, run): best LR on validation, test seed mean and CI; every pretraining replicate apart",
        columns=tuple(RUN_SCORES_COLUMNS),
        needs=(),
        build=lambda sources, built: by_size(score_table(sources.grid, sources.confidence), sources.pretraining, ["task"], ["run"]),
    )
)
