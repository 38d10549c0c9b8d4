"""Runs measured against each other, per task and per family average at each size:
MLM − CLM and each against its random-init twin (comparison.csv), each run against the
trivial baseline, the bag of words and its random-init twin (baselines.csv), and every run
against its CLM and MLM reference (objectives.csv); all with Welch CIs, over whatever the
scores' intervals are over (fine-tuning seeds, or pretraining seeds: .replicates)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import pandas as pd

from pipeline.analysis.contract import (
    BASELINE_COLUMNS,
    COMPARISON_COLUMNS,
    FLOOR_MARGIN,
    OBJECTIVES_COLUMNS,
    RUN_COLUMNS,
    VERSUS,
    WINNER,
    size_parameters,
)
from pipeline.analysis.replicates import PRETRAINING_SEEDS
from pipeline.analysis.runs import PLACEMENT_COLUMNS, SECTIONS, pick_run
from pipeline.analysis.stats import Estimate, ci_side, difference, minimum_detectable_effect, replicates_to_detect
from pipeline.analysis.table_schema import SCHEMAS
from pipeline.errors import PipelineError


def by_level(scores: pd.DataFrame, families: pd.DataFrame) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """(level, task or family name, size, its runs) for every task and every family
    average at every size: the units that comparison.csv and objectives.csv compare."""
    for level, frame in (("task", scores), ("family", families)):
        for (name, size), group in frame.groupby([level, "size"], sort=True):
            yield level, name, size, group


def seed_count(scores: pd.DataFrame, runs: list[str]) -> float:
    """The fewest replicates behind any task score of ``runs``: pretraining seeds where they
    are pooled over several (the unit their intervals are over), else fine-tuning seeds;
    NaN where the table has no count."""
    chosen = scores[scores["run"].isin(runs)]
    if chosen.empty or "n_seeds" not in chosen.columns:
        return math.nan
    pretraining_seeds = chosen[PRETRAINING_SEEDS].min() if PRETRAINING_SEEDS in chosen.columns else 1
    return float(pretraining_seeds if pretraining_seeds > 1 else chosen["n_seeds"].min())


def versus_random(group: pd.DataFrame, arms: dict[str, pd.Series], confidence: float) -> dict[str, object]:
    """Each arm minus the random-init run of its size (pooled alike), Welch: what pretraining bought."""
    random = pick_run(group, "random")
    if random is None:
        return {"random_run": "", **Estimate.undefined(confidence).columns("random_")}
    random_score = Estimate.from_columns(random, confidence, "test_")
    columns: dict[str, object] = {"random_run": random["run"], **random_score.columns("random_")}
    for prefix, arm in arms.items():
        gain = difference(Estimate.from_columns(arm, confidence, "test_"), random_score)
        columns.update({**gain.columns(f"{prefix}_minus_random_"), f"{prefix}_versus_random": VERSUS[ci_side(gain)]})
    return columns


def power_columns(gap: Estimate, replicates: float, unit: str = "seeds") -> dict[str, float]:
    """The minimum detectable effect of a difference at 80% power, and for an undecided one
    the replicates per arm (fine-tuning seeds; for minimal pairs, pairs) that would detect
    the observed gap (variance as observed): ``difference_mde``, ``difference_{unit}_to_decide``."""
    decided = ci_side(gap) in ("above", "below")
    needed = math.nan if decided or math.isnan(replicates) else replicates_to_detect(gap, int(replicates))
    return {"difference_mde": minimum_detectable_effect(gap), f"difference_{unit}_to_decide": needed}


def task_floors(tasks: pd.DataFrame, level: str, name: str, family: str) -> float:
    """The trivial baseline (majority class, always abstain, zero) a task's scores start from;
    for a family, the highest of its tasks'."""
    floors = tasks.set_index("task")["majority_test_score"]
    members = [name] if level == "task" else list(tasks.loc[tasks["family"] == family, "task"])
    return max((floors.get(task, math.nan) for task in members), default=math.nan)


