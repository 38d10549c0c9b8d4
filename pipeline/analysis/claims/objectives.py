"""Claims about one objective of the zoo against another, judged on objectives.csv: a run
against the CLM or MLM reference of its size, a mixture against the best single
objective, and one masking replacement rule against another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.analysis.claims.objective_rows import compared_runs, has_rule, own_rows, placed, versus_reference
from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import (
    KIND_LABELS,
    Verdict,
    budget_text,
    direction_verdict,
    estimate_of,
    listing,
    mixed_text,
    negated,
    percent,
    scale,
)
from pipeline.analysis.contract import Results
from pipeline.analysis.runs import MASKING, tokens_from_initialisation
from pipeline.analysis.stats import difference
from pipeline.analysis.text import count_text


@dataclass(frozen=True)
class VersusReference:
    """From-scratch runs of objective kind ``objective`` against the ``reference`` run (clm or
    mlm) of their size, on every family or on ``families``; ``better`` says which side the
    claim says wins. Only the direction is judged; a ``claimed_relative_gain_percent`` is
    set beside the measured relative change, not judged (a claim in percent may mean
    points or a ratio)."""

    objective: str
    reference: Literal["clm", "mlm"]
    better: Literal["objective", "reference"] = "objective"
    families: tuple[str, ...] | None = None
    claimed_relative_gain_percent: float | None = None
    note: str | None = None  # a caveat the evidence ends with


@register("versus_reference", VersusReference, reads="objectives.csv, pretraining.csv")
def check_versus_reference(results: Results, params: VersusReference) -> Verdict:
    """The claimed winner − the other, per family and size, Welch CI.

    "Equal or better" cannot be shown by an interval without an equivalence margin, so
    only the claimed winner ahead (CI above 0) supports a claim, and the other side ahead
    contradicts it. Both runs read the same corpus blocks for the same steps; where one
    objective processes more positions (span corruption's sentinels and targets), the
    evidence gives both counts (each since initialisation: a decay branch's include the steps
    before its branch point).
    """
    rows = own_rows(results, params.objective)
    if params.families is not None:
        rows = rows[rows["family"].isin(params.families)]
    items = versus_reference(results, rows, params.reference)
    objective, reference = KIND_LABELS.get(params.objective, params.objective), KIND_LABELS[params.reference]
    if not items:
        where = f" with {'/'.join(params.families)} scores" if params.families else ""
        on = f", fine-tuned on {'/'.join(params.families)} tasks" if params.families else ""
        return Verdict(
            "not measured",
            f"no {objective} run{where} has a {reference} run at its size",
            f"a {objective} run and a {reference} run at the same budget{on}",
        )
    first, second = (objective, reference) if params.better == "objective" else (reference, objective)
    items = items if params.better == "objective" else negated(items)
    usable = rows[rows[f"minus_{params.reference}_mean"].notna()]
    parts = [budget_text(results, compared_runs(rows, params.reference))]
    tokens = tokens_from_initialisation(results.tables["pretraining"])
    pairs = usable.drop_duplicates("run")[["run", f"{params.reference}_run"]].itertuples(index=False)
    positions = [(run, other) for run, other in pairs if tokens[run] != tokens[other] and tokens.notna()[[run, other]].all()]
    if positions:
        parts.append(
            "positions processed "
            + ", ".join(
                f"{run} {count_text(tokens[run])} vs {other} {count_text(tokens[other])} ({tokens[run] / tokens[other]:.2f}x)"
                for run, other in positions
            )
        )
    if params.claimed_relative_gain_percent is not None:
        relative = []
        for _, row in usable.iterrows():
            base = row["test_mean"] - row[f"minus_{params.reference}_mean"]  # the reference run's score
            relative.append(
                f"{row['family']} {row['size']} {row['test_mean'] / base - 1:+.0%}"
                if base
                else f"{row['family']} {row['size']} ({reference} scored 0)"
            )
        parts.append(f"relative change {', '.join(relative)} (claimed +{params.claimed_relative_gain_percent:g}%)")
    parts += [params.note] if params.note else []
    evidence = (
        f"Family-average {first} − {second} ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; "
        f"{'; '.join(parts)}."
    )
    return Verdict(direction_verdict(items), evidence.removesuffix(".") + mixed_text(items) + ".")


@dataclass(frozen=True)
class BeatsEverySingleObjective:
    """The from-scratch runs of ``objective`` beat the best other single objective of their size and step budget."""

    objective: str


@register("beats_every_single_objective", BeatsEverySingleObjective, reads="objectives.csv")
def check_beats_every_single_objective(results: Results, params: BeatsEverySingleObjective) -> Verdict:
    """The objective − the best other single objective (highest family average) per family and
    size, Welch CI.

    Every competitor trained the same steps: the from-scratch runs of that budget and the CLM and
    MLM decay branches at it (the 480-step CLM, not the 1,440-step one, for a 480-step mixture).
    Picking the strongest competitor by its own test score favours the competitor, so a
    contradicted verdict is the optimistic one here.
    """
    frame = results.tables["objectives"]
    single = frame[(frame["level"] == "family") & frame["study"].isin(("objectives", "short_budget"))].drop_duplicates(["run", "family"])
    items, runs = [], []
    for _, run in own_rows(results, params.objective).iterrows():
        peers = single[
            (single["family"] == run["family"])
            & (single["size"] == run["size"])
            & (single["trained_steps"] == run["trained_steps"])
            & (single["objective_kind"] != params.objective)
        ]
        if peers.empty:
            continue
        best = peers.loc[peers["test_mean"].idxmax()]
        items.append(
            (
                f"{run['family']} {run['size']} vs {best['run_name']} (best of {len(peers)})",
                difference(estimate_of(results, run), estimate_of(results, best)),
            )
        )
        runs += [run["run"], *peers["run"]]
    name = KIND_LABELS.get(params.objective, params.objective)
    if not items:
        return Verdict(
            "not measured",
            f"no {name} run has another single objective at its size and step budget",
            f"a {name} objective and other objectives at the same budget",
        )
    evidence = (
        f"Family-average {name} − the best other single objective ({percent(results.confidence)}, Welch) {listing(items)} points "
        f"{scale(results)}; "
        f"the competitor is picked by its own test score, which favours it; {budget_text(results, runs)}."
    )
    return Verdict(direction_verdict(items), evidence.removesuffix(".") + mixed_text(items) + ".")


@dataclass(frozen=True)
class ReplacementRule:
    """MLM's ``rule`` ([MASK], random-token fractions of the selected positions) beats ``versus``."""

    rule: tuple[float, float]
    versus: tuple[float, float]
    rule_name: str  # how the evidence names each rule
    versus_name: str
    note: str | None = None  # a caveat the evidence gives before the budgets


@register("replacement_rule", ReplacementRule, reads="objectives.csv")
def check_replacement_rule(results: Results, params: ReplacementRule) -> Verdict:
    """Per family, size and masking ratio, the MLM run with ``rule`` − the one with
    ``versus``, Welch CI."""
    rows = placed(results, MASKING)
    rows = rows[rows["objective_kind"] == "mlm"]
    items, runs = [], []
    for (family, size, ratio), group in rows.groupby(["family", "size", "mask_ratio"], sort=False):
        with_rule, with_versus = group[has_rule(group, params.rule)], group[has_rule(group, params.versus)]
        if len(with_rule) == 1 and len(with_versus) == 1:
            gap = difference(estimate_of(results, with_rule.iloc[0]), estimate_of(results, with_versus.iloc[0]))
            items.append((f"{family} {size} at {100 * ratio:g}% masking", gap))
            runs += [with_rule.iloc[0]["run"], with_versus.iloc[0]["run"]]
    if not items:
        return Verdict(
            "not measured",
            f"no pair of MLM runs at one masking ratio with {params.rule_name} and with {params.versus_name}",
            f"an MLM ablation with {params.versus_name}, against {params.rule_name}",
        )
    evidence = (
        f"Family-average MLM {params.rule_name} − MLM {params.versus_name} ({percent(results.confidence)}, Welch) {listing(items)} points "
        f"{scale(results)}; "
        f"{params.note + '; ' if params.note else ''}{budget_text(results, runs)}."
    )
    return Verdict(direction_verdict(items), evidence.removesuffix(".") + mixed_text(items) + ".")
