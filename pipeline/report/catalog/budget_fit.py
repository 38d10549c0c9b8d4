"""budget_fit.csv: a trend line in log10(tokens) per headline contrast, and the budget it says would decide."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.budget_trend import fit_table
from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.contract import BUDGET_FIT_COLUMNS
from pipeline.report.evidence_tables import budget_fit_table
from pipeline.report.tables import Table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    fit = frames["budget_fit"]
    return [budget_fit_table(fit, frames["budget_trend"], confidence)] if len(fit) else []


register(
    ResultTable(
        name="budget_fit",
        description=(
            "per (task | family | minimal pairs, size, contrast): a trend line in log10(tokens) and the budget it says would decide"
        ),
        columns=tuple(BUDGET_FIT_COLUMNS),
        needs=("budget_trend",),
        build=lambda sources, built: fit_table(built["budget_trend"], sources.confidence),
        displays=(
            Display(
                "evidence",
                1,
                display,
                empty="No token-budget trend: the config fine-tunes no learning-curve checkpoints of both headline runs.",
            ),
        ),
    )
)
