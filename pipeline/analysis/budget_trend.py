"""What more pretraining tokens would buy: each headline contrast (MLM − CLM, MLM − random
init, CLM − random init) at every token budget the learning-curve checkpoints measured, a
straight-line trend in log10(tokens), and the budget at which the trend says the interval
would exclude zero.

The points are measured (learning_curves.csv, curve_comparison.csv, minimal_pairs.csv: the
checkpoints of the headline runs, pooled over pretraining replicates like the final models);
the trend is a least-squares line through them, and ``tokens_to_decide`` extrapolates it
under one stated assumption: the interval keeps the half-width it has at the largest budget
measured (same seeds, similar variance). It is a planning number, not a result: the report
prints it beside the points it came from.

Random init is the untrained end of every run, so "pretrained − random" at a checkpoint is
the checkpoint's score minus the random-init arm's (Welch); the checkpoints of a WSD run are
taken before its decay, so they understate what a run *decayed* at that budget would score.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pipeline.analysis.contract import BUDGET_FIT_COLUMNS, BUDGET_TREND_COLUMNS, CLM_MINUS_RANDOM, MLM_MINUS_CLM, MLM_MINUS_RANDOM
from pipeline.analysis.stats import Estimate, ci_side, difference

MIN_BUDGETS = 3  # points a trend line is fitted through
FLAT = 1e-9  # points per decade below which a trend is flat
MAX_LOG10_TOKENS = 15  # beyond ~1,000x the study's 100B tokens an extrapolation means nothing
ZERO_SHOT = "zero-shot"


def tokens_per_step(pretraining: pd.DataFrame) -> dict[str, float]:
    steps = pretraining.set_index("run")
    return (steps["num_tokens"] / (steps["trained_steps"] - steps["first_step"])).to_dict()


def trend_point(level: str, name: str, size: str, contrast: str, step: int, tokens: float, effect: Estimate) -> dict[str, object]:
    return {
        "level": level,
        "name": name,
        "size": size,
        "contrast": contrast,
        "step": step,
        "tokens": tokens,
        **effect.columns("effect_"),
        "side": ci_side(effect),
    }


def finetuned_points(
    curves: pd.DataFrame, curve_comparison: pd.DataFrame, comparison: pd.DataFrame, rates: dict[str, float], confidence: float
) -> list[dict]:
    """Every fine-tuned contrast at every step where the headline runs both have a point."""
    points = []
    random = comparison.set_index(["level", "name", "size"])
    arms = curves.set_index(["level", "name", "size", "run", "step"])
    for _, gap in curve_comparison.iterrows():
        where = (gap["level"], gap["name"], gap["size"])
        tokens = gap["step"] * rates[gap["mlm_run"]]
        points.append(trend_point(*where, MLM_MINUS_CLM, gap["step"], tokens, Estimate.from_columns(gap, confidence, "difference_")))
        if where not in random.index or not random.loc[where, "random_run"]:
            continue
        random_score = Estimate.from_columns(random.loc[where], confidence, "random_")
        for contrast, run in ((MLM_MINUS_RANDOM, gap["mlm_run"]), (CLM_MINUS_RANDOM, gap["clm_run"])):
            score = Estimate.from_columns(arms.loc[(*where, run, gap["step"])], confidence, "test_")
            points.append(trend_point(*where, contrast, gap["step"], tokens, difference(score, random_score)))
    return points


def zero_shot_points(
    minimal_pairs: pd.DataFrame,
    minimal_pairs_comparison: pd.DataFrame,
    pretraining: pd.DataFrame,
    rates: dict[str, float],
    confidence: float,
) -> list[dict]:
    """Pretrained − random on all minimal pairs at every checkpoint and final model of the
    headline runs (each scored its own way), and MLM − CLM at the final models."""
    points = []
    budgets = pretraining.set_index("run")["trained_steps"]
    pooled = minimal_pairs[(minimal_pairs["kind"] == "all") & minimal_pairs["random_run"].notna()]
    for _, item in minimal_pairs_comparison[minimal_pairs_comparison["kind"] == "all"].iterrows():
        for contrast, run, method in (
            (MLM_MINUS_RANDOM, item["mlm_run"], item["mlm_method"]),
            (CLM_MINUS_RANDOM, item["clm_run"], item["clm_method"]),
        ):
            for _, point in pooled[(pooled["run"] == run) & (pooled["method"] == method)].iterrows():
                step = budgets[run] if pd.isna(point["step"]) else int(point["step"])
                effect = Estimate.from_columns(point, confidence, "minus_random_")
                points.append(trend_point(ZERO_SHOT, "minimal pairs", item["size"], contrast, step, step * rates[run], effect))
    return points


def fit_trend(points: pd.DataFrame, confidence: float) -> dict[str, object]:
    """The least-squares line effect = intercept + slope × log10(tokens) through ``points`` (one
    contrast), and where it says the interval would first exclude zero."""
    points = points.sort_values("tokens")
    final = points.iloc[-1]
    row = {"num_budgets": len(points), "final_tokens": final["tokens"], "final_side": final["side"]}
    half_width = (final["effect_high"] - final["effect_low"]) / 2
    if len(points) < MIN_BUDGETS or math.isnan(half_width):
        return {**row, "slope_per_decade": math.nan, "intercept": math.nan, "tokens_to_decide": math.nan, "trend": "too few budgets to fit"}
    slope, intercept = np.polyfit(np.log10(points["tokens"].to_numpy(float)), points["effect_mean"].to_numpy(float), 1)
    row.update({"slope_per_decade": float(slope), "intercept": float(intercept), "tokens_to_decide": math.nan})
    if final["side"] in ("above", "below"):
        return {**row, "trend": "decided at the largest budget measured"}
    # effect(x) = intercept + slope x reaches +half_width (rising) or −half_width (falling).
    target = math.inf if abs(slope) < FLAT else (math.copysign(half_width, slope) - intercept) / slope
    if target > MAX_LOG10_TOKENS:
        return {**row, "trend": f"flat: no budget below 10^{MAX_LOG10_TOKENS} tokens decides it"}
    if target <= math.log10(final["tokens"]):
        return {**row, "trend": "the line already clears the interval: more seeds, not more tokens"}
    return {**row, "tokens_to_decide": float(10**target), "trend": f"extrapolated (half-width {half_width:.1f} held fixed)"}


def trend_table(
    curves: pd.DataFrame,
    curve_comparison: pd.DataFrame,
    comparison: pd.DataFrame,
    minimal_pairs: pd.DataFrame,
    minimal_pairs_comparison: pd.DataFrame,
    pretraining: pd.DataFrame,
    confidence: float,
) -> pd.DataFrame:
    """budget_trend.csv: every measured point."""
    rates = tokens_per_step(pretraining)
    return pd.DataFrame(
        finetuned_points(curves, curve_comparison, comparison, rates, confidence)
        + zero_shot_points(minimal_pairs, minimal_pairs_comparison, pretraining, rates, confidence),
        columns=BUDGET_TREND_COLUMNS,
    )


def fit_table(points: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """budget_fit.csv: one trend line per contrast through budget_trend.csv's points."""
    keys = ["level", "name", "size", "contrast"]
    fits = [{**dict(zip(keys, key)), **fit_trend(group, confidence)} for key, group in points.groupby(keys, sort=False)]
    return pd.DataFrame(fits, columns=BUDGET_FIT_COLUMNS)
