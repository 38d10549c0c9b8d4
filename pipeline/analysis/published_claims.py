"""The write-ups' claims judged on the study's published tables (:mod:`pipeline.external.published_tables`),
which are always at hand: the study's own numbers at its own scale, 210M-1B.

Each published cell is a mean over 5 fine-tuning seeds with its 95% half-width, read as a
Student-t interval over those seeds (4 degrees of freedom); a difference of two cells is
Welch's, a mean of the four family averages the mean of four independent estimates. The
verdict rules are this harness's (:func:`pipeline.analysis.claims.verdicts.judge`): supported or
contradicted only where an interval excludes zero (or the claimed magnitude), and several
comparisons give a verdict only when they agree. A claim the tables cannot judge (they hold one
score per model, at its chosen LR, for the study's CLM and MLM alone) is "not measured" and
says what it would need.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd

from pipeline.analysis.claims.spec import Claim
from pipeline.analysis.claims.verdicts import (
    Verdict,
    combine,
    direction_verdict,
    fit_text,
    judge,
    judged_alone,
    listing,
    mixed_text,
    range_verdict,
    tally_text,
)
from pipeline.analysis.contract import PUBLISHED_CLAIM_COLUMNS
from pipeline.analysis.stats import Estimate, difference, linear_combination
from pipeline.analysis.study_cells import PublishedTables, headline
from pipeline.analysis.text import interval_text, number_text
from pipeline.external.published_tables import AVERAGE, FAMILY_ORDER, read_published_tables

SIZES = ("210M", "610M", "1B")
SOURCE = "in the study's published tables"
Item = tuple[str, Estimate]


def gaps(tables: PublishedTables, leader: str, families: Sequence[str], dataset: str | None = None) -> list[Item]:
    """``leader`` minus the other objective, MLM-40 against CLM, per size and family (or one dataset)."""
    other = "clm" if leader == "mlm" else "mlm"
    items = []
    for size in SIZES:
        for family in families:
            ahead, behind = (tables.cell(dataset or AVERAGE, family, **headline(size, o)) for o in (leader, other))
            items.append((f"{dataset or family} {size}", difference(ahead, behind)))
    return items


def objective_gap(tables: PublishedTables, params) -> Verdict:
    if params.stands_in_for or params.task_names_containing:
        return not_measured(f"the study has no {params.stands_in_for or params.task_names_containing} dataset")
    dataset = "SQuAD-v2" if params.unanswerable else None
    families = params.families or FAMILY_ORDER
    items = [item for family in families for item in gaps(tables, params.leader, [family], dataset if family == "QA" else None)]
    if params.claimed_scores:
        claimed = params.claimed_scores[params.leader] - sum(v for k, v in params.claimed_scores.items() if k != params.leader)
        low = high = claimed
    else:
        low, high = params.claimed_gap[0], params.claimed_gap[-1]
    evidence = f"{params.leader.upper()} minus the other, points {SOURCE}: {listing(items)}; {fit_text(items, low, high, ' points')}"
    evidence += mixed_text(items, low, high)
    if params.claimed_scores:
        evidence += "; " + claimed_scores_text(tables, params.claimed_scores, dataset or AVERAGE, families[0])
    return Verdict(range_verdict(items, low, high), evidence)


def claimed_scores_text(tables: PublishedTables, claimed: dict[str, float], dataset: str, family: str) -> str:
    """Whether the claim's absolute scores are the study's at any size."""
    found = []
    for size in SIZES:
        scores = {o: tables.cell(dataset, family, **headline(size, o)) for o in claimed}
        if all(e.low <= claimed[o] <= e.high for o, e in scores.items()):
            found.append(size)
    stated = " and ".join(f"{o.upper()} {v:g}" for o, v in claimed.items())
    return f"the claimed {stated} are the study's {dataset} scores at {', '.join(found) if found else 'none of its sizes'}"


def step_gaps(tables: PublishedTables) -> list[tuple[int, Estimate]]:
    """(step, CLM minus MLM-40 over the four family averages) of Tables 6-9, 610M."""
    frame = tables.frame[tables.frame["experiment"] == "data_efficiency"]
    model = {"experiment": "data_efficiency", "size": "610M"}
    return [
        (step, difference(tables.overall(**model, objective="CLM", steps=step), tables.overall(**model, objective="MLM", steps=step)))
        for step in sorted(set(frame["steps"]))
    ]


def early_lead_then_crossover(tables: PublishedTables, params) -> Verdict:
    points = step_gaps(tables)
    lead = dict(points)[params.claimed_lead_step] if params.claimed_lead_step in dict(points) else None
    ahead = [step for step, e in points if e.low > 0]
    behind = [step for step, e in points if e.high < 0]
    crossover_fits = bool(ahead and behind) and max(ahead) < params.claimed_crossover_step <= min(behind)
    largest = max(points, key=lambda item: item[1].mean)
    verdicts = [judge(lead)] if lead else []
    verdicts.append("supported" if crossover_fits else "contradicted")
    # "up to": a largest lead whose interval lies above the claimed one contradicts the claim as stated
    magnitude = judge(largest[1], -math.inf, params.claimed_max_lead)
    evidence = (
        f"610M, CLM minus MLM-40 over the four family averages {SOURCE}: "
        + ", ".join(f"{step:,} steps {listing([('', e)]).strip()}" for step, e in points)
        + f"; CLM ahead through {max(ahead, default=0):,}, behind from {min(behind, default=0):,} steps (claimed crossover "
        f"{params.claimed_crossover_step:,}: {'fits' if crossover_fits else 'does not fit'}); its largest lead, at "
        f"{largest[0]:,} steps, is {'above' if magnitude == 'contradicted' else 'not above'} the claimed 'up to "
        f"{params.claimed_max_lead:g}'"
    )
    return Verdict("contradicted" if magnitude == "contradicted" else combine(verdicts), evidence)


def split_gains(tables: PublishedTables) -> list[Item]:
    """Every CLM→MLM split of Tables 10-13 at every budget, minus MLM alone at that budget, over
    the four family averages: each published split judged, none picked after seeing the scores."""
    frame = tables.frame[(tables.frame["experiment"] == "two_stage")]
    items = []
    for budget in sorted(set(frame["steps"])):
        alone = tables.overall(experiment="two_stage", steps=budget, clm_steps=0)
        splits = frame[(frame["steps"] == budget) & (frame["objective"] == "CLM+MLM")]
        for steps in sorted(set(splits["clm_steps"])):
            split = tables.overall(experiment="two_stage", steps=budget, clm_steps=steps)
            items.append((f"{steps // 1000}k+{(budget - steps) // 1000}k of {budget // 1000}k", difference(split, alone)))
    return items


def two_stage_gain(tables: PublishedTables, params) -> Verdict:
    items = split_gains(tables)
    claimed = params.claimed_gain
    evidence = (
        f"610M, each CLM→MLM split minus MLM-40 alone at its budget, points over the four family averages {SOURCE}: {listing(items)}; "
    )
    return Verdict(
        range_verdict(items, claimed, claimed),
        evidence + fit_text(items, claimed, claimed, " points") + mixed_text(items, claimed, claimed),
    )


def continued_from_base(tables: PublishedTables, params) -> Verdict:
    frame = tables.frame[(tables.frame["experiment"] == "cpt") & (tables.frame["cpt_steps"] > 0)]
    items = [
        (
            f"{steps // 1000}k CPT steps",
            difference(*(tables.overall(experiment="cpt", objective=o, cpt_steps=steps) for o in ("CLM", "MLM"))),
        )
        for steps in sorted(set(frame["cpt_steps"]))
    ]
    evidence = f"610M, MLM continued on the CLM base minus on the MLM base, points over the four family averages {SOURCE}: {listing(items)}"
    if params.claimed_gain is None:
        return Verdict(direction_verdict(items), evidence + mixed_text(items))
    # A claimed gain belongs to its CPT length: judged at the published length nearest it.
    steps = sorted(set(frame["cpt_steps"]))
    nearest = min(range(len(steps)), key=lambda index: abs(steps[index] - params.claimed_cpt_steps))
    judged = [items[nearest]]
    fit = fit_text(judged, params.claimed_gain, params.claimed_gain, " points")
    evidence += f"; at {judged[0][0]} (the nearest to the claimed {params.claimed_cpt_steps:,}), {fit}"
    evidence += mixed_text(judged, params.claimed_gain, params.claimed_gain)
    return Verdict(range_verdict(judged, params.claimed_gain, params.claimed_gain), evidence)


def gap_narrows_with_size(tables: PublishedTables, params) -> Verdict:
    """The MLM − CLM gap at 210M minus at 1B (positive where it narrows): a claim about the gap as a
    whole, so judged on its average over the four families; each family's said beside it."""
    items, ends = [], []
    for family in FAMILY_ORDER:
        small, large = (gap for label, gap in gaps(tables, "mlm", [family]) if label.endswith(("210M", "1B")))
        small_gap, large_gap = (number_text(gap.mean, 2, signed=True) for gap in (small, large))
        items.append((f"{family} (210M {small_gap}, 1B {large_gap})", linear_combination((1.0, -1.0), (small, large))))
        ends += [small, large]
    quarter = 1.0 / len(FAMILY_ORDER)
    average = linear_combination([quarter, -quarter] * len(FAMILY_ORDER), ends)
    per_family = tally_text([(label, judged_alone(estimate)) for label, estimate in items])
    evidence = (
        f"MLM − CLM gap at 210M minus at 1B, points {SOURCE} (positive: it narrows): over the four families' average"
        f" {interval_text(average.mean, average.low, average.high, signed=True)}; per family {listing(items)}: {per_family}"
    )
    return Verdict(direction_verdict([("average", average)]), evidence)


