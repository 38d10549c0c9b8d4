"""Claims about the course of pretraining, judged on the learning curves
(learning_curves.csv, curve_comparison.csv): which objective leads early and late, and
which reaches most of its final score sooner. Steps are compared as shares of each
run's budget, so a claim about the study's 42,000-step runs can be checked on a few
hundred steps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import Verdict, budget_text, combine, estimate_of, judge, percent, scale
from pipeline.analysis.contract import Results
from pipeline.analysis.stats import Estimate, ci_side, linear_combination
from pipeline.analysis.text import interval_text


@dataclass(frozen=True)
class EarlyLeadThenCrossover:
    """CLM ahead by up to ``claimed_max_lead`` points at ``claimed_lead_step`` and behind from
    about ``claimed_crossover_step``, steps of the study's ``study_budget_steps``-step runs."""

    claimed_lead_step: int
    claimed_crossover_step: int
    claimed_max_lead: float
    study_budget_steps: int

    def validate(self) -> None:
        if not 0 < self.claimed_lead_step < self.claimed_crossover_step <= self.study_budget_steps:
            raise ValueError("need 0 < claimed_lead_step < claimed_crossover_step <= study_budget_steps")

    @property
    def crossover_share(self) -> float:
        """The claimed crossover as a share of the budget."""
        return self.claimed_crossover_step / self.study_budget_steps


