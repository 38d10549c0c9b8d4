"""The ``--spec`` of the model jobs (pretrain, finetune, minimal-pairs), built from a resolved config.

The rules (through ``pipeline/workflow/rule_params.py``) and anything that runs a job outside Snakemake (the GPU
acceptance run, ``bench/gpu_acceptance.py``) build a job's spec here, so both run exactly
what the workflow would run. A spec is the job's own slice of the config as canonical JSON:
it is a Snakemake param, so a change in it (and only in it) reruns the job.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline import strict
from pipeline.config import RANDOM_INIT, Config
from pipeline.pretrain.plan import RunPlan


def as_json(value: Any) -> str:
    """Canonical JSON (sorted keys) of a config value, dataclasses included."""
    return json.dumps(strict.to_plain(value), sort_keys=True)


def pretrain_spec(config: Config, plan: RunPlan) -> str:
    """One pretraining run: its objective, size, the pretraining section and its plan."""
    return as_json(
        {
            "run": plan.run,
            "objective_name": plan.objective,
            "objective": config.objectives[plan.objective],
            "size_name": plan.size,
            "size": config.sizes[plan.size],
            "pretraining": config.pretraining,
            "plan": plan,
            "seed": plan.seed(config.seed),
        }
    )


def finetune_spec(config: Config, task: str, name: str, size: str, objective_kind: str, pretraining_step: int | None) -> str:
    """Model ``name``-``size`` on ``task`` (a pretrained run, random init, a learning-curve
    checkpoint, or an outside model of size "outside")."""
    return as_json(
        {
            "task_name": task,
            "task": config.tasks[task],
            "run": f"{name}-{size}",
            "objective": name,
            "objective_kind": objective_kind,
            "size": size,
            "finetuning": config.finetuning.for_task(task),
            "pretraining_step": pretraining_step,
            "evaluated": {other: config.tasks[other] for other in config.evaluated_with(task)},
        }
    )


def minimal_pairs_spec(config: Config, name: str, size: str, objective: str, pretraining_step: int | None) -> str:
    """Model ``name``-``size`` scored zero-shot; ``objective`` (a config objective, or random
    init) picks its score."""
    return as_json(
        {
            "run": f"{name}-{size}",
            "objective": name,
            "objective_spec": None if objective == RANDOM_INIT else config.objectives[objective],
            "size": size,
            "pretraining_step": pretraining_step,
        }
    )
