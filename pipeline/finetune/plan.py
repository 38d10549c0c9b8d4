"""Which models each task fine-tunes.

Every model (each pretraining run, its learning-curve checkpoints, and the untrained
baseline) is fine-tuned on every task, with two exceptions. A generative task
(needle-in-a-haystack) only takes models that were trained to predict the next token:
objectives whose attention is causal or prefix, and the untrained baseline, which is
given causal attention. And a task's ``finetuning.by_task.<task>.runs`` may name the
runs it takes, by name (``clm``: every size) or with the size (``clm-tiny``), and
``...learning_curves: false`` keeps it off the learning-curve checkpoints, so that a
config can spend a costly task's budget on the runs that matter most; a task scored on another's
fine-tuned models (``trained_with``) takes the models that task takes. Outside models
(``outside_models``) follow the same rules, by their name and the objective they were trained with.
"""

from __future__ import annotations

from pipeline.config import RANDOM_INIT, Config
from pipeline.config.replicates import arm_of, is_random_init
from pipeline.data.task_rows import TASK_TYPES
from pipeline.example import Attention
from pipeline.objectives import parse_objective

GENERATIVE_ATTENTION = ("causal", "prefix")


def generation_attention(objective_kind: str) -> Attention | None:
    """The attention a model trained with ``objective_kind`` generates under (its own causal
    or prefix pattern; causal for the untrained baseline), None for one that cannot generate."""
    if objective_kind == RANDOM_INIT:
        return "causal"
    attention = parse_objective({"kind": objective_kind}).attention
    return attention if attention in GENERATIVE_ATTENTION else None


def can_generate(config: Config, objective: str) -> bool:
    """Whether a run trained with ``objective`` (a config name, or the baseline) predicts next tokens."""
    return generation_attention(objective_kind(config, objective)) is not None


def objective_kind(config: Config, objective: str) -> str:
    return RANDOM_INIT if is_random_init(objective) else config.objectives[objective]["kind"]


def finetunes(config: Config, task: str, name: str, size: str, objective: str) -> bool:
    """Whether ``task`` fine-tunes run ``name``-``size`` (and its checkpoints), trained with ``objective``."""
    arm = arm_of(name)[0]  # a task that takes clm takes every pretraining replicate of it
    return task_takes(config, task, {name, arm, f"{name}-{size}", f"{arm}-{size}"}, objective_kind(config, objective))


def finetunes_outside(config: Config, task: str, name: str) -> bool:
    """Whether ``task`` fine-tunes outside model ``name`` (``outside_models``), by the same rules."""
    return task_takes(config, task, {name}, config.outside_model(name).objective)


def task_takes(config: Config, task: str, names: set[str], kind: str) -> bool:
    """Whether ``task`` takes a model known by any of ``names`` and trained with objective ``kind``;
    a task scored on another's fine-tuned models (``trained_with``) takes exactly that task's."""
    budget = config.finetuning.by_task.get(config.trainer_of(task))
    if budget is not None and budget.runs is not None and not names & set(budget.runs):
        return False
    if TASK_TYPES[config.tasks[task].type].generative:
        return generation_attention(kind) is not None
    return True
