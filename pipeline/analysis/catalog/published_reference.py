"""published_reference.csv: every cell the study published (its Tables 2-17, read from the
repository: no hub), with this run's number beside it where this run produced that cell
(:mod:`pipeline.analysis.study_cells` says how a run is matched), their difference, and
whether it falls within the study's interval."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.study_cells import CELL_COLUMNS, our_cells, published_beside
from pipeline.external.published_tables import read_published_tables


def build(sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    tables = (built[name] for name in ("pretraining", "scores", "family_scores", "learning_curves"))
    ours = our_cells(*tables, sources.objective_params, sources.protocols)
    return published_beside(read_published_tables(), ours)


register(
    ResultTable(
        name="published_reference",
        description="per cell of the study's Tables 2-17: its published mean and CI, this run's where it produced it, and the verdict",
        columns=tuple(CELL_COLUMNS),
        needs=("pretraining", "scores", "family_scores", "learning_curves"),
        build=build,
        displays=("published_reference",),
    )
)
