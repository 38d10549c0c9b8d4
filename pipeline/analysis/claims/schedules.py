"""Claims about training schedules that combine objectives, judged on objectives.csv:
two-stage CLM→MLM against MLM alone at one step budget, and continued pretraining on
different bases."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.analysis.claims.objective_rows import matched_budget_text, placed, versus_reference
from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import (
    Verdict,
    budget_text,
    direction_verdict,
    estimate_of,
    fit_text,
    listing,
    mixed_text,
    percent,
    range_verdict,
    scale,
)
from pipeline.analysis.contract import Results
from pipeline.analysis.runs import CONTINUED, TWO_STAGE
from pipeline.analysis.stats import Estimate, difference


@dataclass(frozen=True)
class TwoStageGain:
    """CLM→MLM splits beat MLM alone by ``claimed_gain`` points at equal steps."""

    claimed_gain: float


@dataclass(frozen=True)
class ContinuedFromBase:
    """MLM continued pretraining on a decayed CLM base beats the same on an MLM base, by
    ``claimed_gain`` points after ``claimed_cpt_steps`` steps where the claim says."""

    claimed_gain: float | None = None
    claimed_cpt_steps: int | None = None

    def validate(self) -> None:
        if (self.claimed_gain is None) != (self.claimed_cpt_steps is None):
            raise ValueError("a claimed_gain needs the claimed_cpt_steps it was measured after, and only it")


@register("two_stage_gain", TwoStageGain, reads="objectives.csv, pretraining.csv")
def check_two_stage_gain(results: Results, params: TwoStageGain) -> Verdict:
    """Two-stage CLM→MLM beats MLM-only by a claimed gain at a fixed budget: every split, per
    family, size and step budget, − the MLM run of that budget, Welch CI. No split is picked by
    its own test score (which would favour it): each is judged, and a claim that holds for some
    splits and fails for others is mixed, naming which."""
    rows = placed(results, TWO_STAGE)
    splits = rows[(rows["study"] == "two_stage") & rows["minus_mlm_mean"].notna()]
    if splits.empty:
        return Verdict(
            "not measured",
            "no two-stage CLM→MLM run has an MLM-only run at its size",
            "two-stage CLM-then-MLM runs at equal total steps, and an MLM-only run",
        )
    items = versus_reference(results, splits, "mlm")
    claimed = params.claimed_gain
    evidence = (
        f"Family-average two-stage − MLM-only ({percent(results.confidence)}, Welch), every split: {listing(items)} points "
        f"{scale(results)}; {fit_text(items, claimed, claimed, ' points')}{mixed_text(items, claimed, claimed)}; "
        f"{matched_budget_text(results, splits, 'mlm')}."
    )
    return Verdict(range_verdict(items, claimed, claimed), evidence)


def continued_gaps(results: Results) -> tuple[list[tuple[str, Estimate]], list[str]]:
    """Per family and size: MLM continued pretraining on the CLM base − on the MLM base
    (Welch), from the one MLM CPT run of each base kind; and the runs compared."""
    rows = placed(results, CONTINUED)
    rows = rows[rows["objective_kind"] == "mlm"]
    items, runs = [], []
    for (family, size), group in rows.groupby(["family", "size"], sort=False):
        on_clm, on_mlm = (group[group["base_kind"] == kind] for kind in ("clm", "mlm"))
        if len(on_clm) == 1 and len(on_mlm) == 1:
            items.append((f"{family} {size}", difference(estimate_of(results, on_clm.iloc[0]), estimate_of(results, on_mlm.iloc[0]))))
            runs += [on_clm.iloc[0]["run"], on_mlm.iloc[0]["run"]]
    return items, runs


@register("continued_from_base", ContinuedFromBase, reads="objectives.csv, pretraining.csv")
def check_continued_from_base(results: Results, params: ContinuedFromBase) -> Verdict:
    """MLM CPT on a CLM base beats the same on an MLM base: the direction is judged.

    A claimed gain belongs to the claim's CPT length; whether it lies in the CI is
    reported, not judged, since the CPT here is far shorter.
    """
    claimed_gain = params.claimed_gain
    items, runs = continued_gaps(results)
    if not items:
        return Verdict(
            "not measured",
            "no pair of MLM continued-pretraining runs on a decayed CLM and a decayed MLM base at one size",
            "continued-pretraining (MLM CPT) runs from decayed CLM and MLM bases, same CPT steps",
        )
    magnitude = ""
    if claimed_gain is not None:
        fit = fit_text(items, claimed_gain, claimed_gain, " points")
        magnitude = f"; {fit}, but only the direction is judged: the claimed gain is after {params.claimed_cpt_steps:,} CPT steps"
    evidence = (
        f"Family-average MLM CPT on the CLM base − on the MLM base ({percent(results.confidence)}, Welch) {listing(items)} points "
        f"{scale(results)}; {budget_text(results, runs)} of CPT{magnitude}{mixed_text(items)}."
    )
    return Verdict(direction_verdict(items), evidence)