@dataclass(frozen=True)
class ConvergesFaster:
    """CLM reaches ``threshold`` of its final score ``claimed_faster_percent`` sooner than MLM."""

    claimed_faster_percent: float
    threshold: float = 0.9  # a run has "converged" once it reaches this share of its own final family average

    def validate(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError(f"threshold {self.threshold} must lie strictly between 0 and 1")


CURVES_NEEDED = (
    "downstream scores of intermediate pretraining checkpoints of the CLM and MLM runs: steps in pretraining.checkpoint_steps "
    "and `learning_curves: {sizes: [tiny], runs: [clm, mlm]}` in the config"
)
# (share of the pretraining budget, estimate) points of one curve, by share.
Points = Sequence[tuple[float, Estimate]]


def share_text(fraction: float) -> str:
    return f"{100 * fraction:.0f}%"


def crossing(points: Points) -> tuple[float | None, float | None]:
    """Where a difference first turns positive: (the last share before it at which its
    CI lies below 0, the first share at which its CI lies above 0), None where there is
    none. Points in between span 0, so the crossing lies anywhere in that bracket."""
    sides = [ci_side(estimate) for _, estimate in points]
    first_above = sides.index("above") if "above" in sides else len(points)
    below = [fraction for (fraction, _), side in zip(points[:first_above], sides) if side == "below"]
    return below[-1] if below else None, points[first_above][0] if first_above < len(points) else None


def gap_curves(results: Results) -> dict[tuple[str, str], list[tuple[float, Estimate]]]:
    """Per (family, size): family-average MLM − CLM at every share of the budget where
    both headline runs have a point, for pairs with at least one checkpoint."""
    rows = results.tables["curve_comparison"]
    rows = rows[(rows["level"] == "family") & rows["budget_fraction"].notna()]
    return {
        (family, size): [(r["budget_fraction"], estimate_of(results, r, "difference_")) for _, r in group.sort_values("step").iterrows()]
        for (family, size), group in rows.groupby(["family", "size"], sort=False)
        if not group["final"].all()
    }


def c04_verdict(points: Points, crossover: float) -> str:
    """CLM ahead at the earliest checkpoint and MLM ahead at the final model, each with a
    CI excluding 0; either resolved the other way contradicts the claim, except MLM
    ahead at an earliest checkpoint past the claimed ``crossover`` (a share of the
    budget): MLM may have overtaken before it, as claimed. A curve that ends before the
    ``crossover`` (runs stopped early: pretraining.stop_at_step) tests the early lead alone,
    which can contradict the claim but not support all of it."""
    (first, early), (last, late) = points[0], points[-1]
    clm_early = judge(linear_combination((-1.0,), (early,)))
    if clm_early == "contradicted" and first >= crossover:
        clm_early = "inconclusive"
    if last < crossover:
        return "contradicted" if clm_early == "contradicted" else "inconclusive"
    parts = {clm_early, judge(late)}
    return "contradicted" if "contradicted" in parts else "supported" if parts == {"supported"} else "inconclusive"


def crossing_text(points: Points) -> str:
    before, after = crossing(points)
    if after is None:
        return "MLM never resolved ahead"
    if before is None:
        return f"MLM ahead from {share_text(after)}, CLM never resolved ahead before"
    return f"MLM overtakes CLM between {share_text(before)} and {share_text(after)} of the budget"


def curve_text(points: Points) -> str:
    """Each point of a curve as ``25% −4.5 [−5.2, −3.8]``, the last one the final model."""
    return ", ".join(f"{'final' if f == 1 else share_text(f)} {interval_text(e.mean, e.low, e.high, signed=True)}" for f, e in points)


def curve_runs(results: Results) -> list[str]:
    return [*results.tables["curve_comparison"]["clm_run"], *results.tables["curve_comparison"]["mlm_run"]]


def at_the_claimed_steps(points: Points, params: EarlyLeadThenCrossover) -> list[str]:
    """What runs of the claim's own budget can judge besides the direction: CLM's lead at the
    claimed step (where a checkpoint is there) and the crossover (MLM resolved ahead only after
    the last point where CLM is, the claimed step in between)."""
    lead_share = params.claimed_lead_step / params.study_budget_steps
    verdicts = [judge(linear_combination((-1.0,), (e,))) for f, e in points if math.isclose(f, lead_share)]
    before, after = crossing(points)
    fits = before is not None and after is not None and before < params.crossover_share <= after
    return [*verdicts, "supported" if fits else "contradicted"]


@register("early_lead_then_crossover", EarlyLeadThenCrossover, reads="curve_comparison.csv, pretraining.csv")
def check_early_lead_then_crossover(results: Results, params: EarlyLeadThenCrossover) -> Verdict:
    """CLM ahead early, MLM ahead later: the family-average MLM − CLM curve over the
    share of the pretraining budget; the direction is judged (:func:`c04_verdict`), the
    crossover located between checkpoints (:func:`crossing`).

    Steps are compared as shares of the budget: the embedded default trains a few
    hundred steps, the claim's steps are shares of the study's budget (5,000 and 15,000
    are 12% and 36% of 42,000). Runs that trained the claim's own budget (the study's, or a
    config of its scale) are also judged at its steps (:func:`at_the_claimed_steps`) and on its
    magnitude: a CLM lead whose CI lies above the claimed "up to" contradicts the claim as stated.
    """
    crossover = params.crossover_share
    curves = gap_curves(results)
    if not curves:
        return Verdict("not measured", "no size has learning-curve scores for both its CLM and its MLM run", CURVES_NEEDED)
    steps = results.tables["pretraining"].set_index("run").loc[curve_runs(results), "trained_steps"]
    at_claimed_budget = bool((steps == params.study_budget_steps).all())
    parts = [f"{family} {size}: {curve_text(points)} ({crossing_text(points)})" for (family, size), points in curves.items()]
    leads = [(f"{family} {size} at {share_text(f)}", e) for (family, size), points in curves.items() for f, e in points]
    label, lead = min(leads, key=lambda item: item[1].mean)
    clm_lead = linear_combination((-1.0,), (lead,))
    beyond = at_claimed_budget and judge(clm_lead, -math.inf, params.claimed_max_lead) == "contradicted"
    judged = f"its CI {'lies above' if beyond else 'does not lie above'} it" if at_claimed_budget else "not judged"
    largest = (
        f"the largest CLM lead is {interval_text(clm_lead.mean, clm_lead.low, clm_lead.high)} points ({label}; claimed up to "
        f"{params.claimed_max_lead:g}, {judged})"
        if lead.mean < 0
        else "CLM never leads on average"
    )
    late_start = [f"{family} {size}" for (family, size), points in curves.items() if points[0][0] >= crossover]
    early_end = [f"{family} {size}" for (family, size), points in curves.items() if points[-1][0] < crossover]
    if early_end:
        largest += (
            f"; the curves of {', '.join(early_end)} end before the claimed crossover (runs stopped before their schedule's decay),"
            " so there only CLM's early lead is judged: it can contradict the claim, not support it"
        )
    lead_share, budget = share_text(params.claimed_lead_step / params.study_budget_steps), budget_text(results, curve_runs(results))
    claimed = f"{params.claimed_lead_step:,} and {params.claimed_crossover_step:,}"
    direction = "CLM ahead at the earliest checkpoint, MLM ahead at the final model"
    steps_judged = (
        f"Steps are the claim's own: {budget}, its {params.study_budget_steps:,}-step budget, in which {claimed} are {lead_share} and "
        f"{share_text(crossover)}. CLM's lead at {params.claimed_lead_step:,} steps, MLM resolved ahead only past "
        f"{params.claimed_crossover_step:,} with CLM ahead before it, and the direction ({direction}) are judged"
        if at_claimed_budget
        else f"Steps are scaled: {budget}, and the claim's steps {claimed} are {lead_share} and {share_text(crossover)} of the study's "
        f"{params.study_budget_steps:,}-step budget. Only the direction is judged ({direction})"
    )
    evidence = (
        f"Family-average MLM − CLM in points ({percent(results.confidence)}, Welch) at each share of the pretraining budget: "
        f"{'; '.join(parts)}; {scale(results)}. {steps_judged}; {largest}."
    )
    needs = [f"a checkpoint before {share_text(crossover)} of the budget for {', '.join(late_start)}"] if late_start else []
    needs += [f"points past {share_text(crossover)} of the budget (the final model) for {', '.join(early_end)}"] if early_end else []
    needed = "; ".join(needs)
    if beyond:
        return Verdict("contradicted", evidence, needed)
    verdicts = [
        combine([c04_verdict(points, crossover), *(at_the_claimed_steps(points, params) if at_claimed_budget else [])])
        for points in curves.values()
    ]
    return Verdict(combine(verdicts), evidence, needed)


def threshold_bracket(checkpoints: Points, final: Estimate, threshold: float) -> tuple[float, float]:
    """The shares of the budget between which a run's score first reaches ``threshold``
    of its final score: :func:`crossing` of score − threshold × final
    (checkpoint and final model are fine-tuned independently, so Welch applies), from 0
    when no checkpoint is resolved below it, to 1 (the final model) when none is above."""
    before, after = crossing([(f, linear_combination((1.0, -threshold), (score, final))) for f, score in checkpoints])
    return before or 0.0, after or 1.0


def convergence_bracket(results: Results, family: str, run: str, threshold: float) -> tuple[float, float] | None:
    """:func:`threshold_bracket` of ``run``'s family average, None without a checkpoint."""
    rows = results.tables["learning_curves"]
    rows = rows[(rows["level"] == "family") & (rows["name"] == family) & (rows["run"] == run)].sort_values("step")
    checkpoints, final = rows[~rows["final"]], rows[rows["final"]]
    if checkpoints.empty or final.empty:
        return None
    return threshold_bracket(
        [(r["budget_fraction"], estimate_of(results, r)) for _, r in checkpoints.iterrows()], estimate_of(results, final.iloc[0]), threshold
    )


def faster_verdict(clm: tuple[float, float], mlm: tuple[float, float]) -> str:
    """CLM faster (supported) when its bracket ends where MLM's begins or earlier, MLM
    faster (contradicted) the other way round; overlapping brackets are inconclusive:
    the checkpoints cannot tell the two apart."""
    if clm[1] <= mlm[0]:
        return "supported"
    return "contradicted" if mlm[1] <= clm[0] else "inconclusive"


@register("converges_faster", ConvergesFaster, reads="learning_curves.csv, comparison.csv")
def check_converges_faster(results: Results, params: ConvergesFaster) -> Verdict:
    """CLM converges faster early: the share of the budget at which each run's family
    average first reaches ``threshold`` of its own final value, CLM vs MLM, per family and size.

    With a few checkpoints, that share is known only to within the interval between
    two checkpoints, so only the direction can be judged, and only when the two runs'
    intervals do not overlap; a claimed difference of tens of percent in steps is far
    below this resolution.
    """
    threshold = params.threshold
    pairs = results.tables["comparison"][results.tables["comparison"]["level"] == "family"]
    found = [
        (
            f"{pair['name']} {pair['size']}",
            convergence_bracket(results, pair["name"], pair["clm_run"], threshold),
            convergence_bracket(results, pair["name"], pair["mlm_run"], threshold),
        )
        for _, pair in pairs.iterrows()
    ]
    brackets = [(label, clm, mlm) for label, clm, mlm in found if clm is not None and mlm is not None]
    if not brackets:
        return Verdict("not measured", "no size has learning-curve scores for both its CLM and its MLM run", CURVES_NEEDED)
    curves = results.tables["learning_curves"]
    checkpoints = curves.loc[~curves["final"] & curves["run"].isin(curve_runs(results)), "budget_fraction"]
    listed = "; ".join(
        f"{label}: CLM {share_text(clm[0])}–{share_text(clm[1])}, MLM {share_text(mlm[0])}–{share_text(mlm[1])}"
        for label, clm, mlm in brackets
    )
    evidence = (
        f"Share of the pretraining budget by which the family average first reaches {100 * threshold:g}% of the run's own final "
        f"score (score − {threshold:g} × final with its {percent(results.confidence)} above 0), between the last checkpoint resolved "
        f"below and the first resolved above: {listed} {scale(results)}. Coarse: checkpoints at "
        f"{', '.join(share_text(f) for f in sorted(set(checkpoints)))} of the budget and the final model locate each run only between "
        f"two of them, so the claimed {params.claimed_faster_percent:g}% cannot be resolved and only the direction is judged; overlapping "
        f"intervals are inconclusive. Steps are scaled: {budget_text(results, curve_runs(results))}."
    )
    return Verdict(combine(faster_verdict(clm, mlm) for _, clm, mlm in brackets), evidence)
