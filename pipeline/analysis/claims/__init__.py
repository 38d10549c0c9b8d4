"""The claim checks: every claim of the claims file judged against the aggregated tables, this
run's and the study's (its published tables, :mod:`pipeline.analysis.published_results`; its released results,
:mod:`pipeline.analysis.study_claims`), one judge for all three.

A claim names a check *kind* and its parameters in ``config/claims.yaml`` (:mod:`.spec`);
each kind is registered once in :mod:`.registry` by the module that judges it, with a strict
parameter dataclass (importing the package loads every module),
beside the checks that read the same table: the headline MLM − CLM gap
(:mod:`.headline`), learning rates (:mod:`.learning_rates`), learning curves
(:mod:`.curves`), pretraining summaries (:mod:`.pretraining`), the objective zoo
(:mod:`.objectives`, :mod:`.masking`) and combined schedules (:mod:`.schedules`). What
they share, the verdict and how an interval decides it, is :mod:`.verdicts`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict

import pandas as pd

from pipeline.analysis.claims.registry import KINDS
from pipeline.analysis.claims.spec import Claim
from pipeline.analysis.claims.verdicts import judged_estimates
from pipeline.analysis.contract import CLAIM_COLUMNS, Results
from pipeline.analysis.stats import Estimate, ci_side, minimum_detectable_effect, replicates_to_detect
from pipeline.registry import load_members


def replicate_unit(results: Results) -> tuple[str, float]:
    """What the verdicts' intervals are over, and how many of it each arm has: pretraining
    seeds where the headline arms are pooled over several, else fine-tuning seeds."""
    seeds = results.tables["comparison"]["pretraining_seeds"].max() if len(results.tables["comparison"]) else 1
    if seeds > 1:
        return "pretraining seeds", float(seeds)
    counts = results.tables["scores"]["n_seeds"]
    return "fine-tuning seeds", float(counts.min()) if len(counts) else math.nan


def power_columns(judged: Sequence[Estimate], verdict: str, unit: str, replicates: float) -> dict[str, object]:
    """The weakest comparison a verdict rests on: the largest minimum detectable effect (80%
    power) among the estimates it judged, and for an inconclusive verdict the replicates per
    arm that would detect every observed gap it judged (the most any of them needs)."""
    mdes = [m for m in (minimum_detectable_effect(e) for e in judged) if not math.isnan(m)]
    needed = math.nan
    if verdict == "inconclusive" and mdes and not math.isnan(replicates):
        undecided = [replicates_to_detect(e, int(replicates)) for e in judged if ci_side(e) == "spans"]
        needed = max((n for n in undecided if not math.isnan(n)), default=math.nan)
    return {"detectable": max(mdes, default=math.nan), "to_decide": needed, "decide_unit": unit if mdes else ""}


def check_claims(claims: Sequence[Claim], results: Results) -> pd.DataFrame:
    """One row per claim: the claim, its verdict, the evidence and what is missing, and the
    power of the comparisons behind the verdict (:func:`power_columns`)."""
    unit, replicates = replicate_unit(results)
    rows = []
    for claim in claims:
        with judged_estimates() as judged:
            verdict = KINDS[claim.kind].check(results, claim.params)
        rows.append(
            {
                "id": claim.id,
                "source": claim.source,
                "claim": claim.claim,
                "measure": claim.measure,
                "status": claim.status,
                **asdict(verdict),
                **power_columns(judged, verdict.verdict, unit, replicates),
            }
        )
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


# Every module of the package, each kind's module registering it in KINDS (pipeline/registry.py).
load_members(__name__, __path__)
