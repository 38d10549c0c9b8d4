"""One checker per claim of the claims file, each giving a verdict the CIs can carry.

Verdicts: ``supported`` and ``contradicted`` need a confidence interval that excludes
zero in the claimed (or the opposite) direction; a claimed magnitude must lie inside
the CI to be supported, and a CI that excludes it contradicts the claim as stated.
Everything else is ``inconclusive``. A claim this harness has no data for is ``not
measured``, with what would be needed. Several comparisons (sizes, families) give a
verdict only when they agree; mixed results are inconclusive.

Every evidence sentence states the scale it was measured at: the study's claims are
about 210M-1B-parameter models, the embedded default trains models of a few million.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipeline import strict
from pipeline.files import read_yaml
from pipeline.report.stats import Estimate, difference, linear_combination, mean_interval
from pipeline.report.tables import count_text, interval_text

if TYPE_CHECKING:
    from pipeline.report.aggregate import Results

VERDICTS = ("supported", "contradicted", "inconclusive", "not measured")
CLAIM_COLUMNS = ["id", "source", "claim", "measure", "status", "verdict", "evidence", "needed"]


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    claim: str
    measure: str
    status: str


@dataclass(frozen=True)
class Verdict:
    verdict: str
    evidence: str
    needed: str = ""


Checker = Callable[["Results"], Verdict]
CHECKERS: dict[str, Checker] = {}


def checker(claim_id: str) -> Callable[[Checker], Checker]:
    """Register the function that checks claim ``claim_id``."""

    def register(function: Checker) -> Checker:
        CHECKERS[claim_id] = function
        return function

    return register


# Claims whose measure needs runs or evaluations the harness does not produce; the
# value says what would be needed.
NOT_MEASURED = {
    "p01": "MLM runs at several masking ratios (20-50%) per size, and IR tasks",
    "c04": "downstream scores of intermediate pretraining checkpoints (fine-tuning each checkpoint step)",
    "c05": "downstream scores of intermediate pretraining checkpoints and a convergence criterion",
    "c08": "two-stage CLM-then-MLM runs at equal total steps",
    "c09": "continued-pretraining (MLM CPT) runs from decayed CLM and MLM bases",
    "p02": "continued-pretraining (MLM CPT) runs from decayed CLM and MLM bases",
    "c10": "a MEAP objective and a needle-in-a-haystack evaluation",
    "c13": "an MLM+NSP objective run at the same budget as MLM",
    "c14": "a span-corruption objective and downstream score against pretraining tokens",
    "c15": "a UL2 mixture-of-denoisers objective at the same budget",
    "c16": "an MLM ablation replacing 100% of selected tokens by the mask token, against 80/10/10",
    "c17": "bf16-autocast vs fp32 throughput and peak-memory runs on a GPU",
}


def read_claims(path: str | Path) -> list[Claim]:
    """The claims YAML: a list of {id, source, claim, measure, status}."""
    return list(strict.parse(list[Claim], read_yaml(path, "claims file"), str(path)))


def check_claims(claims: Sequence[Claim], results: Results) -> pd.DataFrame:
    """One row per claim: the claim, its verdict, the evidence and what is missing."""
    rows = []
    for claim in claims:
        if claim.id in CHECKERS:
            verdict = CHECKERS[claim.id](results)
        elif claim.id in NOT_MEASURED:
            verdict = Verdict("not measured", "this harness does not produce the runs it needs", NOT_MEASURED[claim.id])
        else:
            verdict = Verdict("not measured", "no checker for this claim id", "a checker in pipeline/report/claims.py")
        rows.append({**vars(claim), **vars(verdict)})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


# ------------------------------------------------------------------ shared logic


def judge(estimate: Estimate, claimed_low: float = 0.0, claimed_high: float = math.inf) -> str:
    """Verdict for a positive claim about ``estimate`` (a direction, or a range).

    Contradicted when the CI lies entirely outside [claimed_low, claimed_high] (for a
    direction-only claim: entirely below 0); supported when the CI excludes 0 on the
    positive side and meets the claimed range; inconclusive otherwise.
    """
    if math.isnan(estimate.low):
        return "inconclusive"
    if estimate.high < claimed_low or estimate.low > claimed_high:
        return "contradicted"
    return "supported" if estimate.low > 0 else "inconclusive"


def combine(verdicts: Iterable[str]) -> str:
    """One verdict for several comparisons: theirs when they all agree."""
    distinct = set(verdicts)
    return distinct.pop() if len(distinct) == 1 else "inconclusive"


def scale(results: Results) -> str:
    """Where the numbers come from, for every evidence sentence."""
    sizes = results.pretraining.groupby("size", sort=False)["num_parameters"].mean()
    listed = ", ".join(f"{size} {count_text(count)}" for size, count in sizes.items())
    return f"at this run's scale ({listed} parameters; the study: 210M-1B)"


def percent(confidence: float) -> str:
    return f"{100 * confidence:g}% CI"


def family_comparisons(results: Results, families: Sequence[str]) -> pd.DataFrame:
    frame = results.comparison
    return frame[(frame["level"] == "family") & frame["family"].isin(families)]


def labelled(rows: pd.DataFrame, estimate: Callable[[pd.Series], Estimate]) -> list[tuple[str, Estimate]]:
    """(name and size, estimate) for each comparison row."""
    return [(f"{row['name']} {row['size']}", estimate(row)) for _, row in rows.iterrows()]


def listing(items: Sequence[tuple[str, Estimate]]) -> str:
    return ", ".join(f"{label} {interval_text(e.mean, e.low, e.high, signed=True)}" for label, e in items)


def mlm_minus_clm(results: Results) -> Callable[[pd.Series], Estimate]:
    return lambda row: Estimate.from_columns(row, results.confidence, "difference_")


def clm_minus_mlm(results: Results) -> Callable[[pd.Series], Estimate]:
    def estimate(row: pd.Series) -> Estimate:
        clm = Estimate.from_columns(row, results.confidence, "clm_")
        return difference(clm, Estimate.from_columns(row, results.confidence, "mlm_"))

    return estimate


def fit_text(items: Sequence[tuple[str, Estimate]], low: float, high: float, unit: str) -> str:
    """Says whether the claimed value (or range) lies within the CI of each comparison."""
    claimed = f"{low:g}{unit}" if low == high else f"{low:g}-{high:g}{unit} range"
    inside = sum(1 for _, e in items if e.low <= high and e.high >= low)
    if len(items) == 1:
        return f"the claimed {claimed} lies {'within' if inside else 'outside'} the CI"
    return f"the claimed {claimed} lies within the CI in {inside} of {len(items)} comparisons"


def range_verdict(items: Sequence[tuple[str, Estimate]], low: float, high: float) -> str:
    return combine(judge(e, low, high) for _, e in items)


def paired_runs(results: Results, column: str, families: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (task, size) compared in comparison.csv: ``column`` of lr_sensitivity.csv
    for its CLM and its MLM run."""
    pairs = results.comparison[results.comparison["level"] == "task"]
    if families is not None:
        pairs = pairs[pairs["family"].isin(families)]
    values = results.lr_sensitivity.set_index(["task", "run"])[column]
    return pd.DataFrame({
        "label": [f"{t} {s}" for t, s in zip(pairs["name"], pairs["size"])],
        "clm": [values[(t, r)] for t, r in zip(pairs["name"], pairs["clm_run"])],
        "mlm": [values[(t, r)] for t, r in zip(pairs["name"], pairs["mlm_run"])],
    })  # fmt: skip


