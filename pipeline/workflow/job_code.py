"""Which members of the plug-in registries a job runs, so that its ``code`` param hashes those and
not their siblings (:func:`pipeline.code_graph.job_graph`).

A pretraining or minimal-pairs job runs its model's objective and that objective's loss; a
fine-tuning job its model's objective (parsed, never run), its task's type and metrics, and
those of the tasks scored on its models (``trained_with``). Random init uses no objective. A rule
names the function its jobs take (``@rule(..., uses=...)`` in :mod:`pipeline.workflow.rule_params`);
every other job takes its registries whole (aggregate and report read every table and claim kind).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pipeline.code_graph import Uses
from pipeline.config import RANDOM_INIT
from pipeline.objectives import kind_of
from pipeline.workflow.configure import Resolved
from pipeline.workflow.targets import objective_kind

OBJECTIVES, LOSSES = "pipeline.objectives", "pipeline.pretrain.losses"
TASK_TYPES, METRICS = "pipeline.finetune.task_types", "pipeline.metrics"


def objective_uses(kind: str) -> dict[str, set[str]]:
    """An objective kind and the loss it trains with; none for random init."""
    if kind == RANDOM_INIT:
        return {OBJECTIVES: set(), LOSSES: set()}
    return {OBJECTIVES: {kind}, LOSSES: {kind_of(kind).loss}}


def task_uses(resolved: Resolved, task: str) -> dict[str, set[str]]:
    """The task types and metrics of ``task`` and of the tasks scored on its fine-tuned models."""
    config = resolved.config
    tasks = [config.tasks[name] for name in (task, *config.evaluated_with(task))]
    return {TASK_TYPES: {spec.type for spec in tasks}, METRICS: {m for spec in tasks for m in (spec.metric, *spec.also_metrics)}}


def model_kind(resolved: Resolved, wildcards: Mapping[str, str]) -> str:
    """The objective kind of the model a job reads: a run's, random init, or an outside model's entry."""
    if "size" not in wildcards:
        return resolved.config.outside_model(wildcards["name"]).objective
    return objective_kind(resolved, wildcards["name"], wildcards["size"])


def frozen(uses: Mapping[str, Iterable[str]]) -> Uses:
    return tuple(sorted((package, frozenset(names)) for package, names in uses.items()))


def model_uses(resolved: Resolved, wildcards: Mapping[str, str]) -> Uses:
    """A pretraining, import or minimal-pairs job: its model's objective and that objective's loss."""
    return frozen(objective_uses(model_kind(resolved, wildcards)))


def model_and_task_uses(resolved: Resolved, wildcards: Mapping[str, str]) -> Uses:
    """A fine-tuning job: its model's objective (parsed, never run), its task's type and metrics."""
    return frozen({**objective_uses(model_kind(resolved, wildcards)), **task_uses(resolved, wildcards["task"])})


def bag_of_words_uses(resolved: Resolved, wildcards: Mapping[str, str]) -> Uses:
    """The bag-of-words reference: no objective, its task's type and metrics."""
    return frozen({**objective_uses(RANDOM_INIT), **task_uses(resolved, wildcards["task"])})
