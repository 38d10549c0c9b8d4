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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipeline import strict
from pipeline.files import read_yaml
from pipeline.report.runs import CONTINUED, MASKING, TWO_STAGE, masking
from pipeline.report.stats import Estimate, ci_side, difference, linear_combination, mean_interval
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


def placed(results: Results, section: str) -> pd.DataFrame:
    """Family-average rows of objectives.csv shown in ``section`` (repeated references included)."""
    frame = results.objectives
    return frame[(frame["level"] == "family") & (frame["section"] == section)]


def own_rows(results: Results, kind: str) -> pd.DataFrame:
    """Family-average rows of the from-scratch runs of objective kind ``kind``, once each."""
    frame = results.objectives
    return frame[(frame["level"] == "family") & ~frame["repeated"] & (frame["study"] == "objectives") & (frame["objective_kind"] == kind)]


def estimate_of(results: Results, row: pd.Series, prefix: str = "test_") -> Estimate:
    return Estimate.from_columns(row, results.confidence, prefix)


def versus_reference(results: Results, rows: pd.DataFrame, kind: str) -> list[tuple[str, Estimate]]:
    """(family size run, run − the reference ``kind`` run of its size) for each row that has one."""
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    return [(f"{r['family']} {r['size']} {r['run_name']}", estimate_of(results, r, f"minus_{kind}_")) for _, r in usable.iterrows()]


def negated(items: Sequence[tuple[str, Estimate]]) -> list[tuple[str, Estimate]]:
    """Each difference the other way round (reference − run)."""
    return [(label, linear_combination((-1.0,), (e,))) for label, e in items]


def direction_verdict(items: Sequence[tuple[str, Estimate]]) -> str:
    return combine(judge(e) for _, e in items)


def budget_text(results: Results, runs: Iterable[str]) -> str:
    """The pretraining steps of the compared runs, and whether they were equal."""
    steps = results.pretraining.set_index("run")["num_steps"]
    runs = list(dict.fromkeys(runs))
    if steps[runs].nunique() == 1:
        return f"{'both' if len(runs) == 2 else f'all {len(runs)}'} runs compared pretrained {int(steps[runs[0]]):,} steps"
    return "pretraining steps differ: " + ", ".join(f"{run} {int(steps[run]):,}" for run in runs)


def matched_budget_text(results: Results, rows: pd.DataFrame, kind: str) -> str:
    """:func:`budget_text`, unless the rows span several step budgets and each is compared
    with a ``kind`` reference of its own budget; then that, with the budgets."""
    steps = results.pretraining.set_index("run")["num_steps"]
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    own, reference = usable["run"].map(steps), usable[f"{kind}_run"].map(steps)
    if own.nunique() == 1 or not (own == reference).all():
        return budget_text(results, compared_runs(rows, kind))
    budgets = ", ".join(f"{int(b):,}" for b in sorted(own.unique()))
    return f"each run is compared with the {kind.upper()} run of its own step budget ({budgets} steps)"


def compared_runs(rows: pd.DataFrame, kind: str) -> list[str]:
    """The rows' runs and their ``kind`` reference runs."""
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    return [*usable["run"], *usable[f"{kind}_run"]]


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

# Points a run's CI must clear the trivial baseline by before it counts as having learned a
# task. Without it, a QA model that abstains on all but a handful of questions (3 seeds at
# 33.5 against an always-abstain 33.3, a CI that excludes the floor by 0.04) was judged.
FLOOR_MARGIN = 1.0


def at_floor(results: Results, rows: pd.DataFrame) -> pd.Series:
    """Per comparison row: neither the MLM nor the CLM run's CI clears the trivial baseline
    (majority class, always abstain, ...) of the tasks in it by ``FLOOR_MARGIN`` points.
    Such a gap says nothing about the objectives, only that the budget taught neither
    model the task."""
    baseline = results.tasks.set_index("task")["majority_test_score"]
    family_tasks = results.tasks.groupby("family")["task"].apply(list)

    def floor(row: pd.Series) -> bool:
        tasks = [row["name"]] if row["level"] == "task" else family_tasks.get(row["family"], [])
        ceiling = max((baseline.get(task, math.nan) for task in tasks), default=math.nan)
        return bool(ceiling == ceiling and max(row["mlm_low"], row["clm_low"]) < ceiling + FLOOR_MARGIN)

    return rows.apply(floor, axis=1) if len(rows) else pd.Series(dtype=bool)


