"""Claims about tuning the fine-tuning learning rate, judged on lr_sensitivity.csv: how
many LR points are as good as the best, and how much the score moves over the grid, for
the CLM and MLM runs that comparison.csv pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from pipeline.analysis.claims.registry import register
from pipeline.analysis.claims.verdicts import Verdict, fit_text, judge, percent, scale
from pipeline.analysis.contract import Results
from pipeline.analysis.stats import mean_interval
from pipeline.analysis.text import interval_text


@dataclass(frozen=True)
class TuningIterations:
    """CLM-pretrained models need ``claimed_fewer_percent`` fewer tuning iterations on ``families``."""

    families: tuple[str, ...]
    claimed_fewer_percent: float


@dataclass(frozen=True)
class LrSensitivity:
    """CLM models are ``claimed_less_sensitive_percent`` less sensitive to the LR."""

    claimed_less_sensitive_percent: float


# Scores of one LR per model (the study's published tables) say nothing about tuning the LR.
NO_GRID = Verdict("not measured", "no run has fine-tuning scores over an LR grid", "CLM and MLM runs fine-tuned over an LR grid")


def paired_runs(results: Results, column: str, families: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (task, size) compared in comparison.csv: ``column`` of lr_sensitivity.csv
    for its CLM and its MLM run."""
    pairs = results.tables["comparison"][results.tables["comparison"]["level"] == "task"]
    if families is not None:
        pairs = pairs[pairs["family"].isin(families)]
    values = results.tables["lr_sensitivity"].set_index(["task", "run"])[column]
    return pd.DataFrame(
        {
            "label": [f"{t} {s}" for t, s in zip(pairs["name"], pairs["size"])],
            "clm": [values[(t, r)] for t, r in zip(pairs["name"], pairs["clm_run"])],
            "mlm": [values[(t, r)] for t, r in zip(pairs["name"], pairs["mlm_run"])],
        }
    )


@register("tuning_iterations", TuningIterations, reads="lr_sensitivity.csv, comparison.csv")
def check_tuning_iterations(results: Results, params: TuningIterations) -> Verdict:
    """CLM needs fewer tuning iterations on ``families``.

    Tuning iterations are modelled as the expected number of random LR draws until one
    is within 1 point of the best: grid size / near-best count. CLM's saving per
    (task, size) is then 1 − near_mlm / near_clm. Only the direction is judged: on
    a grid of a few LRs the saving per pair takes a handful of values (0%, 33%, 50%,
    67%, ... on three points), so a CI over identical pairs has zero width and would
    "exclude" a claimed percentage without the data saying anything about it.
    """
    if results.tables["lr_sensitivity"].empty:
        return NO_GRID
    pairs = paired_runs(results, "num_near_best", families=params.families)
    if len(pairs) < 2:
        return Verdict(
            "not measured",
            f"{len(pairs)} ({'/'.join(params.families)} task, size) pairs with both CLM and MLM runs; a CI needs two",
            f"CLM and MLM runs on at least two ({'/'.join(params.families)} task, size) pairs",
        )
    reductions = 100.0 * (1.0 - pairs["mlm"] / pairs["clm"])
    estimate = mean_interval(reductions.tolist(), results.confidence)
    counts = ", ".join(f"{row.label} {row.clm} vs {row.mlm}" for row in pairs.itertuples())
    grid_size = int(results.tables["lr_sensitivity"]["num_learning_rates"].max())
    evidence = (
        f"LR points (of {grid_size}) within 1 point of the best validation score, CLM vs MLM: {counts}; "
        f"CLM's expected saving in random-search iterations {interval_text(estimate.mean, estimate.low, estimate.high, signed=True)}% "
        f"({percent(results.confidence)} over {len(pairs)} pairs) {scale(results)}; only the direction is judged, "
        f"as a {grid_size}-point grid cannot resolve the claimed {params.claimed_fewer_percent:g}%."
    )
    return Verdict(judge(estimate), evidence)


@register("lr_sensitivity", LrSensitivity, reads="lr_sensitivity.csv, comparison.csv")
def check_lr_sensitivity(results: Results, params: LrSensitivity) -> Verdict:
    """CLM less sensitive to the LR by a claimed percentage: 1 − spread_clm / spread_mlm per
    (task, size), averaged over pairs with a t-interval and judged against the claim."""
    if results.tables["lr_sensitivity"].empty:
        return NO_GRID
    pairs = paired_runs(results, "test_spread")
    usable = pairs[pairs["mlm"] > 0]
    if len(usable) < 2:
        return Verdict(
            "not measured",
            f"{len(usable)} (task, size) pairs with a nonzero MLM spread; a CI needs two",
            "CLM and MLM runs on at least two (task, size) pairs with an LR grid",
        )
    reductions = 100.0 * (1.0 - usable["clm"] / usable["mlm"])
    estimate = mean_interval(reductions.tolist(), results.confidence)
    claimed = params.claimed_less_sensitive_percent
    verdict, fit = judge(estimate, claimed, claimed), fit_text([("", estimate)], claimed, claimed, "%")
    spreads = ", ".join(f"{row.label} {row.clm:.1f} vs {row.mlm:.1f}" for row in usable.itertuples())
    evidence = (
        f"Spread (max − min) of the seed-mean test score over the LR grid, CLM vs MLM: {spreads} points; "
        f"CLM's relative reduction {interval_text(estimate.mean, estimate.low, estimate.high, signed=True)}% "
        f"({percent(results.confidence)} over {len(usable)} pairs) {scale(results)}; {fit}."
    )
    return Verdict(verdict, evidence)
