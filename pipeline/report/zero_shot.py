"""The zero-shot family's tables: minimal pairs won per model, against its random-init twin,
and MLM against CLM.

Every interval here is over *pairs*: a t-interval of the per-pair outcomes (in points),
and for a difference of two models the interval of their per-pair differences (a paired
comparison, since both read the same pairs). It is conditional on the one pretraining run
and the one initialisation behind each model; the report says so beside it.
"""

from __future__ import annotations

import math

import pandas as pd

from pipeline.config import RANDOM_INIT
from pipeline.report.comparisons import power_columns
from pipeline.report.contract import MINIMAL_PAIRS_COLUMNS, MINIMAL_PAIRS_COMPARISON_COLUMNS, VERSUS, WINNER
from pipeline.report.stats import Estimate, ci_side, mean_interval, minimum_detectable_effect

ALL_KINDS = "all"


def by_kind(outcomes: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(kind, its rows) for every kind, then every pair pooled as ``all``."""
    return [(kind, rows) for kind, rows in outcomes.groupby("kind", sort=True)] + [(ALL_KINDS, outcomes)]


def paired_difference(first: pd.DataFrame, second: pd.DataFrame, confidence: float) -> Estimate:
    """mean over pairs of (first − second) outcome, in points, with its t-interval."""
    joined = first.set_index("pair_id")["outcome"] - second.set_index("pair_id")["outcome"]
    return mean_interval(100.0 * joined.to_numpy(), confidence)


def accuracy(pairs: pd.DataFrame, confidence: float) -> Estimate:
    """Share of ``pairs`` won, in points, with its t-interval over pairs."""
    return mean_interval(100.0 * pairs["outcome"].to_numpy(), confidence)


def final_model(outcomes: pd.DataFrame, run: str, method: str | None = None) -> pd.DataFrame:
    rows = outcomes[(outcomes["run"] == run) & outcomes["step"].isna()]
    return rows if method is None else rows[rows["method"] == method]


def minimal_pairs_table(outcomes: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (model, method, kind): accuracy and the paired gain over random init of its size."""
    kinds = pretraining.set_index("run")["objective_kind"].to_dict()
    rows = []
    for (run, step, method), model in outcomes.groupby(["run", "step", "method"], sort=True, dropna=False):
        first = model.iloc[0]
        random_run = f"{RANDOM_INIT}-{first['size']}"
        twin = final_model(outcomes, random_run, method) if first["run_name"] != RANDOM_INIT else pd.DataFrame()
        for kind, pairs in by_kind(model):
            gain = Estimate.undefined(confidence)
            if len(twin):
                gain = paired_difference(pairs, twin if kind == ALL_KINDS else twin[twin["kind"] == kind], confidence)
            rows.append({
                "run": run, "run_name": first["run_name"], "objective_kind": kinds.get(run, RANDOM_INIT), "size": first["size"],
                "step": step, "method": method, "kind": kind, "num_pairs": len(pairs),
                **accuracy(pairs, confidence).columns("accuracy_"),
                "random_run": random_run if len(twin) else None, **gain.columns("minus_random_"),
                "versus_random": VERSUS[ci_side(gain)] if len(twin) else None, "minus_random_mde": minimum_detectable_effect(gain),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=MINIMAL_PAIRS_COLUMNS)


def minimal_pairs_comparison(outcomes: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (size, kind): the final ``mlm`` and ``clm`` models, each scored its own way, MLM − CLM paired."""
    rows = []
    for size in sorted(outcomes["size"].unique()):
        mlm, clm = final_model(outcomes, f"mlm-{size}"), final_model(outcomes, f"clm-{size}")
        if mlm.empty or clm.empty:
            continue
        mlm_method, clm_method = mlm["method"].iloc[0], clm["method"].iloc[0]
        for kind, mlm_pairs in by_kind(mlm):
            clm_pairs = clm if kind == ALL_KINDS else clm[clm["kind"] == kind]
            gap = paired_difference(mlm_pairs, clm_pairs, confidence)
            rows.append({
                "size": size, "kind": kind, "num_pairs": len(mlm_pairs), "mlm_run": f"mlm-{size}", "mlm_method": mlm_method,
                "clm_run": f"clm-{size}", "clm_method": clm_method, **accuracy(mlm_pairs, confidence).columns("mlm_"),
                **accuracy(clm_pairs, confidence).columns("clm_"), **gap.columns("difference_"),
                "winner": WINNER[ci_side(gap)] if not math.isnan(gap.mean) else None, **power_columns(gap, len(mlm_pairs), "pairs"),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=MINIMAL_PAIRS_COMPARISON_COLUMNS)
