"""claims.csv: one verdict per claim of the claims file (:mod:`pipeline.analysis.claims`)."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, Sources, register
from pipeline.analysis.claims import check_claims
from pipeline.analysis.contract import CLAIM_COLUMNS, Results

# The tables the claim checks read (pipeline/analysis/claims/), so built before them.
JUDGED = ("comparison", "curve_comparison", "learning_curves", "lr_sensitivity", "objectives", "pretraining", "scores", "tasks")


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    return check_claims(sources.claims, Results(dict(built), sources.confidence, sources.objective_params, sources.measured_by))


register(
    ResultTable(
        name="claims",
        description="one verdict per claim of the claims file",
        columns=tuple(CLAIM_COLUMNS),
        needs=(*JUDGED, "published_claims"),
        build=build,
        displays=("claims",),
    )
)
