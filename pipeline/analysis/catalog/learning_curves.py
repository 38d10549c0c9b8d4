"""learning_curves.csv: every fine-tuned pretraining checkpoint scored like its final model."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import LEARNING_CURVE_COLUMNS
from pipeline.analysis.curves import learning_curve_table

register(
    ResultTable(
        name="learning_curves",
        description="per (task | family, run with curve scores, pretraining step): score as in scores.csv, step, schedule_steps, "
        "budget_fraction, final",
        columns=tuple(LEARNING_CURVE_COLUMNS),
        needs=("run_scores",),
        build=lambda sources, built: by_size(
            learning_curve_table(sources.curve_grid, built["run_scores"], sources.pretraining, sources.confidence),
            sources.pretraining,
            [],
            ["family", "level", "name", "run", "step"],
        ),
    )
)
