"""The zero-shot family's tables: minimal pairs won per model, against its random-init twin,
and MLM against CLM.

For one pretraining run per arm, every interval is over *pairs*: the share of pairs won
(in points), and for a difference of two models the mean of their per-pair differences (a
paired comparison, since both read the same pairs), each ± t(pairs − 1) standard errors. It is
conditional on the one pretraining run and the one initialisation behind each model. A pair's
outcome is a win, a loss or a tie (1, 0, ½), so a sample can have no spread at all (a model
winning all 14 pairs of a kind, two models winning the same ones), and the plain standard
error, zero, would claim a certainty that 14 pairs do not give: where it is larger, the
standard error with pseudo-counts added is taken instead, as Agresti and Coull (one share:
two wins and two losses) and Agresti and Min (a paired difference: half a pair to each of the
four outcomes) compute it. An interval is never narrower than the plain t-interval, and a
large sample's widens little (under 3% at 399 pairs won 94% of the time).

With several pretraining replicates per arm (pipeline/config/replicates.py), each replicate
is scored as above against *its own* random-init twin (same initial weights), and the arm's
row pools its replicates: the mean accuracy and the mean gain over random with t-intervals
over replicates, MLM − CLM with Welch's interval over replicate accuracies. Those intervals
include pretraining-seed variance (``pretraining_seeds`` says how many).
"""

from __future__ import annotations

import math

import pandas as pd

from pipeline.analysis.comparisons import power_columns
from pipeline.analysis.contract import ALL_KINDS, MINIMAL_PAIRS_COLUMNS, MINIMAL_PAIRS_COMPARISON_COLUMNS, VERSUS, WINNER
from pipeline.analysis.replicates import PRETRAINING_SEEDS, pool_replicates
from pipeline.analysis.stats import Estimate, ci_side, difference, mean_interval, minimum_detectable_effect
from pipeline.config import RANDOM_INIT
from pipeline.config.replicates import arm_of, replicate_name

MODEL_KEYS = ["size", "step", "method", "kind"]


