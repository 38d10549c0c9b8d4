"""baselines.csv: what pretraining bought over the majority class, a bag of words and random init."""

from collections.abc import Mapping

import pandas as pd

from pipeline.report.catalog.base import Display, ResultTable, register
from pipeline.report.comparisons import baseline_table, by_size
from pipeline.report.contract import BASELINE_COLUMNS
from pipeline.report.tables import Table, baselines_table


def display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    return [baselines_table(frames["baselines"])]


register(
    ResultTable(
        name="baselines",
        description="per (task, pretrained run): majority class, bag of words, random init, gain",
        columns=tuple(BASELINE_COLUMNS),
        needs=("scores",),
        build=lambda sources, built: by_size(
            baseline_table(built["scores"], sources.tasks, sources.bag_of_words, sources.confidence), sources.pretraining, ["task"], ["run"]
        ),
        displays=(Display("baselines", 0, display),),
    )
)
