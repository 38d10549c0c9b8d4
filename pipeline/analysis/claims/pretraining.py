"""Claims about pretraining itself, judged on pretraining.csv (the runs' summaries)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import Verdict
from pipeline.analysis.contract import Results
from pipeline.analysis.runs import masking


@dataclass(frozen=True)
class LossFraction:
    """Each objective computes its loss on ``claimed_percent[objective]`` % of the positions."""

    claimed_percent: dict[str, float]  # objective kind (mlm, clm) -> percent of positions
    # A loss fraction is a count over every trained batch, not an estimate; two points
    # absorb random masking noise and CLM's one unpredicted position per sequence.
    tolerance_percent: float = 2.0

    def validate(self) -> None:
        if set(self.claimed_percent) != {"mlm", "clm"}:
            raise ValueError(f"claimed_percent must give mlm and clm, got {sorted(self.claimed_percent)}")


def mlm_ratio(results: Results, run: str) -> float:
    """The masking ratio the run's MLM objective trained with."""
    return masking(results.objective_params, run)["mask_ratio"]


@register("loss_fraction", LossFraction, reads="pretraining.csv")
def check_loss_fraction(results: Results, params: LossFraction) -> Verdict:
    """The measured loss fractions against the claimed ones.

    The claim describes one masking ratio (BERT's 15%), so an MLM run at another ratio
    cannot test it; each run's fraction is still compared with what its own configuration
    implies.
    """
    claimed = {kind: value / 100 for kind, value in params.claimed_percent.items()}
    runs = results.tables["pretraining"]
    runs = runs[runs["loss_fraction"].notna()]  # the study's released runs, for one, record none
    if not {"mlm", "clm"} <= set(runs["objective_kind"]):
        return Verdict(
            "not measured",
            "no MLM or no CLM pretraining summary with its loss fraction",
            "MLM and CLM pretraining summaries with loss_fraction",
        )
    expected = {
        row.run: claimed["clm"] if row.objective_kind == "clm" else mlm_ratio(results, row.run)
        for row in runs.itertuples()
        if row.objective_kind in claimed
    }
    measured = dict(zip(runs["run"], runs["loss_fraction"]))
    found = ", ".join(f"{run} {100 * measured[run]:.1f}% (configured {100 * want:g}%)" for run, want in expected.items())
    evidence = f"Fraction of positions carrying loss, counted over all trained batches: {found}."
    if any(abs(measured[run] - want) > params.tolerance_percent / 100 for run, want in expected.items()):
        return Verdict("contradicted", evidence + " A run's fraction departs from its configuration.")
    at_claimed_ratio = [run for run, want in expected.items() if want == claimed["mlm"]]
    mlm_percent = f"{params.claimed_percent['mlm']:g}%"
    if not at_claimed_ratio:
        return Verdict(
            "not measured",
            evidence + f" CLM matches {params.claimed_percent['clm']:g}% (less one unpredicted position per sequence); "
            f"no MLM run uses the claimed {mlm_percent}, so the {mlm_percent} half is untested.",
            f"an MLM run at a {mlm_percent} masking ratio",
        )
    return Verdict("supported", evidence + f" MLM at the claimed {mlm_percent} ({', '.join(at_claimed_ratio)}) and CLM match the claim.")
