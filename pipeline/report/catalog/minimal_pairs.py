"""minimal_pairs.csv: each model's share of zero-shot minimal pairs won, and its gain over random init."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, Sources, register
from pipeline.report.contract import MINIMAL_PAIRS_COLUMNS
from pipeline.report.tables import Table
from pipeline.report.zero_shot import minimal_pairs_table
from pipeline.report.zero_shot_tables import minimal_pairs_table as minimal_pairs_display


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    kinds = {
        **dict(zip(sources.outside_grid["run"], sources.outside_grid["objective_kind"])),
        **sources.pretraining.set_index("run")["objective_kind"].to_dict(),
    }
    return minimal_pairs_table(sources.pair_outcomes, kinds, sources.confidence)


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [minimal_pairs_display(frames["minimal_pairs"], confidence)] if len(frames["minimal_pairs"]) else []


register(
    ResultTable(
        name="minimal_pairs",
        description="per (model, scoring method, kind of pair): share of minimal pairs won, and the paired gain over random init",
        columns=tuple(MINIMAL_PAIRS_COLUMNS),
        needs=(),
        build=build,
        displays=(Display("zero-shot", 1, display),),
    )
)
