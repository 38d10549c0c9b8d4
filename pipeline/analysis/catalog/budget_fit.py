"""budget_fit.csv: a trend line in log10(tokens) per headline contrast, and the budget it says would decide."""

from pipeline.analysis.budget_trend import fit_table
from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import BUDGET_FIT_COLUMNS

register(
    ResultTable(
        name="budget_fit",
        description=(
            "per (task | family | minimal pairs, size, contrast): a trend line in log10(tokens) and the budget it says would decide"
        ),
        columns=tuple(BUDGET_FIT_COLUMNS),
        needs=("budget_trend",),
        build=lambda sources, built: fit_table(built["budget_trend"], sources.confidence),
        displays=("budget_fit",),
    )
)
