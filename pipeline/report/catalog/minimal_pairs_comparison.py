"""minimal_pairs_comparison.csv: MLM − CLM on the zero-shot minimal pairs."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.contract import MINIMAL_PAIRS_COMPARISON_COLUMNS
from pipeline.report.tables import Table
from pipeline.report.zero_shot import minimal_pairs_comparison
from pipeline.report.zero_shot_tables import minimal_pairs_comparison_table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    comparison = frames["minimal_pairs_comparison"]
    return [minimal_pairs_comparison_table(comparison, confidence)] if len(comparison) else []


register(
    ResultTable(
        name="minimal_pairs_comparison",
        description="per (size, kind): MLM − CLM on minimal pairs",
        columns=tuple(MINIMAL_PAIRS_COMPARISON_COLUMNS),
        needs=("minimal_pairs",),
        build=lambda sources, built: minimal_pairs_comparison(sources.pair_outcomes, built["minimal_pairs"], sources.confidence),
        displays=(Display("zero-shot", 0, display),),
    )
)
