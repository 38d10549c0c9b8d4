"""Fine-tuning task types, registered by ``TaskSpec.type`` (:mod:`pipeline.registry`): importing
this package registers every module in it, so a new task type is one new file."""

from pipeline.finetune.task_types.base import TASK_TYPES, TaskContext, TaskType, get_task_type, registered_task_types
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["TASK_TYPES", "TaskContext", "TaskType", "get_task_type", "registered_task_types"]
