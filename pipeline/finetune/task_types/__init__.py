"""Fine-tuning task types, registered by ``TaskSpec.type``. Importing this package registers
every module in it, so a new task type is one new file."""

import importlib
import pkgutil

from pipeline.finetune.task_types.base import TaskContext, TaskType, get_task_type, registered_task_types

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["TaskContext", "TaskType", "get_task_type", "registered_task_types"]
