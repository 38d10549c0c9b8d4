"""TensorBoard event files, the live view every trainer of the field writes: `tensorboard --logdir
results/` overlays every pretraining run and fine-tuning grid point as they train.

Written by torch's standard writer (``torch.utils.tensorboard.SummaryWriter``, the tensorboard
package). A resumed run opens its writer with ``purge_step`` at the step it resumes from, so the
events an earlier attempt wrote past its last saved state are dropped when read: the curves go on
without duplicated steps. ``hardware.tensorboard: false`` switches the files off; it reaches the
jobs through :data:`ENVIRONMENT_VARIABLE` (set by rules/common.smk), not their params, so switching
it reruns nothing: no number depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENVIRONMENT_VARIABLE = "PIPELINE_TENSORBOARD"
EVENTS_DIR = "tensorboard"


def enabled() -> bool:
    """Whether jobs write event files: on unless the environment says "0"."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "1") != "0"


class ScalarLog:
    """One run's scalars under ``directory``; every call does nothing where event files are off, or
    where ``writes`` is false (a distributed run's other processes: rank 0 writes)."""

    def __init__(self, directory: Path, purge_step: int | None = None, writes: bool = True) -> None:
        self.writer = None
        if writes and enabled():
            from torch.utils.tensorboard import SummaryWriter  # imported where used: the tensorboard package loads a while

            self.writer = SummaryWriter(str(directory), purge_step=purge_step)

    def add(self, step: int, scalars: Mapping[str, float | None]) -> None:
        """Each scalar at ``step``; a None (no evaluation at this step) is left out."""
        if self.writer is None:
            return
        for tag, value in scalars.items():
            if value is not None:
                self.writer.add_scalar(tag, value, step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