def mlm_families(tables: PublishedTables, params) -> Verdict:
    items = gaps(tables, "mlm", params.families)
    evidence = f"MLM-40 minus CLM, points {SOURCE}: {listing(items)}; generation is not in the tables, so only the MLM half is judged"
    return Verdict(direction_verdict(items), evidence + mixed_text(items))


def masking_preferences(tables: PublishedTables, params) -> Verdict:
    """Each size and family's best masking ratio, and whether it beats 40% beyond the intervals."""
    items, best = [], {}
    for size in SIZES:
        for family in FAMILY_ORDER:
            scores = {ratio: tables.family(family, **headline(size, "mlm", ratio)) for ratio in (20, 30, 40, 50)}
            best[size, family] = max(scores, key=lambda ratio: scores[ratio].mean)
            if best[size, family] != 40:
                items.append((f"{family} {size} {best[size, family]}% vs 40%", difference(scores[best[size, family]], scores[40])))
    no_universal = len(set(best.values())) > 1 and any(judge(e) == "supported" for _, e in items)
    retrieval_highest = all(best[size, "IR"] == max(best[size, family] for family in FAMILY_ORDER) for size in SIZES)
    larger_higher = sum(best["1B", family] for family in FAMILY_ORDER) > sum(best["210M", family] for family in FAMILY_ORDER)
    verdict = "supported" if no_universal and retrieval_highest and larger_higher else "inconclusive"
    listed = ", ".join(f"{family} {size} {ratio}%" for (size, family), ratio in best.items())
    return Verdict(
        verdict,
        f"best masking ratio per family and size {SOURCE}: {listed}; best minus 40%: {listing(items)}; a best other than 40% resolved "
        f"somewhere: {no_universal}; IR's the highest at every size: {retrieval_highest}; higher at 1B than at 210M on the whole: "
        f"{larger_higher}",
    )


