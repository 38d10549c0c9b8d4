"""minimal_pairs.csv: each model's share of zero-shot minimal pairs won, and its gain over random init."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, Sources, register
from pipeline.analysis.contract import MINIMAL_PAIRS_COLUMNS
from pipeline.analysis.zero_shot import minimal_pairs_table


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    kinds = {
        **dict(zip(sources.outside_grid["run"], sources.outside_grid["objective_kind"])),
        **sources.pretraining.set_index("run")["objective_kind"].to_dict(),
    }
    return minimal_pairs_table(sources.pair_outcomes, kinds, sources.confidence)


register(
    ResultTable(
        name="minimal_pairs",
        description="per (model, scoring method, kind of pair): share of minimal pairs won, and the paired gain over random init",
        columns=tuple(MINIMAL_PAIRS_COLUMNS),
        needs=(),
        build=build,
        displays=("minimal_pairs",),
    )
)
