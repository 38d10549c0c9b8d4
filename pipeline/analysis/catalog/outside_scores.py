"""outside_scores.csv: the outside models (config ``outside_models``), scored by the same protocol."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import RUN_SCORES_COLUMNS
from pipeline.analysis.scoring import score_table

register(
    ResultTable(
        name="outside_scores",
        description="per (task, outside model): run_scores' columns, size 'outside'",
        columns=tuple(RUN_SCORES_COLUMNS),
        needs=(),
        build=lambda sources, built: score_table(sources.outside_grid, sources.confidence),
        displays=("outside_scores",),
    )
)
