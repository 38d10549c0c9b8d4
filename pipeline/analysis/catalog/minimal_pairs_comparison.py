"""minimal_pairs_comparison.csv: MLM − CLM on the zero-shot minimal pairs."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import MINIMAL_PAIRS_COMPARISON_COLUMNS
from pipeline.analysis.zero_shot import minimal_pairs_comparison

register(
    ResultTable(
        name="minimal_pairs_comparison",
        description="per (size, kind): MLM − CLM on minimal pairs",
        columns=tuple(MINIMAL_PAIRS_COMPARISON_COLUMNS),
        needs=("minimal_pairs",),
        build=lambda sources, built: minimal_pairs_comparison(sources.pair_outcomes, built["minimal_pairs"], sources.confidence),
        displays=("minimal_pairs_comparison",),
    )
)