def not_measured(why: str) -> Verdict:
    return Verdict(
        "not measured",
        "the published tables hold the study's CLM and MLM models, one score each at its chosen LR",
        why,
    )


JUDGES: dict[str, Callable[[PublishedTables, object], Verdict]] = {
    "objective_gap": objective_gap,
    "early_lead_then_crossover": early_lead_then_crossover,
    "two_stage_gain": two_stage_gain,
    "continued_from_base": continued_from_base,
    "gap_narrows_with_size": gap_narrows_with_size,
    "mlm_families_causal_generation": mlm_families,
    "masking_ratio_preferences": masking_preferences,
}
NEEDS = {  # what the tables lack for the kinds they cannot judge
    "converges_faster": "scores relative to each model's final one at steps between the published checkpoints",
    "tuning_iterations": "the score at every LR of the grid",
    "lr_sensitivity": "the score at every LR of the grid",
    "loss_fraction": "pretraining batches",
}


def published_verdicts(claims: Sequence[Claim], tables: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per claim (id, verdict, evidence, needed), judged on the published tables."""
    view = PublishedTables(read_published_tables() if tables is None else tables)
    rows = []
    for claim in claims:
        judge_of = JUDGES.get(claim.kind)
        verdict = (
            judge_of(view, claim.params) if judge_of else not_measured(NEEDS.get(claim.kind, "runs of objectives other than CLM and MLM"))
        )
        rows.append({"id": claim.id, "verdict": verdict.verdict, "evidence": verdict.evidence, "needed": verdict.needed})
    return pd.DataFrame(rows, columns=PUBLISHED_CLAIM_COLUMNS)
