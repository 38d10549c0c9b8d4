"""budget_trend.csv: each headline contrast at every token budget measured."""

from pipeline.analysis.budget_trend import trend_table
from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import BUDGET_TREND_COLUMNS

register(
    ResultTable(
        name="budget_trend",
        description="per (task | family | minimal pairs, size, contrast, budget): MLM − CLM and each minus random init "
        "at every checkpoint's token count",
        columns=tuple(BUDGET_TREND_COLUMNS),
        needs=("learning_curves", "curve_comparison", "comparison", "minimal_pairs", "minimal_pairs_comparison"),
        build=lambda sources, built: trend_table(
            built["learning_curves"],
            built["curve_comparison"],
            built["comparison"],
            built["minimal_pairs"],
            built["minimal_pairs_comparison"],
            sources.pretraining,
            sources.confidence,
        ),
    )
)
