"""curve_comparison.csv: MLM − CLM at every pretraining step both headline runs have a point."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.comparisons import by_size
from pipeline.report.contract import CURVE_COMPARISON_COLUMNS
from pipeline.report.curves import curve_comparison_table
from pipeline.report.tables import Table, learning_curve_tables


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return learning_curve_tables(frames["curve_comparison"], confidence)


register(
    ResultTable(
        name="curve_comparison",
        description=(
            "per (task | family, size, step) where the CLM and the MLM run both have a point: comparison.csv's columns, step, fraction"
        ),
        columns=tuple(CURVE_COMPARISON_COLUMNS),
        needs=("run_scores", "comparison"),
        build=lambda sources, built: by_size(
            curve_comparison_table(
                sources.curve_grid, built["run_scores"], built["comparison"], sources.pretraining, sources.tasks, sources.confidence
            ),
            sources.pretraining,
            [],
            ["family", "level", "name", "step"],
        ),
        displays=(
            Display(
                "learning-curves",
                0,
                display,
                empty="No size has learning-curve scores for both its CLM and its MLM run, so no difference is tabulated.",
            ),
        ),
    )
)
