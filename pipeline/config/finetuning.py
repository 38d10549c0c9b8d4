"""The downstream protocol: the fine-tuning grid, its per-task departures, and the
bag-of-words reference."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pipeline.config.bounds import NON_EMPTY, Count, LearningRate, NonNegativeInt, Positive, ProperFraction
from pipeline.config.pretraining import OptimizerSpec

# How an input is framed: "<s> a </s> b </s>" (this harness's default) or the study's "a </s> b </s>"
# (EncodEval: text + eos, no BOS; pairs joined by the task's template into one text).
InputFormat = Literal["bos_eos", "eos"]


@dataclass(frozen=True)
class TaskBudgetSpec:
    """Per-task departures from the shared fine-tuning protocol (the default's cost knobs)."""

    learning_rates: Annotated[tuple[LearningRate, ...], NON_EMPTY] | None = None
    seeds: Annotated[tuple[NonNegativeInt, ...], NON_EMPTY] | None = None
    max_steps: Count | None = None
    max_epochs: Positive | None = None
    runs: Annotated[tuple[str, ...], NON_EMPTY] | None = None  # run names (clm: every size) or runs (clm-tiny); default: every run
    learning_curves: bool | None = None  # false: the runs' learning-curve checkpoints skip this task; default: they take it


@dataclass(frozen=True)
class ExampleBudget:
    """Which training examples a fine-tuning run sees, and in what order: its seeds and step
    budget (``min(max_steps, max_epochs x examples / batch_size)`` batches). All that the
    bag-of-words reference reads of the protocol, so a learning rate changed reruns it not."""

    seeds: Annotated[tuple[NonNegativeInt, ...], NON_EMPTY]
    batch_size: Count = 32
    max_steps: Count = 1000
    max_epochs: Positive = 1.0

    def trained_steps(self, num_examples: int) -> int:
        """A run's optimizer steps over ``num_examples`` training rows: ``max_steps`` or ``max_epochs``
        epochs, whichever is fewer (CoNLL-2003's 14,042 rows: one epoch, 439 steps of 32)."""
        return max(1, min(self.max_steps, math.ceil(self.max_epochs * num_examples / self.batch_size)))


@dataclass(frozen=True)
class FinetuningSpec:
    tasks: Annotated[tuple[str, ...], NON_EMPTY]
    learning_rates: Annotated[tuple[LearningRate, ...], NON_EMPTY]
    seeds: Annotated[tuple[NonNegativeInt, ...], NON_EMPTY]
    batch_size: Count = 32
    max_steps: Count = 1000
    max_epochs: Positive = 1.0
    warmup_fraction: ProperFraction = 0.1
    # How the linear warmup counts (pipeline/schedules.py): "transformers", the study's Trainer's
    # (get_linear_schedule_with_warmup over ceil(warmup_fraction x steps) steps: the first step at LR
    # 0); "harness", this harness's first (round(...) steps, the first at peak / warmup steps).
    lr_warmup: Literal["transformers", "harness"] = "harness"
    optimizer: OptimizerSpec = OptimizerSpec()
    attention: Literal["bidirectional", "causal"] = "bidirectional"  # causal: the CLM-side ablation
    input_format: InputFormat = "bos_eos"
    eval_batch_size: Count = 128
    # bf16: forward passes under torch.autocast (weights, optimizer and losses stay fp32); ~1.25x faster on CPU.
    # bf16_weights: the model cast to bfloat16, AdamW's state bf16 too, no fp32 master copy: EncodEval's
    # (the study's) fine-tuning, where an update below a weight's bf16 resolution is lost.
    precision: Literal["fp32", "bf16", "bf16_weights"] = "fp32"
    # Seeds that run at every LR; the other seeds run only at the LR these choose on validation.
    # None: every seed runs every LR (the study's full grid).
    selection_seeds: Annotated[tuple[NonNegativeInt, ...], NON_EMPTY] | None = None
    by_task: dict[str, TaskBudgetSpec] = field(default_factory=dict)
    # Examples per forward-backward pass, gradients accumulated over a batch's passes (the study: 4 x 8);
    # None: the whole batch in one. The same updates up to float summation order (each pass weighted
    # by what the loss averages over; retrieval's in-batch negatives through cached embedding gradients).
    micro_batch_size: Count | None = None
    # How a batch's loss weighs its micro-batches: "per_unit", each by its labelled units (tokens,
    # examples), so the batch's exact mean whatever the micro-batch size; "per_micro_batch", each
    # micro-batch's mean divided by their number, as transformers' Trainer does for a model that
    # takes no num_items_in_batch (docs/paper-scale.md: which the study's took is unverified).
    accumulated_loss: Literal["per_unit", "per_micro_batch"] = "per_unit"
    # Batches of similar lengths (pools of 50 batches sorted by length: less padding on a CPU),
    # or false: a random sampler's batches, as the study's Trainer and sentence-transformers draw
    # them (which also decides retrieval's in-batch negatives). pipeline/finetune/sweep.py: batch_order.
    group_by_length: bool = True
    # The transformer layers torch.compile'd, as pretraining.compute.compile: fewer, fused kernels for steps of a
    # few thousand tokens, too small to keep a GPU busy between kernel launches (eager 8-step points, set-up and
    # scoring included, ran at 1-3% MFU: bench/records/gpu-speed-h200-2026-11-28b). The same scores up to
    # rounding; its first batches compile.
    compile: bool = False
    # torch's fused AdamW kernel rather than its per-tensor default: on a CPU the default takes AdamW's square
    # roots from an approximation whose last bit depends on the processor (an AMD EPYC and an emulated Intel
    # disagree after one step), where the fused kernel's are exact (bench/records/cpu-vendor-bits.md). The
    # pretraining runs take pretraining.compute.fused_optimizer.
    fused_optimizer: bool = True

    def validate(self) -> None:
        if self.selection_seeds is None:
            return
        seed_lists = [("seeds", self.seeds)] + [(f"by_task.{t}.seeds", b.seeds) for t, b in self.by_task.items() if b.seeds is not None]
        for where, seeds in seed_lists:
            if not set(self.selection_seeds) <= set(seeds):
                raise ValueError(f"selection_seeds {list(self.selection_seeds)} must be one or more of {where} {list(seeds)}")

    def for_task(self, task: str) -> "FinetuningSpec":
        """The protocol one task runs under: the shared values with its ``by_task`` entry applied."""
        budget = self.by_task.get(task, TaskBudgetSpec())
        changes = {k: v for k, v in dataclasses.asdict(budget).items() if v is not None and k not in ("runs", "learning_curves")}
        return dataclasses.replace(self, by_task={}, **changes)

    @property
    def budget(self) -> ExampleBudget:
        return ExampleBudget(self.seeds, self.batch_size, self.max_steps, self.max_epochs)

    @property
    def seeds_at_every_rate(self) -> tuple[int, ...]:
        """The seeds the LR choice compares: ``selection_seeds``, or every seed on a full grid."""
        return self.seeds if self.selection_seeds is None else self.selection_seeds

    @property
    def curve_tasks(self) -> tuple[str, ...]:
        """The tasks learning-curve checkpoints are fine-tuned on: all but those whose ``by_task``
        entry says ``learning_curves: false`` (a costly task kept to final models)."""
        return tuple(task for task in self.tasks if self.by_task.get(task, TaskBudgetSpec()).learning_curves is not False)

    @property
    def num_runs(self) -> int:
        """Grid points of one (model, task): every LR at the selection seeds, the other seeds once."""
        selecting = self.seeds_at_every_rate
        return len(self.learning_rates) * len(selecting) + len(set(self.seeds) - set(selecting))


@dataclass(frozen=True)
class BagOfWordsSpec:
    """The lexical reference on sequence-classification tasks (pipeline/baselines/bag_of_words.py)."""

    regularization: Annotated[tuple[Positive, ...], NON_EMPTY] = (0.03, 0.1, 0.3, 1.0, 3.0)  # logistic regression's C, picked on validation
    max_iterations: Count = 1000
