"""The report's zero-shot tables: minimal pairs won by every model, and MLM − CLM on them."""

from __future__ import annotations

import math

import pandas as pd

from pipeline.analysis.contract import ALL_KINDS
from pipeline.analysis.text import detectable_text, interval_text, plus_minus_text
from pipeline.report.tables import Cell, Table, comparison_cells, key, num, row

METHOD_NAMES = {"sentence_log_likelihood": "log-likelihood", "pseudo_log_likelihood": "PLL (within-word l2r)"}


def variance_note(pretraining_seeds: float) -> str:
    """What the intervals of a zero-shot table include."""
    if pretraining_seeds > 1:
        return (
            f"Intervals are over {pretraining_seeds:g} pretraining seeds per arm (each seed's model scored on every pair, its gain "
            "measured against the random initialisation it started from): they include pretraining-seed variance."
        )
    return (
        "Intervals are over minimal pairs (paired where two models are compared): they hold the one pretraining run and the "
        "one initialisation behind each model fixed, so they say how surely this model beats that one on such sentences, "
        "not how surely another pretraining seed would. A standard error is at least the one with pseudo-counts added (Agresti "
        "and Coull's two wins and two losses; Agresti and Min's half pair per outcome for a difference), so a kind of a few "
        "pairs all won is not reported as certain."
    )


def step_text(step: float) -> str:
    return "final" if math.isnan(step) else f"step {int(step):,}"


def kind_columns(minimal_pairs: pd.DataFrame) -> list[str]:
    kinds = sorted(set(minimal_pairs["kind"]) - {ALL_KINDS})
    return [ALL_KINDS, *kinds]


def minimal_pairs_table(minimal_pairs: pd.DataFrame, confidence: float) -> Table:
    """One row per (model, method): pairs won, all kinds pooled then each kind, and the gain over random init."""
    level = f"{100 * confidence:g}% CI"
    kinds = kind_columns(minimal_pairs)
    sizes = {kind: int(minimal_pairs.loc[minimal_pairs["kind"] == kind, "num_pairs"].iloc[0]) for kind in kinds}
    rows = []
    for (run, step, method), model in minimal_pairs.groupby(["run", "step", "method"], sort=False, dropna=False):
        by_kind = model.set_index("kind")
        pooled = by_kind.loc[ALL_KINDS]
        cells = [
            num(plus_minus_text(by_kind.loc[k, "accuracy_mean"], by_kind.loc[k, "accuracy_low"], by_kind.loc[k, "accuracy_high"]))
            if k in by_kind.index
            else num("—")
            for k in kinds
        ]
        gain = num(interval_text(pooled["minus_random_mean"], pooled["minus_random_low"], pooled["minus_random_high"], signed=True))
        verdict = pooled["versus_random"] if isinstance(pooled["versus_random"], str) else "—"
        rows.append(
            row(
                key(run),
                step_text(step),
                METHOD_NAMES.get(method, method),
                *cells,
                gain,
                Cell(verdict, f"versus-{verdict.replace(' ', '-')}"),
            )
        )
    return Table(
        f"Minimal pairs won (%), ± {level}; a tie counts half, so a scorer that cannot tell the sentences apart gets 50",
        (
            "Model",
            "Checkpoint",
            "Score",
            *(f"{k.replace('_', ' ')} ({sizes[k]})" for k in kinds),
            f"All − random init [{level}, paired]",
            "vs random",
        ),
        tuple(rows),
        note=variance_note(minimal_pairs["pretraining_seeds"].max()),
    )


def minimal_pairs_comparison_table(comparison: pd.DataFrame, confidence: float) -> Table:
    """Per (size, kind): MLM, CLM, MLM − CLM paired over pairs, and the winner."""
    level = f"{100 * confidence:g}% CI"
    rows = [
        row(
            key(item["size"]),
            key(item["kind"].replace("_", " ")),
            num(f"{item['num_pairs']:,}"),
            *comparison_cells(item),
            num(detectable_text(item["difference_mde"], item["difference_to_decide"], item["decide_unit"])),
        )
        for _, item in comparison.iterrows()
    ]
    return Table(
        f"Minimal pairs: MLM (pseudo-log-likelihood) against CLM (log-likelihood), pairs won (%) ± {level}",
        (
            "Size",
            "Kind",
            "Pairs",
            "MLM",
            "CLM",
            f"MLM − CLM [{level}]",
            "Winner",
            "Detectable at 80% power (pairs or seeds to decide a tie)",
        ),
        tuple(rows),
        note="Each model is scored the way its attention reads text, so the gap mixes the objective with the scoring rule; "
        "the random-init rows of the table above show what each rule gives a model that learned nothing. "
        + variance_note(comparison["pretraining_seeds"].max() if len(comparison) else 1),
    )
