"""family_scores.csv: each arm's family averages."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import by_size
from pipeline.analysis.contract import FAMILY_SCORES_COLUMNS
from pipeline.analysis.replicates import pool_replicates
from pipeline.analysis.scoring import family_table

register(
    ResultTable(
        name="family_scores",
        description="per (family, arm): average of the family's task means, pooled",
        columns=tuple(FAMILY_SCORES_COLUMNS),
        needs=("run_scores",),
        # Families per replicate first, then pooled: a replicate that is good on one task of a
        # family tends to be good on the others, and pooling the family means keeps that.
        build=lambda sources, built: by_size(
            pool_replicates(family_table(built["run_scores"], sources.confidence), ["family"], sources.confidence),
            sources.pretraining,
            ["family"],
            ["run"],
        ),
    )
)
