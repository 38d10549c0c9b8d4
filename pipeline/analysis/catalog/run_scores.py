"""run_scores.csv: each final model's score per task by the study's protocol."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import RUN_SCORES_COLUMNS
from pipeline.analysis.scoring import score_table

register(
    ResultTable(
        name="run_scores",
        description="per (task, run): best LR on validation, test seed mean and CI; every pretraining replicate apart",
        columns=tuple(RUN_SCORES_COLUMNS),
        needs=(),
        build=lambda sources, built: by_size(score_table(sources.grid, sources.confidence), sources.pretraining, ["task"], ["run"]),
    )
)
