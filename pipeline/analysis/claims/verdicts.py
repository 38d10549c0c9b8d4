"""What every claim check shares: the verdict, how an interval decides it, and the phrases
its evidence is written in.

Verdicts: ``supported`` and ``contradicted`` need a confidence interval that excludes
zero in the claimed (or the opposite) direction; a claimed magnitude must lie inside
the CI to be supported, and a CI that excludes it contradicts the claim as stated.
Everything else is ``inconclusive``. A claim this harness has no data for is ``not
measured``, with what would be needed. Several comparisons (sizes, families) give a
verdict only when they agree; where some are supported and others contradicted, the claim
is ``mixed`` (no further seeds could make it hold everywhere), and its evidence names which
comparisons hold, which fail and which are undecided; otherwise disagreement is inconclusive.

Every evidence sentence states the scale it was measured at: the study's claims are
about 210M-1B-parameter models, the embedded default trains models of a few million.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import pandas as pd

from pipeline.analysis.contract import Results
from pipeline.analysis.stats import Estimate, linear_combination
from pipeline.analysis.text import count_text, interval_text
from pipeline.objectives import kind_of, registered_kinds

VERDICTS = ("supported", "contradicted", "mixed", "inconclusive", "not measured")
RESOLVED = frozenset({"supported", "contradicted"})
# How evidence names the runs of an objective kind: as its registration labels it.
KIND_LABELS = {kind: kind_of(kind).label for kind in registered_kinds()}


@dataclass(frozen=True)
class Verdict:
    verdict: str
    evidence: str
    needed: str = ""


# The estimates judged while one claim is checked (:func:`judged_estimates`), so that the
# claim's power can be stated from exactly the comparisons its verdict rests on, whichever
# check kind judged them.
_JUDGED: ContextVar[list[Estimate] | None] = ContextVar("judged", default=None)


@contextmanager
def judged_estimates() -> Iterator[list[Estimate]]:
    """Collect every estimate :func:`judge` sees inside the ``with`` block."""
    judged: list[Estimate] = []
    token = _JUDGED.set(judged)
    try:
        yield judged
    finally:
        _JUDGED.reset(token)


def judge(estimate: Estimate, claimed_low: float = 0.0, claimed_high: float = math.inf) -> str:
    """Verdict for a positive claim about ``estimate`` (a direction, or a range).

    Contradicted when the CI lies entirely outside [claimed_low, claimed_high] (for a
    direction-only claim: entirely below 0); supported when the CI excludes 0 on the
    positive side and meets the claimed range; inconclusive otherwise.
    """
    judged = _JUDGED.get()
    if judged is not None:
        judged.append(estimate)
    if math.isnan(estimate.low):
        return "inconclusive"
    if estimate.high < claimed_low or estimate.low > claimed_high:
        return "contradicted"
    return "supported" if estimate.low > 0 else "inconclusive"


def combine(verdicts: Iterable[str]) -> str:
    """One verdict for several comparisons: theirs when they all agree, ``mixed`` when some are
    supported and some contradicted, else inconclusive."""
    distinct = set(verdicts)
    if len(distinct) == 1:
        return distinct.pop()
    return "mixed" if RESOLVED <= distinct else "inconclusive"


def scale(results: Results) -> str:
    """Where the numbers come from, for every evidence sentence."""
    sizes = results.tables["pretraining"].groupby("size", sort=False)["num_parameters"].mean()
    listed = ", ".join(f"{size} {count_text(count)}" for size, count in sizes.items())
    if results.measured_by != "this run":
        return f"in {results.measured_by} ({listed} parameters)"
    return f"at this run's scale ({listed} parameters; the study: 210M-1B)"


def percent(confidence: float) -> str:
    return f"{100 * confidence:g}% CI"


def labelled(rows: pd.DataFrame, estimate: Callable[[pd.Series], Estimate]) -> list[tuple[str, Estimate]]:
    """(name and size, estimate) for each comparison row."""
    return [(f"{row['name']} {row['size']}", estimate(row)) for _, row in rows.iterrows()]


def listing(items: Sequence[tuple[str, Estimate]]) -> str:
    return ", ".join(f"{label} {interval_text(e.mean, e.low, e.high, signed=True)}" for label, e in items)


def estimate_of(results: Results, row: pd.Series, prefix: str = "test_") -> Estimate:
    return Estimate.from_columns(row, results.confidence, prefix)


def fit_text(items: Sequence[tuple[str, Estimate]], low: float, high: float, unit: str) -> str:
    """Says whether the claimed value (or range) lies within the CI of each comparison."""
    claimed = f"{low:g}{unit}" if low == high else f"{low:g}-{high:g}{unit} range"
    inside = sum(1 for _, e in items if e.low <= high and e.high >= low)
    if len(items) == 1:
        return f"the claimed {claimed} lies {'within' if inside else 'outside'} the CI"
    return f"the claimed {claimed} lies within the CI in {inside} of {len(items)} comparisons"


def range_verdict(items: Sequence[tuple[str, Estimate]], low: float, high: float) -> str:
    return combine(judge(e, low, high) for _, e in items)


def direction_verdict(items: Sequence[tuple[str, Estimate]]) -> str:
    return combine(judge(e) for _, e in items)


def mixed_text(items: Sequence[tuple[str, Estimate]], low: float = 0.0, high: float = math.inf) -> str:
    """For a mixed verdict, how many comparisons hold, fail and stay undecided, and which ("; mixed:
    holds for 1 of 9 (...); fails for 3 of 9 (...); undecided for 5 of 9 (...)"); empty for any
    other verdict. Not collected as judged (the verdict already was)."""
    verdicts = [(label, judged_alone(e, low, high)) for label, e in items]
    if combine(v for _, v in verdicts) != "mixed":
        return ""
    return "; mixed: " + tally_text(verdicts)


def tally_text(verdicts: Sequence[tuple[str, str]]) -> str:
    """(label, verdict) pairs as how many of them hold, fail and stay undecided, naming each."""
    named = {"holds for": "supported", "fails for": "contradicted", "undecided for": "inconclusive"}
    parts = []
    for words, verdict in named.items():
        labels = [label for label, v in verdicts if v == verdict]
        if labels:
            parts.append(f"{words} {len(labels)} of {len(verdicts)} ({', '.join(labels)})")
    return "; ".join(parts)


def judged_alone(estimate: Estimate, low: float = 0.0, high: float = math.inf) -> str:
    """:func:`judge`'s verdict, not collected as judged (a detail beside a verdict already judged)."""
    token = _JUDGED.set(None)
    try:
        return judge(estimate, low, high)
    finally:
        _JUDGED.reset(token)


def negated(items: Sequence[tuple[str, Estimate]]) -> list[tuple[str, Estimate]]:
    """Each difference the other way round (reference − run)."""
    return [(label, linear_combination((-1.0,), (e,))) for label, e in items]


def budget_text(results: Results, runs: Iterable[str]) -> str:
    """The pretraining steps of the compared runs, and whether they were equal."""
    steps = results.tables["pretraining"].set_index("run")["trained_steps"]
    runs = list(dict.fromkeys(runs))
    if steps[runs].nunique() == 1:
        return f"{'both' if len(runs) == 2 else f'all {len(runs)}'} runs compared pretrained {int(steps[runs[0]]):,} steps"
    return "pretraining steps differ: " + ", ".join(f"{run} {int(steps[run]):,}" for run in runs)
