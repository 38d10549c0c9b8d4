"""study_headline.csv: the study's own MLM-40 − CLM at every headline row it published too."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, Sources, register
from pipeline.analysis.contract import STUDY_HEADLINE_COLUMNS
from pipeline.analysis.study_cells import headline_gaps
from pipeline.external.published_tables import read_published_tables


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    gaps = headline_gaps(built["comparison"], read_published_tables())
    rows = [{"size": size, "level": level, "name": name, **gap.columns("difference_")} for (size, level, name), gap in gaps.items()]
    return pd.DataFrame(rows, columns=STUDY_HEADLINE_COLUMNS)


register(
    ResultTable(
        name="study_headline",
        description="per headline row (size, level, name) the study published too: its MLM-40 − CLM (Tables 2-5)",
        columns=tuple(STUDY_HEADLINE_COLUMNS),
        needs=("comparison",),
        build=build,
    )
)
