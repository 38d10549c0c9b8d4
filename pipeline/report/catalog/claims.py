"""claims.csv: one verdict per claim of the claims file (:mod:`pipeline.report.claims`)."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, Sources, register
from pipeline.report.claims import check_claims
from pipeline.report.contract import CLAIM_COLUMNS, Results
from pipeline.report.tables import Table, claims_table, published_claims_table

# The tables the claim checks read (pipeline/report/claims/), so built before them.
JUDGED = ("comparison", "curve_comparison", "learning_curves", "lr_sensitivity", "objectives", "pretraining", "scores", "tasks")


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    return check_claims(sources.claims, Results(dict(built), sources.confidence, sources.objective_params, sources.measured_by))


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """This run's verdicts beside the published tables' and the released results' (``study_claims``,
    which the report stage adds where the study's results were given), then the tables' evidence."""
    claims, published = frames["claims"], frames["published_claims"]
    return [claims_table(claims, published, frames.get("study_claims")), published_claims_table(published, claims)]


register(
    ResultTable(
        name="claims",
        description="one verdict per claim of the claims file",
        columns=tuple(CLAIM_COLUMNS),
        needs=(*JUDGED, "published_claims"),
        build=build,
        displays=(Display("claims", 0, display),),
    )
)
