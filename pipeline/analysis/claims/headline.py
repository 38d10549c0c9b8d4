"""Claims about the headline MLM − CLM gap, judged on comparison.csv: its size on some
families or tasks, how it changes with model size, and which families each objective wins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import (
    KIND_LABELS,
    Verdict,
    combine,
    fit_text,
    judge,
    judged_alone,
    labelled,
    listing,
    mixed_text,
    percent,
    range_verdict,
    scale,
    tally_text,
)
from pipeline.analysis.contract import FLOOR_MARGIN, Results
from pipeline.analysis.stats import Estimate, linear_combination
from pipeline.analysis.text import interval_text, number_text

Objective = Literal["mlm", "clm"]


def floor_text(rows: pd.DataFrame) -> str:
    return ", ".join(f"{r['name']} {r['size']}" for _, r in rows.iterrows())


def family_comparisons(results: Results, families: tuple[str, ...]) -> pd.DataFrame:
    frame = results.tables["comparison"]
    return frame[(frame["level"] == "family") & frame["family"].isin(families)]


def gap_estimate(results: Results, leader: Objective) -> Callable[[pd.Series], Estimate]:
    """Per comparison row: ``leader`` − the other objective, Welch CI."""
    if leader == "mlm":
        return lambda row: Estimate.from_columns(row, results.confidence, "difference_")
    return lambda row: linear_combination((-1.0,), (Estimate.from_columns(row, results.confidence, "difference_"),))


@dataclass(frozen=True)
class ObjectiveGap:
    """``leader`` ahead of the other objective by a claimed gap, on some rows of comparison.csv.

    The rows are the family averages of ``families`` (level family), or the tasks of
    ``families`` (level task), or the tasks standing in for the claim's dataset: those
    whose ``proxy_for`` is ``stands_in_for``, else those whose name contains
    ``task_names_containing``. The claimed gap is ``claimed_gap`` (one value, or a
    [low, high] range) or the difference of ``claimed_scores``.
    """

    leader: Objective
    level: Literal["family", "task"] = "family"
    families: tuple[str, ...] | None = None
    stands_in_for: str | None = None
    task_names_containing: str | None = None
    claimed_gap: tuple[float, ...] | None = None
    claimed_scores: dict[str, float] | None = None  # objective -> score; the gap is leader − other
    note: str | None = None  # a caveat the evidence ends with
    needs: str | None = None  # what measuring it takes, when no run has the rows (default: MLM and CLM runs on them)
    # Only tasks with unanswerable questions (or an unknown number of them, as in the study's
    # released results): a claim about SQuAD 2.0 is about abstaining too, which a QA task whose
    # every question has an answer (news_qa, SQuAD v1.1) does not measure.
    unanswerable: bool = False

    def validate(self) -> None:
        if (self.claimed_gap is None) == (self.claimed_scores is None):
            raise ValueError("give claimed_gap or claimed_scores, one of them")
        if self.claimed_gap is not None and len(self.claimed_gap) not in (1, 2):
            raise ValueError(f"claimed_gap {list(self.claimed_gap)} must be one value or a [low, high] range")
        if self.claimed_scores is not None and set(self.claimed_scores) != {"mlm", "clm"}:
            raise ValueError(f"claimed_scores must give mlm and clm, got {sorted(self.claimed_scores)}")
        if (self.families is None) == (self.stands_in_for is None):
            raise ValueError("give families or stands_in_for, one of them")
        if self.stands_in_for is not None and self.level != "task":
            raise ValueError("stands_in_for picks tasks: it needs level 'task'")
        if self.unanswerable and self.level != "task":
            raise ValueError("unanswerable picks tasks: it needs level 'task'")

    @property
    def other(self) -> Objective:
        return "clm" if self.leader == "mlm" else "mlm"

    @property
    def claimed_range(self) -> tuple[float, float]:
        if self.claimed_scores is not None:
            gap = self.claimed_scores[self.leader] - self.claimed_scores[self.other]
            return gap, gap
        return self.claimed_gap[0], self.claimed_gap[-1]


def stand_in_tasks(results: Results, params: ObjectiveGap) -> list[str]:
    """Tasks standing in for the claim's dataset: a declared proxy, else tasks named like it."""
    tasks = results.tables["tasks"]
    wanted = str(params.stands_in_for).lower().replace(" ", "")
    proxies = tasks.loc[tasks["proxy_for"].fillna("").str.lower().str.replace(" ", "") == wanted, "task"]
    if len(proxies) or params.task_names_containing is None:
        return list(proxies)
    return list(tasks.loc[tasks["task"].str.contains(params.task_names_containing, case=False), "task"])


