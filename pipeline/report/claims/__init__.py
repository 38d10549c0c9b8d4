"""The claim checks: every claim of the claims file judged against the aggregated tables.

A claim names a check *kind* and its parameters in ``config/claims.yaml`` (:mod:`.spec`);
each kind is registered once (:mod:`.registry`) with a strict parameter dataclass,
beside the checks that read the same table: the headline MLM − CLM gap
(:mod:`.headline`), learning rates (:mod:`.learning_rates`), learning curves
(:mod:`.curves`), pretraining summaries (:mod:`.pretraining`), the objective zoo
(:mod:`.objectives`, :mod:`.masking`) and combined schedules (:mod:`.schedules`). What
they share, the verdict and how an interval decides it, is :mod:`.verdicts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import pandas as pd

from pipeline.report.claims.registry import KINDS
from pipeline.report.claims.spec import Claim
from pipeline.report.contract import CLAIM_COLUMNS, Results


def check_claims(claims: Sequence[Claim], results: Results) -> pd.DataFrame:
    """One row per claim: the claim, its verdict, the evidence and what is missing."""
    rows = []
    for claim in claims:
        verdict = KINDS[claim.kind].check(results, claim.params)
        rows.append({"id": claim.id, "source": claim.source, "claim": claim.claim, "measure": claim.measure, "status": claim.status, **asdict(verdict)})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
