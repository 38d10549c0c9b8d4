"""objectives.csv: every pretrained run in the report section that shows it, against the
CLM and the MLM run of its size or budget. Its sections are drawn by
:mod:`pipeline.report.objective_sections`, one report section each."""

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.catalog.base import ResultTable, Sources, register
from pipeline.analysis.comparisons import by_size, objectives_table
from pipeline.analysis.contract import OBJECTIVES_COLUMNS
from pipeline.analysis.replicates import arm_names
from pipeline.analysis.runs import reference_runs, run_placements


def build(sources: Sources, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    # An arm's pooled row carries replicate 0's name, so the sections place replicate 0 only.
    pretraining = sources.pretraining
    first_replicates = pretraining[arm_names(pretraining["run_name"]) == pretraining["run_name"]]
    objectives = objectives_table(
        built["scores"],
        built["family_scores"],
        run_placements(first_replicates, sources.objective_params),
        reference_runs(first_replicates),
        sources.confidence,
    )
    ordered = by_size(objectives, pretraining, ["section", "level", "name"], ["trained_steps", "clm_share", "mask_ratio", "run"])
    return ordered.astype({"section": str})


register(
    ResultTable(
        name="objectives",
        description="per (task | family, pretrained run, report section): score, Δ vs the CLM and the MLM run of its size "
        "or step budget (Welch), masking, CLM share",
        columns=tuple(OBJECTIVES_COLUMNS),
        needs=("scores", "family_scores"),
        build=build,
    )
)