@register("objective_gap", ObjectiveGap, reads="comparison.csv")
def check_objective_gap(results: Results, params: ObjectiveGap) -> Verdict:
    """The gap per size (and per family or task), leaving out rows where neither run beat
    the trivial baseline by ``FLOOR_MARGIN``: there the budget taught neither model the
    task, and the gap says nothing about the objectives."""
    frame = results.tables["comparison"]
    rows = frame[frame["level"] == params.level]
    if params.stands_in_for is not None:
        tasks = stand_in_tasks(results, params)
        rows, subject = rows[rows["name"].isin(tasks)], f"{params.stands_in_for} is absent, so {', '.join(tasks) or 'no task'} stands in:"
    else:
        rows, subject = rows[rows["family"].isin(params.families)], "Family-average" if params.level == "family" else "Per task,"
    wanted = " or ".join(params.families or (params.stands_in_for,))
    if params.unanswerable:
        tasks = results.tables["tasks"]
        rows = rows[~rows["name"].isin(tasks.loc[tasks["num_unanswerable_test"] == 0, "task"])]
        wanted += " (with unanswerable questions)"
    if rows.empty:
        needed = params.needs or f"MLM and CLM runs fine-tuned on {wanted} tasks"
        return Verdict("not measured", f"no {wanted} {params.level} has both an MLM and a CLM run", needed)
    floored = rows[rows["at_floor"].astype(bool)]
    if len(floored) == len(rows):
        return Verdict(
            "inconclusive",
            f"Neither the MLM nor the CLM run beat the trivial baseline by {FLOOR_MARGIN:g} point on {floor_text(rows)} {scale(results)}: "
            "the fine-tuning budget taught neither the task, so the gap says nothing about the objectives.",
            f"a fine-tuning budget at which the models learn the {wanted} tasks",
        )
    rows = rows.drop(floored.index)
    leader, other = KIND_LABELS[params.leader], KIND_LABELS[params.other]
    items = labelled(rows, gap_estimate(results, params.leader))
    low, high = params.claimed_range
    parts = [fit_text(items, low, high, " points")]
    parts += [
        f"no {family} task was run"
        for family in params.families or ()
        if not (rows["family"] == family).any() and family not in set(floored["family"])
    ]
    if len(floored):
        parts.append(f"left out, as neither run beat the trivial baseline by {FLOOR_MARGIN:g} point: {floor_text(floored)}")
    if params.claimed_scores is not None and params.stands_in_for is None:
        parts.append(claimed_scores_text(results, rows, params.claimed_scores))
    parts += [params.note] if params.note else []
    evidence = (
        f"{subject} {leader} − {other} ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; {'; '.join(parts)}"
        f"{mixed_text(items, low, high)}."
    )
    return Verdict(range_verdict(items, low, high), evidence)


def claimed_scores_text(results: Results, rows: pd.DataFrame, claimed: dict[str, float]) -> str:
    """On which rows the claimed scores themselves lie within both runs' CIs (a claim's absolute
    scores are a fact about its dataset and scale; a stand-in task's say nothing of them)."""
    found = [
        f"{row['name']} {row['size']}"
        for _, row in rows.iterrows()
        if all(
            (e := Estimate.from_columns(row, results.confidence, f"{objective}_")).low <= score <= e.high
            for objective, score in claimed.items()
        )
    ]
    stated = " and ".join(f"{KIND_LABELS[objective]} {score:g}" for objective, score in claimed.items())
    return f"the claimed {stated} lie within both runs' CIs on {', '.join(found) or 'none of the rows'}"


@dataclass(frozen=True)
class GapNarrowsWithSize:
    """The MLM − CLM gap narrows as models grow (no parameters: per family, smallest vs largest size)."""


