"""The paper's and the one-GPU tier's own plans set beside the study: each planned model's
parameters counted as its pretraining job records them (``count_parameters`` on the backbone the
job builds, here on the meta device: no memory, no time), its tokens as it trains them, and the
grids as each task's scores.json records their protocol. Every cell of a run planned and
fine-tuned as the study's must read comparable; what remains names a real difference."""

from __future__ import annotations

import math

import pytest
import torch

from pipeline.analysis.study_cells import TASK_DATASETS, not_comparable_because, study_keys
from pipeline.external.published_tables import FAMILY_ORDER
from pipeline.finetune.run import grid_protocol
from pipeline.model.backbone import BackboneSpec, build_language_model, count_parameters
from pipeline.objectives import parse_objective
from pipeline.workflow.configure import read_configs, resolve
from pipeline.workflow.cost import pretraining_tokens
from tests.conftest import REPO


def planned_rows(resolved) -> list[dict]:
    """pretraining.csv's rows as the plans' jobs would write them (summary.json's facts)."""
    config, rows = resolved.config, []
    for plan in resolved.plans.values():
        attention = parse_objective(config.objectives[plan.objective]).attention
        spec = BackboneSpec(config.sizes[plan.size], config.tokenizer.vocab_size, config.pretraining.sequence_length, 0, 1, 2, 3)
        with torch.device("meta"):
            counts = count_parameters(build_language_model(spec, attention, seed=0))
        rows.append(
            {
                "run": plan.run,
                "size": plan.size,
                "study": plan.study,
                "objective_kind": config.objectives[plan.objective]["kind"],
                "mask_ratio": config.objectives[plan.objective].get("mask_ratio", math.nan),
                "started_from_run": plan.start.run,
                "first_step": plan.first_step,
                "trained_steps": plan.last_step,
                "schedule_steps": plan.schedule_steps,
                "stopped_before_decay": plan.last_step < plan.schedule_steps,
                "num_tokens": pretraining_tokens(plan, config),
                "num_study_parameters": counts.study_count,
            }
        )
    return rows


def reasons_of(overlays: list[str]) -> dict[tuple[str, str], str]:
    """(run, family) -> why its cells are not comparable ("" where they are), for every run of the
    plans that is a study model, over the family's tasks as configured."""
    files = [str(REPO / "config" / name) for name in overlays]
    resolved = resolve(read_configs(files), overlays[-1])
    config = resolved.config
    protocols = {
        task: grid_protocol(config.tasks[task], config.finetuning.for_task(task), config.tasks[task].trained_with or task)
        for task in config.finetuning.tasks
    }
    rows = planned_rows(resolved)
    kinds = {row["run"]: row["objective_kind"] for row in rows}
    budget_steps = config.pretraining.budget_steps  # what each run's summary.json records
    reasons = {}
    for row in rows:
        step = row["trained_steps"] if row["stopped_before_decay"] else None
        if not study_keys(row, step, budget_steps, row["mask_ratio"], kinds.get(row["started_from_run"], "")):
            continue
        for family in FAMILY_ORDER:
            tasks = [task for task in config.finetuning.tasks if task in TASK_DATASETS and config.tasks[task].family == family]
            reasons[row["run"], family] = not_comparable_because(row, step, budget_steps, family, tasks, protocols)
    return reasons


@pytest.mark.parametrize("overlays", [["paper.yaml"], ["paper.yaml", "one_gpu.yaml"]], ids=["paper", "one_gpu"])
def test_every_cell_of_a_run_planned_as_the_study_s_reads_comparable(overlays):
    reasons = reasons_of(overlays)
    assert reasons, "no run of the plan is one of the study's models"
    assert {key: why for key, why in reasons.items() if why} == {}


def test_the_reduced_grid_s_cells_name_its_learning_rate_choice_and_nothing_else():
    reasons = reasons_of(["paper.yaml", "one_gpu.yaml", "one_gpu_reduced.yaml"])
    assert set(reasons.values()) == {"learning_rate_chosen_on seeds 0 here, every seed in the study"}