def comparison_table(
    scores: pd.DataFrame, families: pd.DataFrame, pretraining: pd.DataFrame, tasks: pd.DataFrame, confidence: float
) -> pd.DataFrame:
    """Per (task, size) and per (family, size): MLM, CLM and MLM − CLM with Welch CI, its
    minimum detectable effect and, where undecided, the seeds that would decide it; and each
    of the two against the random-init run of its size.

    ``at_floor``: neither the MLM nor the CLM run's CI clears the trivial baseline by
    ``FLOOR_MARGIN`` points. Such a row says nothing about the objectives, only that the
    budget taught neither model the task: no evidence, not a tie.
    """
    parameters = size_parameters(pretraining)
    rows = []
    for level, name, size, group in by_level(scores, families):
        mlm, clm = pick_run(group, "mlm"), pick_run(group, "clm")
        if mlm is None or clm is None:
            continue
        mlm_score = Estimate.from_columns(mlm, confidence, "test_")
        clm_score = Estimate.from_columns(clm, confidence, "test_")
        gap = difference(mlm_score, clm_score)
        rows.append(
            {
                "level": level,
                "name": name,
                "family": group["family"].iloc[0],
                "size": size,
                "num_parameters": parameters.get(size, math.nan),
                "mlm_run": mlm["run"],
                "clm_run": clm["run"],
                **mlm_score.columns("mlm_"),
                **clm_score.columns("clm_"),
                **gap.columns("difference_"),
                "winner": WINNER[ci_side(gap)],
                **power_columns(gap, seed_count(scores, [mlm["run"], clm["run"]])),
                "floor": (floor := task_floors(tasks, level, name, group["family"].iloc[0])),
                "at_floor": bool(floor == floor and max(mlm_score.low, clm_score.low) < floor + FLOOR_MARGIN),
                PRETRAINING_SEEDS: min(mlm.get(PRETRAINING_SEEDS, 1), clm.get(PRETRAINING_SEEDS, 1)),
                **versus_random(group, {"mlm": mlm, "clm": clm}, confidence),
            }
        )
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def baseline_table(scores: pd.DataFrame, tasks: pd.DataFrame, bag_of_words: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per (task, pretrained run): majority class, the bag-of-words reference (NaN where the
    task has none), random init at the same size, and pretrained − random with a Welch CI
    (what pretraining bought at all)."""
    majority = tasks.set_index("task")["majority_test_score"]
    lexical = bag_of_words.set_index("task")
    undefined = Estimate.undefined(confidence)
    rows = []
    for (task, size), group in scores.groupby(["task", "size"], sort=True):
        if task not in majority.index:
            raise PipelineError(f"task {task!r} has scores but no stats.json among the task_stats")
        random = pick_run(group, "random")
        random_score = Estimate.from_columns(random, confidence, "test_") if random is not None else undefined
        for _, run in group[group["objective_kind"] != "random"].iterrows():
            score = Estimate.from_columns(run, confidence, "test_")
            gain = difference(score, random_score) if random is not None else undefined
            rows.append(
                {
                    **run[RUN_COLUMNS].to_dict(),
                    "majority_test_score": majority[task],
                    "bag_of_words_examples": lexical["bag_of_words_examples"].get(task, math.nan),
                    **(
                        Estimate.from_columns(lexical.loc[task], confidence, "bag_of_words_") if task in lexical.index else undefined
                    ).columns("bag_of_words_"),
                    "random_run": random["run"] if random is not None else "",
                    **score.columns("pretrained_"),
                    **random_score.columns("random_"),
                    **gain.columns("minus_random_"),
                }
            )
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def reference_gap(score: Estimate, run: str, reference: pd.Series | None, confidence: float) -> tuple[Estimate, str]:
    """``run`` − ``reference`` with Welch's CI, and the verdict word; none for a missing
    reference, nor for the reference itself (a run is not independent of itself)."""
    if reference is None:
        return Estimate.undefined(confidence), "no reference run"
    if reference["run"] == run:
        return Estimate.undefined(confidence), "reference"
    gap = difference(score, Estimate.from_columns(reference, confidence, "test_"))
    return gap, VERSUS[ci_side(gap)]


def objectives_table(
    scores: pd.DataFrame,
    families: pd.DataFrame,
    placements: pd.DataFrame,
    references: Mapping[str, Mapping[str, str | None]],
    confidence: float,
) -> pd.DataFrame:
    """Per (task | family, pretrained run, section showing it): the score, and its
    difference from its CLM and MLM reference runs (:func:`.runs.reference_runs`: those
    of its size, or of its step budget) with Welch CIs."""
    rows = []
    for level, name, size, group in by_level(scores, families):
        scored = group.set_index("run", drop=False)
        for _, run in group[group["objective_kind"] != "random"].iterrows():
            score = Estimate.from_columns(run, confidence, "test_")
            row = {
                "level": level,
                "name": name,
                **{c: run[c] for c in ("family", "run", "run_name", "objective_kind", "size")},
                **score.columns("test_"),
            }
            for kind, reference_run in references[run["run"]].items():
                reference = scored.loc[reference_run] if reference_run in scored.index else None
                gap, verdict = reference_gap(score, run["run"], reference, confidence)
                row.update(
                    {
                        f"{kind}_run": "" if reference is None else reference["run"],
                        **gap.columns(f"minus_{kind}_"),
                        f"versus_{kind}": verdict,
                    }
                )
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[c for c in OBJECTIVES_COLUMNS if c not in PLACEMENT_COLUMNS or c == "run"])
    placed = frame.merge(placements, on="run")[OBJECTIVES_COLUMNS]
    # Ordered, so that sorting the table follows SECTIONS; the objectives table writes it back as text.
    return placed.assign(section=pd.Categorical(placed["section"], categories=SECTIONS, ordered=True))


def in_order(name: str, frame: pd.DataFrame, pretraining: pd.DataFrame) -> pd.DataFrame:
    """``frame`` in the row order the table ``name`` declares (:mod:`.table_schema`), sizes by parameter count."""
    before, after = SCHEMAS[name].order
    return by_size(frame, pretraining, list(before), list(after))


def by_size(frame: pd.DataFrame, pretraining: pd.DataFrame, before: list[str], after: list[str]) -> pd.DataFrame:
    """Sort with sizes by parameter count (unknown sizes last), so that every table
    and figure lists the smaller model first."""
    rank = {size: i for i, size in enumerate(size_parameters(pretraining))}
    ranked = frame.assign(size_rank=frame["size"].map(rank).fillna(len(rank)))
    return ranked.sort_values([*before, "size_rank", "size", *after], kind="stable").drop(columns="size_rank").reset_index(drop=True)