@register("gap_narrows_with_size", GapNarrowsWithSize, reads="comparison.csv")
def check_gap_narrows_with_size(results: Results, params: GapNarrowsWithSize) -> Verdict:
    """Smallest vs largest size. A gap is signed by the smaller model's winner, g = s * (MLM − CLM);
    it narrows when s * (d_large − d_small) < 0 with a Welch CI below zero. The claim is about the
    gap as a whole, so it is judged on the gap averaged over the families measured at both sizes;
    each family's is said beside it, with how many narrow, widen and stay undecided."""
    rows = results.tables["comparison"][results.tables["comparison"]["level"] == "family"]
    if rows["size"].nunique() < 2:
        return Verdict("not measured", "fewer than two model sizes have both an MLM and a CLM run", "MLM and CLM runs at two or more sizes")
    verdicts, parts, ends = [], [], []
    for family, group in rows.groupby("family", sort=True):
        ordered = group.sort_values("num_parameters")
        if len(ordered) < 2:
            continue
        small, large = (Estimate.from_columns(ordered.iloc[i], results.confidence, "difference_") for i in (0, -1))
        ends.append((small, large))
        label = f"{family} {ordered.iloc[0]['size']} {number_text(small.mean, signed=True)} → {ordered.iloc[-1]['size']} "
        narrowing = narrowed(small, large)
        verdicts.append((family, judged_alone(narrowing)))
        interval = interval_text(narrowing.mean, narrowing.low, narrowing.high, signed=True)
        parts.append(f"{label}{number_text(large.mean, signed=True)} (narrowing {interval})")
    if not ends:
        return Verdict("not measured", "no family has MLM and CLM runs at two sizes", "MLM and CLM runs at two or more sizes")
    share = 1.0 / len(ends)
    small, large = (linear_combination([share] * len(ends), [pair[end] for pair in ends]) for end in (0, 1))
    average = narrowed(small, large)
    evidence = (
        f"MLM − CLM gap from the smallest to the largest size, points ({percent(results.confidence)}, Welch), averaged over the"
        f" {len(ends)} families measured at both: {number_text(small.mean, signed=True)} → {number_text(large.mean, signed=True)}"
        f" (narrowing {interval_text(average.mean, average.low, average.high, signed=True)}); per family {'; '.join(parts)}:"
        f" {tally_text(verdicts)} {scale(results)}; the study found the SC gap widening with size."
    )
    return Verdict(judge(average), evidence)


def narrowed(small: Estimate, large: Estimate) -> Estimate:
    """How much a gap shrank from ``small`` to ``large``, signed by the smaller model's winner (> 0: it shrank)."""
    sign = 1.0 if small.mean >= 0 else -1.0
    return linear_combination((sign, -sign), (small, large))


@dataclass(frozen=True)
class MlmFamiliesCausalGeneration:
    """MLM ahead on ``families``, CLM the better generator: only the first half is measurable."""

    families: tuple[str, ...]


@register("mlm_families_causal_generation", MlmFamiliesCausalGeneration, reads="comparison.csv, pretraining.csv")
def check_mlm_families_causal_generation(results: Results, params: MlmFamiliesCausalGeneration) -> Verdict:
    """MLM better on the families, CLM generates better. Only the families half can be
    measured; it can contradict the claim (or, holding on some families and failing on others,
    leave it mixed) but never support all of it, because generation quality has no MLM
    counterpart here."""
    rows = family_comparisons(results, params.families)
    wanted = "/".join(params.families)
    if rows.empty:
        return Verdict(
            "not measured",
            f"no {', '.join(params.families)} family has both an MLM and a CLM run",
            f"MLM and CLM runs on {wanted} tasks, and a generation benchmark",
        )
    items = labelled(rows, gap_estimate(results, "mlm"))
    measured = combine(judge(e) for _, e in items)
    perplexity = results.tables["pretraining"][results.tables["pretraining"]["heldout_metric_name"] == "next_token_perplexity"].dropna(
        subset=["heldout_metric_value"]
    )
    causal = ", ".join(f"{r.run} {r.heldout_metric_value:.1f}" for r in perplexity.itertuples()) or "none"
    evidence = (
        f"Family-average MLM − CLM ({percent(results.confidence)}) {listing(items)} points {scale(results)} (the measured half is "
        f"{measured}{mixed_text(items)}); "
        f"held-out next-token perplexity exists only for causal and prefix-attention models ({causal}), so 'CLM generates better' is not "
        "measured."
    )
    verdict = measured if measured in ("contradicted", "mixed") else "inconclusive"
    return Verdict(verdict, evidence, "a generation-quality evaluation of both objectives")
