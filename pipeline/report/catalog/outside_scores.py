"""outside_scores.csv: the outside models (config ``outside_models``), scored by the same protocol."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.contract import RUN_SCORES_COLUMNS
from pipeline.report.outside_tables import outside_models_table
from pipeline.report.scoring import score_table
from pipeline.report.tables import Table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [outside_models_table(frames["outside_scores"], frames["run_scores"])] if len(frames["outside_scores"]) else []


register(
    ResultTable(
        name="outside_scores",
        description="per (task, outside model): run_scores' columns, size 'outside'",
        columns=tuple(RUN_SCORES_COLUMNS),
        needs=(),
        build=lambda sources, built: score_table(sources.outside_grid, sources.confidence),
        displays=(Display("outside", 0, display),),
    )
)
