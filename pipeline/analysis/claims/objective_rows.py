"""Picking rows of objectives.csv for the claims about the objective zoo: the runs a report
section shows, the from-scratch runs of one objective kind, and their differences from the
CLM or MLM reference run of their size or step budget."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.analysis.claims.verdicts import budget_text, estimate_of
from pipeline.analysis.contract import Results
from pipeline.analysis.stats import Estimate

RULE_TOLERANCE = 1e-9


def placed(results: Results, section: str) -> pd.DataFrame:
    """Family-average rows of objectives.csv shown in ``section`` (repeated references included)."""
    frame = results.tables["objectives"]
    return frame[(frame["level"] == "family") & (frame["section"] == section)]


def own_rows(results: Results, kind: str) -> pd.DataFrame:
    """Family-average rows of the from-scratch runs of objective kind ``kind``, once each."""
    frame = results.tables["objectives"]
    return frame[(frame["level"] == "family") & ~frame["repeated"] & (frame["study"] == "objectives") & (frame["objective_kind"] == kind)]


def versus_reference(results: Results, rows: pd.DataFrame, kind: str) -> list[tuple[str, Estimate]]:
    """(family size run, run − the reference ``kind`` run of its size) for each row that has one."""
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    return [(f"{r['family']} {r['size']} {r['run_name']}", estimate_of(results, r, f"minus_{kind}_")) for _, r in usable.iterrows()]


def compared_runs(rows: pd.DataFrame, kind: str) -> list[str]:
    """The rows' runs and their ``kind`` reference runs."""
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    return [*usable["run"], *usable[f"{kind}_run"]]


def matched_budget_text(results: Results, rows: pd.DataFrame, kind: str) -> str:
    """:func:`.verdicts.budget_text`, unless the rows span several step budgets and each is
    compared with a ``kind`` reference of its own budget; then that, with the budgets."""
    steps = results.tables["pretraining"].set_index("run")["trained_steps"]
    usable = rows[rows[f"minus_{kind}_mean"].notna()]
    own, reference = usable["run"].map(steps), usable[f"{kind}_run"].map(steps)
    if own.nunique() == 1 or not (own == reference).all():
        return budget_text(results, compared_runs(rows, kind))
    budgets = ", ".join(f"{int(b):,}" for b in sorted(own.unique()))
    return f"each run is compared with the {kind.upper()} run of its own step budget ({budgets} steps)"


def has_rule(rows: pd.DataFrame, rule: tuple[float, float]) -> pd.Series:
    """Rows whose ([MASK], random-token) replacement fractions are ``rule``. An unrecorded rule
    (NaN: the study's, which its tables do not state) is the same as another unrecorded one, as
    the study's MLM runs vary their masking ratio alone, and differs from every stated rule."""
    fractions = rows[["mask_token_fraction", "random_token_fraction"]].to_numpy(dtype=float)
    return pd.Series(np.isclose(fractions, rule, rtol=0, atol=RULE_TOLERANCE, equal_nan=True).all(axis=1), index=rows.index)
