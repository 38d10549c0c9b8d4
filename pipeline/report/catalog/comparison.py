"""comparison.csv: the headline, MLM − CLM per task and family at each size, and each
against its random-init twin."""

from collections.abc import Mapping

import pandas as pd

from pipeline.external.published_tables import read_published_tables
from pipeline.external.study_cells import headline_gaps
from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.comparisons import by_size, comparison_table
from pipeline.report.contract import COMPARISON_COLUMNS
from pipeline.report.evidence_tables import versus_random_table
from pipeline.report.tables import Table, headline_tables


def versus_random(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [versus_random_table(frames["comparison"], frames["minimal_pairs"], confidence)]


def headline(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """The headline tables, with the study's own MLM − CLM beside each row it published too."""
    study = headline_gaps(frames["comparison"], read_published_tables())
    return headline_tables(frames["comparison"], frames["baselines"], confidence, study)


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
        displays=(
            Display("evidence", 0, versus_random),
            Display(
                "headline",
                0,
                headline,
                empty="No model size has both an MLM and a CLM run, so there is nothing to compare.",
                css="headline",
            ),
        ),
    )
)
