"""curve_comparison.csv: MLM − CLM at every pretraining step both headline runs have a point."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import CURVE_COMPARISON_COLUMNS
from pipeline.analysis.curves import curve_comparison_table

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
        displays=("curve_comparison",),
    )
)
