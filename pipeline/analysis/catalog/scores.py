"""scores.csv: run_scores with the pretraining replicates of an arm pooled."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import SCORES_COLUMNS
from pipeline.analysis.replicates import pool_replicates

register(
    ResultTable(
        name="scores",
        description="per (task, arm): run_scores with an arm's replicates pooled (CI over pretraining seeds, see replicates.py)",
        columns=tuple(SCORES_COLUMNS),
        needs=("run_scores",),
        build=lambda sources, built: pool_replicates(built["run_scores"], ["task"], sources.confidence),
    )
)