# ------------------------------------------------------------------ the checkers

C01_CLAIMED_GAP = (2.3, 5.7)  # points, MLM − CLM, "for 210M-1B models"
C02_CLAIMED_F1 = {"mlm": 68.4, "clm": 62.7}  # SQuAD 2.0
C03_CLAIMED_ACCURACY = {"clm": 92.1, "mlm": 91.3}  # AG News at 610M
C06_CLAIMED_FEWER_ITERATIONS = 58.0  # percent
C07_CLAIMED_LESS_SENSITIVE = 37.0  # percent
C12_CLAIMED_FRACTION = {"mlm": 0.15, "clm": 1.0}
# A loss fraction is a count over every trained batch, not an estimate; two points
# absorb random masking noise and CLM's one unpredicted position per sequence.
LOSS_FRACTION_TOLERANCE = 0.02


@checker("c01")
def check_c01(results: Results) -> Verdict:
    """MLM beats CLM by 2.3-5.7 points on SC and QA: the family averages, per size."""
    rows = family_comparisons(results, ("SC", "QA"))
    if rows.empty:
        return Verdict("not measured", "no SC or QA family has both an MLM and a CLM run", "MLM and CLM runs fine-tuned on SC or QA tasks")
    items = labelled(rows, mlm_minus_clm(results))
    verdict, fit = range_verdict(items, *C01_CLAIMED_GAP), fit_text(items, *C01_CLAIMED_GAP, " points")
    no_qa = "" if (rows["family"] == "QA").any() else "; no QA task was run"
    evidence = f"Family-average MLM − CLM ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; {fit}{no_qa}."
    return Verdict(verdict, evidence)


