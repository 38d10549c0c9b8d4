"""The masking-ratio claim, judged on the sweep of MLM runs at several ratios in objectives.csv."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.analysis.claims.objective_rows import has_rule, placed
from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import Verdict, combine, estimate_of, judge, percent, scale
from pipeline.analysis.contract import Results
from pipeline.analysis.runs import MASKING
from pipeline.analysis.stats import Estimate, difference
from pipeline.analysis.text import interval_text


@dataclass(frozen=True)
class MaskingRatioPreferences:
    """No masking ratio is best everywhere; larger models and retrieval prefer higher ones
    (no parameters: every part is tested where the sweep allows)."""


# (family, size) -> (masking ratio, family average) points, by ratio.
Sweeps = Mapping[tuple[str, str], Sequence[tuple[float, Estimate]]]


def ratio_sweeps(results: Results) -> Sweeps:
    """Per (family, size): (masking ratio, family average) of the from-scratch MLM runs
    that share the reference MLM run's replacement rule, by ratio; only cells with two
    or more ratios (a rule change would confound the ratio)."""
    rows = placed(results, MASKING)
    rows = rows[rows["objective_kind"] == "mlm"]
    sweeps = {}
    for (family, size), group in rows.groupby(["family", "size"], sort=False):
        reference = group[group["repeated"]]
        if len(reference) != 1:
            continue
        rule = (reference.iloc[0]["mask_token_fraction"], reference.iloc[0]["random_token_fraction"])
        same_rule = group[has_rule(group, rule)].drop_duplicates("mask_ratio")
        if len(same_rule) >= 2:
            sweeps[(family, size)] = sorted(
                ((r["mask_ratio"], estimate_of(results, r)) for _, r in same_rule.iterrows()), key=lambda point: point[0]
            )
    return sweeps


def preferred_ratio(points: Sequence[tuple[float, Estimate]]) -> tuple[float, Estimate]:
    """The ratio with the highest score, and its lead over the runner-up (Welch)."""
    ranked = sorted(points, key=lambda point: point[1].mean, reverse=True)
    return ranked[0][0], difference(ranked[0][1], ranked[1][1])


def high_minus_low(points: Sequence[tuple[float, Estimate]]) -> Estimate:
    """Score at the highest ratio − at the lowest: > 0 when higher ratios are preferred."""
    return difference(points[-1][1], points[0][1])


def universal_best_verdict(sweeps: Sweeps) -> str | None:
    """The claim "no universally best ratio": supported when two settings have different resolved
    best ratios, contradicted when every setting resolves the same best; None with a
    single setting, where the claim cannot be tested."""
    if len(sweeps) < 2:
        return None
    preferred = [preferred_ratio(points) for points in sweeps.values()]
    resolved = {ratio for ratio, lead in preferred if judge(lead) == "supported"}
    if len(resolved) >= 2:
        return "supported"
    all_resolved = all(judge(lead) == "supported" for _, lead in preferred)
    return "contradicted" if all_resolved else "inconclusive"


def larger_models_verdict(sweeps: Sweeps, sizes: Sequence[str]) -> str | None:
    """The claim "larger models prefer higher ratios": per family swept at two or more sizes, the
    high-minus-low-ratio contrast at the largest size − at the smallest (Welch)."""
    verdicts = []
    for family in dict.fromkeys(f for f, _ in sweeps):
        swept = [size for size in sizes if (family, size) in sweeps]
        if len(swept) >= 2:
            verdicts.append(judge(difference(high_minus_low(sweeps[(family, swept[-1])]), high_minus_low(sweeps[(family, swept[0])]))))
    return combine(verdicts) if verdicts else None


def retrieval_verdict(sweeps: Sweeps) -> str | None:
    """The claim "retrieval prefers higher ratios": per size, the IR family's high-minus-low-ratio
    contrast − each other family's (Welch)."""
    verdicts = [
        judge(difference(high_minus_low(points), high_minus_low(sweeps[(family, size)])))
        for (ir, size), points in sweeps.items()
        if ir == "IR"
        for family, other_size in sweeps
        if other_size == size and family != "IR"
    ]
    return combine(verdicts) if verdicts else None


@register("masking_ratio_preferences", MaskingRatioPreferences, reads="objectives.csv, pretraining.csv")
def check_masking_ratio_preferences(results: Results, params: MaskingRatioPreferences) -> Verdict:
    """No universally best masking ratio; larger models and retrieval prefer higher ones.

    Three parts, each testable only with enough settings: two (family, size) sweeps for
    the first, sweeps at two sizes for the second, an IR family for the third. A
    contradicted part contradicts the claim; all three must hold to support it; with no
    testable part the sweep is reported and the claim is not measured.
    """
    sweeps = ratio_sweeps(results)
    if not sweeps:
        return Verdict(
            "not measured",
            "no two MLM runs at different masking ratios with the same replacement rule at one size",
            "MLM runs at several masking ratios (20-50%) per size, and IR tasks",
        )
    sizes = list(results.tables["pretraining"].groupby("size")["num_parameters"].mean().sort_values().index)
    parts = {
        "no universally best ratio": universal_best_verdict(sweeps),
        "larger models prefer higher ratios": larger_models_verdict(sweeps, sizes),
        "retrieval prefers higher ratios": retrieval_verdict(sweeps),
    }
    needs = {
        "no universally best ratio": "the sweep in two or more (family, size) settings",
        "larger models prefer higher ratios": "the sweep at two or more sizes",
        "retrieval prefers higher ratios": "the sweep on an IR family",
    }
    cells = []
    for (family, size), points in sweeps.items():
        ratio, lead = preferred_ratio(points)
        scores = ", ".join(f"{100 * r:g}% {interval_text(e.mean, e.low, e.high)}" for r, e in points)
        cells.append(
            f"{family} {size}: {scores}; best {100 * ratio:g}%, lead over the runner-up "
            f"{interval_text(lead.mean, lead.low, lead.high, signed=True)}"
        )
    found = "; ".join(f"{part}: {verdict or 'not testable here'}" for part, verdict in parts.items())
    evidence = (
        f"Family average against masking ratio, same replacement rule ({percent(results.confidence)}): {' | '.join(cells)} "
        f"{scale(results)}. Parts: {found}."
    )
    measured = [verdict for verdict in parts.values() if verdict]
    needed = "; ".join(needs[part] for part, verdict in parts.items() if verdict is None)
    if not measured:
        return Verdict("not measured", evidence, needed)
    verdict = "contradicted" if "contradicted" in measured else "supported" if measured == ["supported"] * len(parts) else "inconclusive"
    return Verdict(verdict, evidence, needed)