def by_kind(outcomes: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(kind, its rows) for every kind, then every pair pooled as ``all``."""
    return [(kind, rows) for kind, rows in outcomes.groupby("kind", sort=True)] + [(ALL_KINDS, outcomes)]


def paired_difference(first: pd.DataFrame, second: pd.DataFrame, confidence: float) -> Estimate:
    """Mean over pairs of (first − second) outcome, in points, ± t(pairs − 1) standard errors: the differences' own,
    or, where larger, Agresti and Min's, from the pairs where first did better (``ahead``: their differences summed)
    and where second did (``behind``), half a pair added to each of the four outcomes (both win, first alone, second
    alone, both lose)."""
    differences = (first.set_index("pair_id")["outcome"] - second.set_index("pair_id")["outcome"]).to_numpy(dtype=float)
    count = len(differences)
    ahead, behind = differences.clip(min=0).sum() + 0.5, (-differences).clip(min=0).sum() + 0.5
    variance = (ahead + behind - (ahead - behind) ** 2 / (count + 2)) / (count + 2) ** 2
    return at_least(mean_interval(100.0 * differences, confidence), 100.0 * math.sqrt(variance))


def accuracy(pairs: pd.DataFrame, confidence: float) -> Estimate:
    """Share of ``pairs`` won, in points, ± t(pairs − 1) standard errors: the outcomes' own, or, where larger, Agresti
    and Coull's, at the share with two wins and two losses added."""
    outcomes = pairs["outcome"].to_numpy(dtype=float)
    adjusted = (outcomes.sum() + 2) / (len(outcomes) + 4)
    return at_least(mean_interval(100.0 * outcomes, confidence), 100.0 * math.sqrt(adjusted * (1 - adjusted) / (len(outcomes) + 4)))


def at_least(estimate: Estimate, std_error: float) -> Estimate:
    """``estimate`` with its standard error raised to ``std_error`` where it is smaller: the pseudo-counts keep a sample
    without spread from an interval of zero width, and never make a sample surer than its own spread does. A single
    pair keeps its undefined interval."""
    if math.isnan(estimate.std_error):
        return estimate
    return Estimate(estimate.mean, max(estimate.std_error, std_error), estimate.df, estimate.confidence)


def final_model(outcomes: pd.DataFrame, run: str, method: str | None = None) -> pd.DataFrame:
    rows = outcomes[(outcomes["run"] == run) & outcomes["step"].isna()]
    return rows if method is None else rows[rows["method"] == method]


def random_twin(run_name: str, size: str) -> str:
    """The untrained weights a run started from: random init of its size and pretraining seed."""
    return f"{replicate_name(RANDOM_INIT, arm_of(run_name)[1])}-{size}"


def versus_random_columns(gain: Estimate, twin: str | None) -> dict[str, object]:
    return {
        "random_run": twin,
        **gain.columns("minus_random_"),
        "versus_random": VERSUS[ci_side(gain)] if twin else None,
        "minus_random_mde": minimum_detectable_effect(gain),
    }


def run_rows(outcomes: pd.DataFrame, kinds: dict[str, str], confidence: float) -> pd.DataFrame:
    """Per (model, method, kind), every pretraining replicate apart: accuracy and the paired
    gain over its random-init twin, intervals over pairs. ``kinds``: each model's objective
    kind (random init has none)."""
    rows = []
    for (run, step, method), model in outcomes.groupby(["run", "step", "method"], sort=True, dropna=False):
        first = model.iloc[0]
        twin_run = random_twin(first["run_name"], first["size"])
        twin = final_model(outcomes, twin_run, method) if arm_of(first["run_name"])[0] != RANDOM_INIT else pd.DataFrame()
        for kind, pairs in by_kind(model):
            gain = Estimate.undefined(confidence)
            if len(twin):
                gain = paired_difference(pairs, twin if kind == ALL_KINDS else twin[twin["kind"] == kind], confidence)
            rows.append(
                {
                    "run": run,
                    "run_name": first["run_name"],
                    "objective_kind": kinds.get(run, RANDOM_INIT),
                    "size": first["size"],
                    "step": step,
                    "method": method,
                    "kind": kind,
                    "num_pairs": len(pairs),
                    **accuracy(pairs, confidence).columns("accuracy_"),
                    **versus_random_columns(gain, twin_run if len(twin) else None),
                }
            )
    return pd.DataFrame(rows, columns=[*MINIMAL_PAIRS_COLUMNS[:-1]])


def zero_shot_arm(replicates: pd.DataFrame, confidence: float) -> dict[str, object]:
    """A zero-shot arm's pooled columns: accuracy and gain over random init, each a t-interval
    over its replicates' values."""
    has_twin = replicates["random_run"].notna().all()
    gain = mean_interval(replicates["minus_random_mean"].to_numpy(), confidence) if has_twin else Estimate.undefined(confidence)
    return {
        **mean_interval(replicates["accuracy_mean"].to_numpy(), confidence).columns("accuracy_"),
        **versus_random_columns(gain, " ".join(replicates["random_run"]) if has_twin else None),
    }


def minimal_pairs_table(outcomes: pd.DataFrame, kinds: dict[str, str], confidence: float) -> pd.DataFrame:
    """Per (arm, method, kind): accuracy and gain over random init, a single run's over pairs,
    an arm of several pretraining replicates pooled over them. ``kinds``: run -> objective kind
    of every model but random init (pretrained runs and outside models)."""
    per_run = run_rows(outcomes, kinds, confidence)
    if per_run.empty:
        return pd.DataFrame(columns=MINIMAL_PAIRS_COLUMNS)
    pooled = pool_replicates(per_run, [key for key in MODEL_KEYS if key != "size"], confidence, zero_shot_arm)
    # A checkpoint's step stays an integer beside the final models' empty one (not 10.0).
    return pooled[MINIMAL_PAIRS_COLUMNS].astype({"step": "Int64"})


def minimal_pairs_comparison(outcomes: pd.DataFrame, table: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (size, kind): the final ``mlm`` and ``clm`` arms, each scored its own way, MLM − CLM:
    paired over pairs for one run per arm, Welch over replicate accuracies for several."""
    rows = []
    finals = table[table["step"].isna()]
    for size in sorted(outcomes["size"].unique()):
        mlm, clm = final_model(outcomes, f"mlm-{size}"), final_model(outcomes, f"clm-{size}")
        if mlm.empty or clm.empty:
            continue
        mlm_method, clm_method = mlm["method"].iloc[0], clm["method"].iloc[0]
        arms = {
            name: finals[(finals["run"] == f"{name}-{size}") & (finals["method"] == method)].set_index("kind")
            for name, method in (("mlm", mlm_method), ("clm", clm_method))
        }
        seeds = int(min(arms["mlm"][PRETRAINING_SEEDS].min(), arms["clm"][PRETRAINING_SEEDS].min()))
        for kind, mlm_pairs in by_kind(mlm):
            if seeds > 1:
                mlm_score, clm_score = (Estimate.from_columns(arms[name].loc[kind], confidence, "accuracy_") for name in ("mlm", "clm"))
                gap, replicates, unit = difference(mlm_score, clm_score), seeds, "seeds"
            else:
                clm_pairs = clm if kind == ALL_KINDS else clm[clm["kind"] == kind]
                mlm_score, clm_score = accuracy(mlm_pairs, confidence), accuracy(clm_pairs, confidence)
                gap, replicates, unit = paired_difference(mlm_pairs, clm_pairs, confidence), len(mlm_pairs), "pairs"
            power = power_columns(gap, replicates, unit)
            rows.append(
                {
                    "size": size,
                    "kind": kind,
                    "num_pairs": len(mlm_pairs),
                    "mlm_run": f"mlm-{size}",
                    "mlm_method": mlm_method,
                    "clm_run": f"clm-{size}",
                    "clm_method": clm_method,
                    **mlm_score.columns("mlm_"),
                    **clm_score.columns("clm_"),
                    **gap.columns("difference_"),
                    "winner": WINNER[ci_side(gap)] if not math.isnan(gap.mean) else None,
                    "difference_mde": power["difference_mde"],
                    "difference_to_decide": power[f"difference_{unit}_to_decide"],
                    "decide_unit": unit,
                    PRETRAINING_SEEDS: seeds,
                }
            )
    return pd.DataFrame(rows, columns=MINIMAL_PAIRS_COMPARISON_COLUMNS)