def floor_text(rows: pd.DataFrame) -> str:
    return ", ".join(f"{r['name']} {r['size']}" for _, r in rows.iterrows())


@checker("c01")
def check_c01(results: Results) -> Verdict:
    """MLM beats CLM by 2.3-5.7 points on SC and QA: the family averages, per size, leaving
    out families where neither run beat the trivial baseline by ``FLOOR_MARGIN``."""
    rows = family_comparisons(results, ("SC", "QA"))
    floored = rows[at_floor(results, rows)] if len(rows) else rows
    rows = rows.drop(floored.index)
    if rows.empty:
        return Verdict("not measured", "no SC or QA family has both an MLM and a CLM run", "MLM and CLM runs fine-tuned on SC or QA tasks")
    items = labelled(rows, mlm_minus_clm(results))
    verdict, fit = range_verdict(items, *C01_CLAIMED_GAP), fit_text(items, *C01_CLAIMED_GAP, " points")
    no_qa = "" if (rows["family"] == "QA").any() else "; no QA task was run"
    if len(floored):
        no_qa = f"; left out, as neither run beat the trivial baseline by {FLOOR_MARGIN:g} point: {floor_text(floored)}"
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
    floored = at_floor(results, rows)
    if floored.all():
        return Verdict(
            "inconclusive",
            f"Neither the MLM nor the CLM run beat the trivial baseline (always abstain) by {FLOOR_MARGIN:g} point on {floor_text(rows)} {scale(results)}: "
            "the fine-tuning budget taught neither to answer, so the gap says nothing about the objectives.",
            "a QA budget at which the models answer some questions",
        )
    rows = rows[~floored]
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
        row.run: C12_CLAIMED_FRACTION["clm"] if row.objective_kind == "clm" else mlm_ratio(results, row.objective, row.run)
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


def mlm_ratio(results: Results, objective: str, run: str) -> float:
    """The masking ratio the run's MLM objective was configured with."""
    return masking(results.objective_configs, objective, run)["mask_ratio"]


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
    perplexity = results.pretraining[results.pretraining["heldout_metric_name"] == "next_token_perplexity"].dropna(subset=["heldout_metric_value"])
    causal = ", ".join(f"{r.run} {r.heldout_metric_value:.1f}" for r in perplexity.itertuples()) or "none"
    evidence = (
        f"Family-average MLM − CLM ({percent(results.confidence)}) {listing(items)} points {scale(results)} (the measured half is {measured}); "
        f"held-out next-token perplexity exists only for causal and prefix-attention models ({causal}), so 'CLM generates better' is not measured."
    )
    verdict = "contradicted" if measured == "contradicted" else "inconclusive"
    return Verdict(verdict, evidence, "a generation-quality evaluation of both objectives")


# ------------------------------------------------------------------ the objective zoo

C08_CLAIMED_GAIN = 2.4  # points, best CLM→MLM split − MLM-only
C09_CLAIMED_GAIN = 1.8  # points, MLM CPT on a CLM base − on an MLM base, after 10,000 CPT steps
BERT_RULE, MASK_ONLY_RULE = (0.8, 0.1), (1.0, 0.0)  # ([MASK], random-token) fractions of the selected positions
RULE_TOLERANCE = 1e-9


