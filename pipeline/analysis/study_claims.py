"""The claims checked against the study's own released results: which write-up claims the
study itself supports, beside what this run finds.

The study's fine-tuning grid (EncodEval's ``results/``, read by :mod:`.encodeval`) goes
through this harness's own aggregate protocol and claim checks, as if its headline models
were runs here: ``<size>-clm-42k`` is run ``clm-<size>`` and ``<size>-mlm40-42k`` run
``mlm-<size>`` (the study's MLM at its 40% masking), each dataset a task of its family,
scored with the study's metric (:data:`.encodeval.STUDY_METRICS`). Only those models are
mapped: a claim that needs anything else (learning curves, the objective zoo, two-stage or
continued runs, pretraining summaries) is "not measured" on the study's side, and says what it
needs. Intervals are over the study's fine-tuning seeds of its one pretraining run per model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from pipeline.analysis import contract
from pipeline.analysis.aggregate import build_tables
from pipeline.analysis.claims.spec import Claim
from pipeline.analysis.scoring import with_choice
from pipeline.analysis.sources import Sources
from pipeline.external.encodeval import STUDY_METRICS

# The study's headline models: "<size>-<objective>-42k", the size as its name says it.
HEADLINE_MODEL = re.compile(r"^(?P<size>\d+(?:\.\d+)?[mb])-(?P<objective>clm|mlm40)-(?P<steps>\d+)k$")
RUN_NAMES = {"clm": "clm", "mlm40": "mlm"}
ATTENTION = {"clm": "causal", "mlm": "bidirectional"}


def headline_run(model: str) -> tuple[str, str, int] | None:
    """(run name, size, steps) of one of the study's headline models; None for any other."""
    matched = HEADLINE_MODEL.match(model)
    if matched is None:
        return None
    return RUN_NAMES[matched["objective"]], matched["size"], 1000 * int(matched["steps"])


def parameters_of(size: str) -> float:
    """Parameters as the study names a size ("210m" -> 2.1e8, "1b" -> 1e9): what orders the sizes."""
    return float(size[:-1]) * (1e6 if size.endswith("m") else 1e9)


def study_sources(grid: pd.DataFrame, confidence: float, claims: Sequence[Claim]) -> Sources:
    """The study's headline models' grid (in points) as the aggregate stage's sources."""
    rows, runs = [], {}
    for _, point in grid.iterrows():
        run = headline_run(point["model"])
        if run is None:
            continue
        name, size, steps = run
        runs[f"{name}-{size}"] = (name, size, steps)
        rows.append(
            {
                "task": point["dataset"],
                "family": point["family"],
                "metric": STUDY_METRICS[point["family"]],
                "run": f"{name}-{size}",
                "run_name": name,
                "objective_kind": name,
                "size": size,
                "learning_rate": point["learning_rate"],
                "seed": point["seed"],
                "validation": point["validation"],
                "test": point["test"],
                "trained_steps": math.nan,
                "seconds": math.nan,
                "test_scores": {},
            }
        )
    pretraining = pd.DataFrame(
        [
            {
                "run": run,
                "run_name": name,
                "objective": name,
                "objective_kind": name,
                "attention": ATTENTION[name],
                "size": size,
                "study": "objectives",
                "description": f"the study's {run}",
                "started_from_kind": "initial",
                "num_parameters": parameters_of(size),
                "trained_steps": steps,
                "schedule_steps": steps,
                "stopped_before_decay": False,  # its headline models are decayed 42k ends
                "budget_steps": steps,
                "first_step": 0,
            }
            for run, (name, size, steps) in sorted(runs.items())
        ],
        columns=contract.PRETRAINING_COLUMNS,
    )
    tasks = grid[["dataset", "family"]].drop_duplicates().rename(columns={"dataset": "task"})
    tasks = tasks.assign(metric=tasks["family"].map(STUDY_METRICS), proxy_for=None).reindex(columns=contract.TASKS_COLUMNS)
    empty_grid = pd.DataFrame(columns=[*contract.RUN_COLUMNS, *contract.GRID_COLUMNS, *contract.SELECTION_COLUMNS, "test_scores"])
    return Sources(
        # no record chose its LR: the rule chooses it here, where the study's grid is read
        grid=with_choice(pd.DataFrame(rows, columns=[*contract.RUN_COLUMNS, *contract.GRID_COLUMNS, "test_scores"])),
        outside_grid=empty_grid,
        curve_grid=empty_grid.assign(pretraining_step=pd.Series(dtype=float)),
        pretraining=pretraining.sort_values(["num_parameters", "run"], ignore_index=True),
        tasks=tasks.reset_index(drop=True),
        bag_of_words=pd.DataFrame(columns=["task", "bag_of_words_examples"]),
        pair_outcomes=pd.DataFrame(columns=contract.MINIMAL_PAIR_OUTCOME_COLUMNS),
        confidence=confidence,
        # The masking ratio its name states; its replacement rule is unverified (REFERENCE.md section 7).
        objective_params={
            run: {"mask_ratio": 0.4, "mask_token_fraction": math.nan, "random_token_fraction": math.nan}
            for run, (name, _, _) in runs.items()
            if name == "mlm"
        },
        claims=claims,
        measured_by="the study's released results",
    )


def study_verdicts(grid: pd.DataFrame, confidence: float, claims: Sequence[Claim]) -> pd.DataFrame:
    """claims.csv's columns for every claim, judged on the study's headline models."""
    return build_tables(study_sources(grid, confidence, claims)).tables["claims"]
