"""Learning-rate schedules as pure functions of the step (nothing to checkpoint).

Warmup-Stable-Decay (the study): linear warmup, constant peak, linear decay over the
last ``num_decay_steps``. A WSD run stopped before its decay is the "not decayed"
checkpoint the study's two-stage runs resume from. Cosine is kept as the usual option.
"""

from __future__ import annotations

import math

from pipeline.config import ScheduleSpec


def learning_rate(step: int, num_steps: int, spec: ScheduleSpec) -> float:
    """LR for optimizer step ``step`` (0-based) of a run of ``num_steps`` steps."""
    floor = spec.peak_lr * spec.min_lr_ratio
    if step < spec.num_warmup_steps:
        return spec.peak_lr * (step + 1) / spec.num_warmup_steps
    if spec.kind == "wsd":
        decay_start = num_steps - spec.num_decay_steps
        if step < decay_start:
            return spec.peak_lr
        remaining = (num_steps - step) / spec.num_decay_steps  # 1 -> 1/num_decay_steps
        return floor + (spec.peak_lr - floor) * remaining
    progress = (step - spec.num_warmup_steps) / max(1, num_steps - spec.num_warmup_steps)
    return floor + (spec.peak_lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def linear_with_warmup(step: int, num_steps: int, peak_lr: float, warmup_fraction: float, convention: str = "harness") -> float:
    """Fine-tuning's schedule: linear warmup over ``warmup_fraction`` of the steps, linear decay to 0
    at ``num_steps``; the LR of 0-based optimizer step ``step``. ``convention`` "transformers" is the
    study's Trainer's (``get_linear_schedule_with_warmup``, ``TrainingArguments.get_warmup_steps``):
    ceil(fraction x steps) warmup steps and LR ``peak x step / warmup``, so its first step is at 0;
    "harness" rounds the warmup and starts at ``peak / warmup``. Both decay alike after it."""
    if convention == "transformers":
        num_warmup_steps, done = math.ceil(warmup_fraction * num_steps), step
    else:
        num_warmup_steps, done = max(1, round(warmup_fraction * num_steps)), step + 1
    if step < num_warmup_steps:
        return peak_lr * done / max(1, num_warmup_steps)
    return peak_lr * max(0.0, (num_steps - step) / max(1, num_steps - num_warmup_steps))
