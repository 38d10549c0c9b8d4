"""baselines.csv: what pretraining bought over the majority class, a bag of words and random init."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.comparisons import baseline_table, by_size
from pipeline.analysis.contract import BASELINE_COLUMNS

register(
    ResultTable(
        name="baselines",
        description="per (task, pretrained run): majority class, bag of words, random init, gain",
        columns=tuple(BASELINE_COLUMNS),
        needs=("scores",),
        build=lambda sources, built: by_size(
            baseline_table(built["scores"], sources.tasks, sources.bag_of_words, sources.confidence), sources.pretraining, ["task"], ["run"]
        ),
        displays=("baselines",),
    )
)
