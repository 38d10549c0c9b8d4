"""comparison.csv: the headline, MLM − CLM per task and family at each size, and each
against its random-init twin."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size, comparison_table
from pipeline.analysis.contract import COMPARISON_COLUMNS

register(
    ResultTable(
        name="comparison",
        description="per (task | family, size): MLM, CLM, MLM − CLM (Welch), winner, and each against its random-init twin",
        columns=tuple(COMPARISON_COLUMNS),
        needs=("scores", "family_scores"),
        build=lambda sources, built: by_size(
            comparison_table(built["scores"], built["family_scores"], sources.pretraining, sources.tasks, sources.confidence),
            sources.pretraining,
            [],
            ["family", "level", "name"],
        ),
        displays=("versus_random", "headline"),
    )
)