@checker("c02")
def check_c02(results: Results) -> Verdict:
    """SQuAD 2.0 F1 68.4 (MLM) vs 62.7 (CLM): the gap on QA tasks, per size."""
    rows = results.comparison[(results.comparison["level"] == "task") & (results.comparison["family"] == "QA")]
    if rows.empty:
        return Verdict(
            "not measured",
            "no task of family QA was run (no SQuAD-style data is available offline)",
            "an extractive QA task with unanswerable questions, scored with SQuAD-v2 F1",
        )
    gap = C02_CLAIMED_F1["mlm"] - C02_CLAIMED_F1["clm"]
    items = labelled(rows, mlm_minus_clm(results))
    verdict, fit = range_verdict(items, gap, gap), fit_text(items, gap, gap, " points")
    evidence = f"QA MLM − CLM ({percent(results.confidence)}) {listing(items)} points {scale(results)}; {fit}; absolute F1 values are not comparable across scales and datasets."
    return Verdict(verdict, evidence)


def topic_tasks(results: Results) -> list[str]:
    """Tasks standing in for AG News: a declared proxy, else tasks named like "topic"."""
    tasks = results.tasks
    proxies = tasks.loc[tasks["proxy_for"].fillna("").str.lower().str.replace(" ", "") == "agnews", "task"]
    named = tasks.loc[tasks["task"].str.contains("topic", case=False), "task"]
    return list(proxies if len(proxies) else named)


@checker("c03")
def check_c03(results: Results) -> Verdict:
    """CLM edges out MLM on AG News (92.1 vs 91.3): CLM − MLM on the topic task."""
    tasks = topic_tasks(results)
    rows = results.comparison[(results.comparison["level"] == "task") & results.comparison["name"].isin(tasks)]
    if rows.empty:
        return Verdict("not measured", "no topic-classification task has both an MLM and a CLM run", "a topic classification task (AG News or a proxy)")
    gap = C03_CLAIMED_ACCURACY["clm"] - C03_CLAIMED_ACCURACY["mlm"]
    items = labelled(rows, clm_minus_mlm(results))
    verdict, fit = range_verdict(items, gap, gap), fit_text(items, gap, gap, " points")
    evidence = f"AG News is absent, so the topic task ({', '.join(tasks)}) stands in: CLM − MLM ({percent(results.confidence)}) {listing(items)} points {scale(results)}; {fit}."
    return Verdict(verdict, evidence)


