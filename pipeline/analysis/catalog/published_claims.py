"""published_claims.csv: every claim of the claims file judged on the study's published tables
(:mod:`pipeline.analysis.published_claims`), whatever this run trained: shown beside this run's
verdicts in the claims table."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.published_claims import PUBLISHED_CLAIM_COLUMNS, published_verdicts

register(
    ResultTable(
        name="published_claims",
        description="per claim: its verdict on the study's published Tables 2-17, with the evidence or what they lack",
        columns=tuple(PUBLISHED_CLAIM_COLUMNS),
        needs=(),
        build=lambda sources, built: published_verdicts(sources.claims),
    )
)
