"""pretraining.csv: one row per pretraining summary."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.contract import PRETRAINING_COLUMNS
from pipeline.report.tables import Table, pretraining_table, scale_table


def scale(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [scale_table(frames["pretraining"])]


def runs(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [pretraining_table(frames["pretraining"])]


register(
    ResultTable(
        name="pretraining",
        description="one row per pretraining summary",
        columns=tuple(PRETRAINING_COLUMNS),
        needs=(),
        build=lambda sources, built: sources.pretraining,
        displays=(Display("scale", 0, scale), Display("pretraining", 0, runs)),
    )
)