@checker("c06")
def check_c06(results: Results) -> Verdict:
    """58% fewer tuning iterations for CLM on text classification.

    Tuning iterations are modelled as the expected number of random LR draws until one
    is within 1 point of the best: grid size / near-best count. CLM's saving per
    (SC task, size) is then 1 − near_mlm / near_clm. Only the direction is judged: on
    a grid of a few LRs the saving per pair takes a handful of values (0%, 33%, 50%,
    67%, ... on three points), so a CI over identical pairs has zero width and would
    "exclude" 58% without the data saying anything about it.
    """
    pairs = paired_runs(results, "num_near_best", families=("SC",))
    if len(pairs) < 2:
        return Verdict("not measured", f"{len(pairs)} (SC task, size) pairs with both CLM and MLM runs; a CI needs two", "CLM and MLM runs on at least two (SC task, size) pairs")
    reductions = 100.0 * (1.0 - pairs["mlm"] / pairs["clm"])
    estimate = mean_interval(reductions.tolist(), results.confidence)
    counts = ", ".join(f"{row.label} {row.clm} vs {row.mlm}" for row in pairs.itertuples())
    grid_size = int(results.lr_sensitivity["num_learning_rates"].max())
    evidence = (
        f"LR points (of {grid_size}) within 1 point of the best validation score, CLM vs MLM: {counts}; "
        f"CLM's expected saving in random-search iterations {interval_text(estimate.mean, estimate.low, estimate.high, signed=True)}% "
        f"({percent(results.confidence)} over {len(pairs)} pairs) {scale(results)}; only the direction is judged, "
        f"as a {grid_size}-point grid cannot resolve the claimed {C06_CLAIMED_FEWER_ITERATIONS:g}%."
    )
    return Verdict(judge(estimate), evidence)


@checker("c07")
def check_c07(results: Results) -> Verdict:
    """CLM 37% less sensitive to the LR: 1 − spread_clm / spread_mlm per (task, size),
    averaged over pairs with a t-interval and judged against the claimed 37%."""
    pairs = paired_runs(results, "test_spread")
    usable = pairs[pairs["mlm"] > 0]
    if len(usable) < 2:
        return Verdict("not measured", f"{len(usable)} (task, size) pairs with a nonzero MLM spread; a CI needs two", "CLM and MLM runs on at least two (task, size) pairs with an LR grid")
    reductions = 100.0 * (1.0 - usable["clm"] / usable["mlm"])
    estimate = mean_interval(reductions.tolist(), results.confidence)
    claimed = C07_CLAIMED_LESS_SENSITIVE
    verdict, fit = judge(estimate, claimed, claimed), fit_text([("", estimate)], claimed, claimed, "%")
    spreads = ", ".join(f"{row.label} {row.clm:.1f} vs {row.mlm:.1f}" for row in usable.itertuples())
    evidence = (
        f"Spread (max − min) of the seed-mean test score over the LR grid, CLM vs MLM: {spreads} points; "
        f"CLM's relative reduction {interval_text(estimate.mean, estimate.low, estimate.high, signed=True)}% "
        f"({percent(results.confidence)} over {len(usable)} pairs) {scale(results)}; {fit}."
    )
    return Verdict(verdict, evidence)


@checker("c11")
def check_c11(results: Results) -> Verdict:
    """The MLM−CLM gap narrows with size: per family, smallest vs largest size.

    The gap is signed by the smallest model's winner, g = s * (MLM − CLM); it narrows
    when s * (d_large − d_small) < 0 with a Welch CI below zero.
    """
    rows = results.comparison[results.comparison["level"] == "family"]
    if rows["size"].nunique() < 2:
        return Verdict("not measured", "fewer than two model sizes have both an MLM and a CLM run", "MLM and CLM runs at two or more sizes")
    items, parts = [], []
    for family, group in rows.groupby("family", sort=True):
        ordered = group.sort_values("num_parameters")
        if len(ordered) < 2:
            continue
        small, large = (Estimate.from_columns(ordered.iloc[i], results.confidence, "difference_") for i in (0, -1))
        sign = 1.0 if small.mean >= 0 else -1.0
        narrowing = linear_combination((sign, -sign), (small, large))  # > 0: the gap shrank
        items.append(judge(narrowing))
        parts.append(
            f"{family} {ordered.iloc[0]['size']} {small.mean:+.1f} → {ordered.iloc[-1]['size']} {large.mean:+.1f} "
            f"(narrowing {interval_text(narrowing.mean, narrowing.low, narrowing.high, signed=True)})"
        )
    if not items:
        return Verdict("not measured", "no family has MLM and CLM runs at two sizes", "MLM and CLM runs at two or more sizes")
    evidence = f"MLM − CLM gap from the smallest to the largest size, points ({percent(results.confidence)}, Welch): {'; '.join(parts)} {scale(results)}; the study found the SC gap widening with size."
    return Verdict(combine(items), evidence)