@checker("c08")
def check_c08(results: Results) -> Verdict:
    """Two-stage CLM→MLM beats MLM-only by 2.4 points at a fixed budget: per family, size
    and step budget, the best split (highest family average) − the MLM run of that budget,
    Welch CI.

    Choosing the best of the splits by its own test score favours it, so the evidence
    lists every split and says that a supported verdict is optimistic.
    """
    rows = placed(results, TWO_STAGE)
    splits = rows[(rows["study"] == "two_stage") & rows["minus_mlm_mean"].notna()]
    if splits.empty:
        return Verdict("not measured", "no two-stage CLM→MLM run has an MLM-only run at its size", "two-stage CLM-then-MLM runs at equal total steps, and an MLM-only run")
    best = splits.loc[splits.groupby(["family", "size", "num_steps"])["test_mean"].idxmax()]
    items = versus_reference(results, best, "mlm")
    claimed, per_budget = C08_CLAIMED_GAIN, splits.groupby("num_steps")["run_name"].nunique()
    candidates = f"{per_budget.iloc[0]} splits" if len(per_budget) == 1 else "the splits of each budget (" + ", ".join(f"{n} at {b:,} steps" for b, n in per_budget.items()) + ")"
    selection = f"picking the best of {candidates} by its own test score favours it, so a supported verdict is optimistic; " if per_budget.max() > 1 else ""
    evidence = (
        f"Family-average two-stage − MLM-only ({percent(results.confidence)}, Welch), every split: {listing(versus_reference(results, splits, 'mlm'))} points "
        f"{scale(results)}; judged on the best split per family, size and budget ({', '.join(best['run_name'])}); {fit_text(items, claimed, claimed, ' points')}; "
        f"{selection}{matched_budget_text(results, splits, 'mlm')}."
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


def continued_verdict(results: Results, claimed_gain: float | None) -> Verdict:
    """MLM CPT on a CLM base beats the same on an MLM base: the direction is judged.

    A claimed gain belongs to the study's CPT length (10,000 steps); whether it lies in
    the CI is reported, not judged, since the CPT here is far shorter.
    """
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
        magnitude = f"; {fit}, but only the direction is judged: the claimed gain is after 10,000 CPT steps"
    evidence = (
        f"Family-average MLM CPT on the CLM base − on the MLM base ({percent(results.confidence)}, Welch) {listing(items)} points "
        f"{scale(results)}; {budget_text(results, runs)} of CPT{magnitude}."
    )
    return Verdict(direction_verdict(items), evidence)


@checker("c09")
def check_c09(results: Results) -> Verdict:
    return continued_verdict(results, C09_CLAIMED_GAIN)


@checker("p02")
def check_p02(results: Results) -> Verdict:
    return continued_verdict(results, None)


NEEDLE_FAMILY = "NIAH"


@checker("c10")
def check_c10(results: Results) -> Verdict:
    """MEAP improves needle-in-a-haystack retrieval by 19.3%: MEAP − CLM exact match on
    the NIAH family at equal budget, per size. The direction is judged by the interval;
    the relative gain (MEAP / CLM − 1) is given beside it, since "19.3%" may be either."""
    rows = own_rows(results, "meap")
    items = versus_reference(results, rows[rows["family"] == NEEDLE_FAMILY], "clm")
    if not items:
        return Verdict(
            "not measured",
            "no MEAP run has needle-in-a-haystack scores beside a CLM run of its size",
            "a needle-in-a-haystack evaluation of MEAP and CLM at equal budget",
        )
    relative = []
    for _, row in rows[(rows["family"] == NEEDLE_FAMILY) & rows["minus_clm_mean"].notna()].iterrows():
        base = row["test_mean"] - row["minus_clm_mean"]  # the CLM run's score
        relative.append(f"{row['size']} {row['test_mean'] / base - 1:+.0%}" if base else f"{row['size']} (CLM scored 0)")
    evidence = (
        f"Needle-in-a-haystack exact match, MEAP − CLM ({percent(results.confidence)}, Welch) {listing(items)} points "
        f"{scale(results)}; relative change {', '.join(relative)} (claimed +19.3%)."
    )
    return Verdict(direction_verdict(items), evidence)


@checker("c13")
def check_c13(results: Results) -> Verdict:
    """Training without NSP is equal or better: MLM − MLM+NSP per family and size.

    "Equal" cannot be shown by an interval without an equivalence margin, so only MLM
    ahead (CI above 0) supports the claim; NSP ahead contradicts it.
    """
    rows = own_rows(results, "nsp")
    items = negated(versus_reference(results, rows, "mlm"))
    if not items:
        return Verdict("not measured", "no MLM+NSP run has an MLM run at its size", "an MLM+NSP objective run at the same budget as MLM")
    ratios = ", ".join(f"{run} {100 * mlm_ratio(results, objective, run):g}%" for run, objective in zip(rows["run"], rows["objective"]))
    evidence = (
        f"Family-average MLM − MLM+NSP ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; "
        f"an interval spanning 0 is consistent with 'equal' but does not show it; MLM+NSP masking ratio {ratios}; "
        f"{budget_text(results, compared_runs(rows, 'mlm'))}."
    )
    return Verdict(direction_verdict(items), evidence)


@checker("c14")
def check_c14(results: Results) -> Verdict:
    """Span corruption beats MLM per token of input: span corruption − MLM at equal input text.

    Both runs read the same corpus blocks for the same steps, so they see the same input
    text; "per token of input" is read as per corpus token. Span corruption's examples
    (shortened input plus targets) are longer, so it processes more positions, which the
    evidence states. A score-against-tokens curve would need fine-tuned intermediate
    checkpoints.
    """
    rows = own_rows(results, "span_corruption")
    items = versus_reference(results, rows, "mlm")
    if not items:
        return Verdict("not measured", "no span-corruption run has an MLM run at its size", "a span-corruption objective and an MLM run at the same budget")
    tokens = results.pretraining.set_index("run")["num_tokens"]
    usable = rows[rows["minus_mlm_mean"].notna()].drop_duplicates("run")
    positions = ", ".join(
        f"{span} {count_text(tokens[span])} vs {mlm} {count_text(tokens[mlm])} ({tokens[span] / tokens[mlm]:.2f}x)" for span, mlm in zip(usable["run"], usable["mlm_run"])
    )
    evidence = (
        f"Family-average span corruption − MLM ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; "
        f"{budget_text(results, compared_runs(rows, 'mlm'))} on the same corpus blocks, so at equal input text; positions processed "
        f"(span corruption's examples add sentinels and targets): {positions}; one point per run, not a score-against-tokens curve "
        f"(that needs fine-tuned intermediate checkpoints)."
    )
    return Verdict(direction_verdict(items), evidence)


@checker("c15")
def check_c15(results: Results) -> Verdict:
    """UL2 generalises better than any single objective: UL2 − the best other
    from-scratch objective (highest family average) per family and size, Welch CI.

    Picking the strongest competitor by its own test score favours the competitor, so
    a contradicted verdict is the optimistic one here.
    """
    frame = results.objectives
    scratch = frame[(frame["level"] == "family") & ~frame["repeated"] & (frame["study"] == "objectives")]
    items, runs = [], []
    for _, ul2 in own_rows(results, "ul2").iterrows():
        peers = scratch[(scratch["family"] == ul2["family"]) & (scratch["size"] == ul2["size"]) & (scratch["objective_kind"] != "ul2")]
        if peers.empty:
            continue
        best = peers.loc[peers["test_mean"].idxmax()]
        items.append((f"{ul2['family']} {ul2['size']} vs {best['run_name']} (best of {len(peers)})", difference(estimate_of(results, ul2), estimate_of(results, best))))
        runs += [ul2["run"], *peers["run"]]
    if not items:
        return Verdict("not measured", "no UL2 run has another from-scratch objective at its size", "a UL2 mixture-of-denoisers objective and other objectives at the same budget")
    evidence = (
        f"Family-average UL2 − the best other single objective ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; "
        f"the competitor is picked by its own test score, which favours it; {budget_text(results, runs)}."
    )
    return Verdict(direction_verdict(items), evidence)


def has_rule(rows: pd.DataFrame, rule: tuple[float, float]) -> pd.Series:
    """Rows whose ([MASK], random-token) replacement fractions are ``rule``."""
    return ((rows["mask_token_fraction"] - rule[0]).abs() < RULE_TOLERANCE) & ((rows["random_token_fraction"] - rule[1]).abs() < RULE_TOLERANCE)


@checker("c16")
def check_c16(results: Results) -> Verdict:
    """80/10/10 beats 100% [MASK]: per family, size and masking ratio, the MLM run with
    BERT's rule − the one that always uses [MASK], Welch CI."""
    rows = placed(results, MASKING)
    rows = rows[rows["objective_kind"] == "mlm"]
    items, runs = [], []
    for (family, size, ratio), group in rows.groupby(["family", "size", "mask_ratio"], sort=False):
        bert, mask_only = group[has_rule(group, BERT_RULE)], group[has_rule(group, MASK_ONLY_RULE)]
        if len(bert) == 1 and len(mask_only) == 1:
            gap = difference(estimate_of(results, bert.iloc[0]), estimate_of(results, mask_only.iloc[0]))
            items.append((f"{family} {size} at {100 * ratio:g}% masking", gap))
            runs += [bert.iloc[0]["run"], mask_only.iloc[0]["run"]]
    if not items:
        return Verdict("not measured", "no pair of MLM runs at one masking ratio with 80/10/10 and with 100% [MASK]", "an MLM ablation replacing 100% of selected tokens by the mask token, against 80/10/10")
    evidence = (
        f"Family-average MLM 80/10/10 − MLM 100% [MASK] ({percent(results.confidence)}, Welch) {listing(items)} points {scale(results)}; "
        f"BERT's own ablation found small differences; {budget_text(results, runs)}."
    )
    return Verdict(direction_verdict(items), evidence)


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
            sweeps[(family, size)] = sorted(((r["mask_ratio"], estimate_of(results, r)) for _, r in same_rule.iterrows()), key=lambda point: point[0])
    return sweeps


def preferred_ratio(points: Sequence[tuple[float, Estimate]]) -> tuple[float, Estimate]:
    """The ratio with the highest score, and its lead over the runner-up (Welch)."""
    ranked = sorted(points, key=lambda point: point[1].mean, reverse=True)
    return ranked[0][0], difference(ranked[0][1], ranked[1][1])


def high_minus_low(points: Sequence[tuple[float, Estimate]]) -> Estimate:
    """Score at the highest ratio − at the lowest: > 0 when higher ratios are preferred."""
    return difference(points[-1][1], points[0][1])


def universal_best_verdict(sweeps: Sweeps) -> str | None:
    """"No universally best ratio": supported when two settings have different resolved
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
    """"Larger models prefer higher ratios": per family swept at two or more sizes, the
    high-minus-low-ratio contrast at the largest size − at the smallest (Welch)."""
    verdicts = []
    for family in dict.fromkeys(f for f, _ in sweeps):
        swept = [size for size in sizes if (family, size) in sweeps]
        if len(swept) >= 2:
            verdicts.append(judge(difference(high_minus_low(sweeps[(family, swept[-1])]), high_minus_low(sweeps[(family, swept[0])]))))
    return combine(verdicts) if verdicts else None


def retrieval_verdict(sweeps: Sweeps) -> str | None:
    """"Retrieval prefers higher ratios": per size, the IR family's high-minus-low-ratio
    contrast − each other family's (Welch)."""
    verdicts = [
        judge(difference(high_minus_low(points), high_minus_low(sweeps[(family, size)])))
        for (ir, size), points in sweeps.items()
        if ir == "IR"
        for family, other_size in sweeps
        if other_size == size and family != "IR"
    ]
    return combine(verdicts) if verdicts else None


@checker("p01")
def check_p01(results: Results) -> Verdict:
    """No universally best masking ratio; larger models and retrieval prefer higher ones.

    Three parts, each testable only with enough settings: two (family, size) sweeps for
    the first, sweeps at two sizes for the second, an IR family for the third. A
    contradicted part contradicts the claim; all three must hold to support it; with no
    testable part the sweep is reported and the claim is not measured.
    """
    sweeps = ratio_sweeps(results)
    if not sweeps:
        return Verdict("not measured", "no two MLM runs at different masking ratios with the same replacement rule at one size", "MLM runs at several masking ratios (20-50%) per size, and IR tasks")
    sizes = list(results.pretraining.groupby("size")["num_parameters"].mean().sort_values().index)
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
        cells.append(f"{family} {size}: {scores}; best {100 * ratio:g}%, lead over the runner-up {interval_text(lead.mean, lead.low, lead.high, signed=True)}")
    found = "; ".join(f"{part}: {verdict or 'not testable here'}" for part, verdict in parts.items())
    evidence = f"Family average against masking ratio, same replacement rule ({percent(results.confidence)}): {' | '.join(cells)} {scale(results)}. Parts: {found}."
    measured = [verdict for verdict in parts.values() if verdict]
    needed = "; ".join(needs[part] for part, verdict in parts.items() if verdict is None)
    if not measured:
        return Verdict("not measured", evidence, needed)
    verdict = "contradicted" if "contradicted" in measured else "supported" if measured == ["supported"] * len(parts) else "inconclusive"
    return Verdict(verdict, evidence, needed)


# ------------------------------------------------------------------ learning curves

STUDY_BUDGET = 42_000  # steps: the study's longest pretraining budget, which its learning curves span
C04_CLAIMED_STEPS = (5_000, 15_000)  # CLM ahead at the first; MLM ahead from about the second
C04_CROSSOVER = C04_CLAIMED_STEPS[1] / STUDY_BUDGET  # the claimed crossover as a share of the budget
C04_CLAIMED_LEAD = 4.1  # points, CLM − MLM at most, early on
C05_THRESHOLD = 0.9  # a run has "converged" once it reaches this share of its own final family average
C05_CLAIMED_FASTER = 37.0  # percent
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
    rows = results.curve_comparison
    rows = rows[(rows["level"] == "family") & rows["budget_fraction"].notna()]
    return {
        (family, size): [(r["budget_fraction"], estimate_of(results, r, "difference_")) for _, r in group.sort_values("step").iterrows()]
        for (family, size), group in rows.groupby(["family", "size"], sort=False)
        if not group["final"].all()
    }


def c04_verdict(points: Points) -> str:
    """CLM ahead at the earliest checkpoint and MLM ahead at the final model, each with a
    CI excluding 0; either resolved the other way contradicts the claim, except MLM
    ahead at an earliest checkpoint past the claimed crossover (36% of the budget):
    MLM may have overtaken before it, as claimed."""
    (first, early), (_, late) = points[0], points[-1]
    clm_early = judge(linear_combination((-1.0,), (early,)))
    if clm_early == "contradicted" and first >= C04_CROSSOVER:
        clm_early = "inconclusive"
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
    return [*results.curve_comparison["clm_run"], *results.curve_comparison["mlm_run"]]


@checker("c04")
def check_c04(results: Results) -> Verdict:
    """CLM ahead early, MLM ahead later: the family-average MLM − CLM curve over the
    share of the pretraining budget; only the direction is judged (:func:`c04_verdict`),
    the crossover is located between checkpoints (:func:`crossing`).

    Steps are compared as shares of the budget: the embedded default trains a few
    hundred steps, the claim's 5,000 and 15,000 are 12% and 36% of the study's 42,000.
    """
    curves = gap_curves(results)
    if not curves:
        return Verdict("not measured", "no size has learning-curve scores for both its CLM and its MLM run", CURVES_NEEDED)
    parts = [f"{family} {size}: {curve_text(points)} ({crossing_text(points)})" for (family, size), points in curves.items()]
    leads = [(f"{family} {size} at {share_text(f)}", e) for (family, size), points in curves.items() for f, e in points]
    label, lead = min(leads, key=lambda item: item[1].mean)
    largest = (
        f"the largest CLM lead is {interval_text(-lead.mean, -lead.high, -lead.low)} points ({label}; claimed up to {C04_CLAIMED_LEAD:g}, not judged)"
        if lead.mean < 0
        else "CLM never leads on average"
    )
    late_start = [f"{family} {size}" for (family, size), points in curves.items() if points[0][0] >= C04_CROSSOVER]
    evidence = (
        f"Family-average MLM − CLM in points ({percent(results.confidence)}, Welch) at each share of the pretraining budget: {'; '.join(parts)}; "
        f"{scale(results)}. Steps are scaled: {budget_text(results, curve_runs(results))}, and the claim's steps "
        f"{C04_CLAIMED_STEPS[0]:,} and {C04_CLAIMED_STEPS[1]:,} are {share_text(C04_CLAIMED_STEPS[0] / STUDY_BUDGET)} and "
        f"{share_text(C04_CROSSOVER)} of the study's {STUDY_BUDGET:,}-step budget. Only the direction is judged (CLM ahead at the "
        f"earliest checkpoint, MLM ahead at the final model); {largest}."
    )
    needed = f"a checkpoint before {share_text(C04_CROSSOVER)} of the budget for {', '.join(late_start)}" if late_start else ""
    return Verdict(combine(c04_verdict(points) for points in curves.values()), evidence, needed)


def threshold_bracket(checkpoints: Points, final: Estimate) -> tuple[float, float]:
    """The shares of the budget between which a run's score first reaches
    :data:`C05_THRESHOLD` of its final score: :func:`crossing` of score − 0.9 × final
    (checkpoint and final model are fine-tuned independently, so Welch applies), from 0
    when no checkpoint is resolved below it, to 1 (the final model) when none is above."""
    before, after = crossing([(f, linear_combination((1.0, -C05_THRESHOLD), (score, final))) for f, score in checkpoints])
    return before or 0.0, after or 1.0


def convergence_bracket(results: Results, family: str, run: str) -> tuple[float, float] | None:
    """:func:`threshold_bracket` of ``run``'s family average, None without a checkpoint."""
    rows = results.learning_curves
    rows = rows[(rows["level"] == "family") & (rows["name"] == family) & (rows["run"] == run)].sort_values("step")
    checkpoints, final = rows[~rows["final"]], rows[rows["final"]]
    if checkpoints.empty or final.empty:
        return None
    return threshold_bracket([(r["budget_fraction"], estimate_of(results, r)) for _, r in checkpoints.iterrows()], estimate_of(results, final.iloc[0]))


def faster_verdict(clm: tuple[float, float], mlm: tuple[float, float]) -> str:
    """CLM faster (supported) when its bracket ends where MLM's begins or earlier, MLM
    faster (contradicted) the other way round; overlapping brackets are inconclusive:
    the checkpoints cannot tell the two apart."""
    if clm[1] <= mlm[0]:
        return "supported"
    return "contradicted" if mlm[1] <= clm[0] else "inconclusive"


@checker("c05")
def check_c05(results: Results) -> Verdict:
    """CLM converges faster early: the share of the budget at which each run's family
    average first reaches 90% of its own final value, CLM vs MLM, per family and size.

    With a few checkpoints, that share is known only to within the interval between
    two checkpoints, so only the direction can be judged, and only when the two runs'
    intervals do not overlap; a 37% difference in steps is far below this resolution.
    """
    pairs = results.comparison[results.comparison["level"] == "family"]
    found = [
        (f"{pair['name']} {pair['size']}", convergence_bracket(results, pair["name"], pair["clm_run"]), convergence_bracket(results, pair["name"], pair["mlm_run"]))
        for _, pair in pairs.iterrows()
    ]
    brackets = [(label, clm, mlm) for label, clm, mlm in found if clm is not None and mlm is not None]
    if not brackets:
        return Verdict("not measured", "no size has learning-curve scores for both its CLM and its MLM run", CURVES_NEEDED)
    curves = results.learning_curves
    checkpoints = curves.loc[~curves["final"] & curves["run"].isin(curve_runs(results)), "budget_fraction"]
    listed = "; ".join(
        f"{label}: CLM {share_text(clm[0])}–{share_text(clm[1])}, MLM {share_text(mlm[0])}–{share_text(mlm[1])}" for label, clm, mlm in brackets
    )
    evidence = (
        f"Share of the pretraining budget by which the family average first reaches {100 * C05_THRESHOLD:g}% of the run's own final "
        f"score (score − {C05_THRESHOLD:g} × final with its {percent(results.confidence)} above 0), between the last checkpoint resolved "
        f"below and the first resolved above: {listed} {scale(results)}. Coarse: checkpoints at "
        f"{', '.join(share_text(f) for f in sorted(set(checkpoints)))} of the budget and the final model locate each run only between "
        f"two of them, so the claimed {C05_CLAIMED_FASTER:g}% cannot be resolved and only the direction is judged; overlapping "
        f"intervals are inconclusive. Steps are scaled: {budget_text(results, curve_runs(results))}."
    )
    return Verdict(combine(faster_verdict(clm, mlm) for _, clm, mlm in brackets), evidence)