@checker("c12")
def check_c12(results: Results) -> Verdict:
    """MLM computes loss on ~15% of tokens, CLM on 100%: the measured loss fractions.

    The claim describes BERT's 15% masking, so an MLM run at another ratio cannot test
    it; each run's fraction is still compared with what its own configuration implies.
    """
    runs = results.pretraining
    if not {"mlm", "clm"} <= set(runs["objective_kind"]):
        return Verdict("not measured", "no MLM or no CLM pretraining summary", "MLM and CLM pretraining summaries with loss_fraction")
    expected = {
        row.run: C12_CLAIMED_FRACTION["clm"] if row.objective_kind == "clm" else mlm_ratio(results, row.objective)
        for row in runs.itertuples()
        if row.objective_kind in C12_CLAIMED_FRACTION
    }
    measured = dict(zip(runs["run"], runs["loss_fraction"]))
    found = ", ".join(f"{run} {100 * measured[run]:.1f}% (configured {100 * want:g}%)" for run, want in expected.items())
    evidence = f"Fraction of positions carrying loss, counted over all trained batches: {found}."
    if any(abs(measured[run] - want) > LOSS_FRACTION_TOLERANCE for run, want in expected.items()):
        return Verdict("contradicted", evidence + " A run's fraction departs from its configuration.")
    at_bert_ratio = [run for run, want in expected.items() if want == C12_CLAIMED_FRACTION["mlm"]]
    if not at_bert_ratio:
        return Verdict(
            "not measured",
            evidence + " CLM matches 100% (less one unpredicted position per sequence); no MLM run uses BERT's 15%, so the 15% half is untested.",
            "an MLM run at a 15% masking ratio",
        )
    return Verdict("supported", evidence + f" MLM at BERT's 15% ({', '.join(at_bert_ratio)}) and CLM match the claim.")


def mlm_ratio(results: Results, objective: str) -> float:
    """The masking ratio an MLM objective was configured with (MLMParams' default is 15%)."""
    return float(results.objectives.get(objective, {}).get("mask_ratio", C12_CLAIMED_FRACTION["mlm"]))


@checker("c18")
def check_c18(results: Results) -> Verdict:
    """MLM better for classification, search and NER; CLM generates better.

    Only the SC/TC/IR half can be measured; it can contradict the claim but never
    support all of it, because generation quality has no MLM counterpart here.
    """
    rows = family_comparisons(results, ("SC", "TC", "IR"))
    if rows.empty:
        return Verdict("not measured", "no SC, TC or IR family has both an MLM and a CLM run", "MLM and CLM runs on SC/TC/IR tasks, and a generation benchmark")
    items = labelled(rows, mlm_minus_clm(results))
    measured = combine(judge(e) for _, e in items)
    perplexity = results.pretraining[results.pretraining["heldout_metric_name"] == "next_token_perplexity"]
    causal = ", ".join(f"{r.run} {r.heldout_metric_value:.1f}" for r in perplexity.itertuples()) or "none"
    evidence = (
        f"Family-average MLM − CLM ({percent(results.confidence)}) {listing(items)} points {scale(results)} (the measured half is {measured}); "
        f"held-out next-token perplexity exists only for causal models ({causal}), so 'CLM generates better' is not measured."
    )
    verdict = "contradicted" if measured == "contradicted" else "inconclusive"
    return Verdict(verdict, evidence, "a generation-quality evaluation of both objectives")
