"""The study's fine-tuning protocol for one (model, task): the LR x seed grid in-process.

The sweep is the costliest part of the study (15,000+ runs). Here one process loads the
checkpoint and tokenizes the task once, then reuses both for every grid point: each
point only restores the pretrained weights (a tensor copy) and draws a fresh head, data
order and schedule from its seed. Everything task-specific (encoding, head, loss,
predictions) comes from the task type (:mod:`pipeline.finetune.task_types`); this loop
is the same for all of them: AdamW, linear schedule with warmup, gradient clipping,
length-grouped or random batches, optionally bf16 autocast or the study's pure-bf16 weights.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import torch
from torch import nn
from tqdm import tqdm

from pipeline.config import FinetuningSpec
from pipeline.errors import PipelineError
from pipeline.finetune.grid_result import GridResult, Point
from pipeline.finetune.resume import PointStore
from pipeline.finetune.selection import best_on_validation
from pipeline.finetune.task_data import EncodedSplit
from pipeline.finetune.task_types import TaskType
from pipeline.metrics import Metric
from pipeline.model.backbone import compile_layers
from pipeline.optimization import build_adamw, set_learning_rate
from pipeline.schedules import linear_with_warmup
from pipeline.tensorboard_log import ScalarLog

log = logging.getLogger(__name__)

EVALUATION_SPLITS = ("validation", "test")


@dataclass(frozen=True)
class Evaluation:
    """A task the fine-tuned model of every grid point is scored on: the trained task, or one
    scored on its models (``TaskSpec.trained_with``), with its own encoding, corpus and metrics."""

    task_type: TaskType
    splits: dict[str, EncodedSplit]  # at least validation and test
    metric: Metric
    also_metrics: Sequence[Metric] = ()  # recorded beside the headline metric's scores, as "<metric>.<key>"


# Examples per length-sorted pool: big enough to group similar lengths, small enough that
# batch composition stays random (the scheme of transformers' LengthGroupedSampler).
LENGTH_GROUP_BATCHES = 50


def batch_order(lengths: list[int], num_steps: int, batch_size: int, seed: int, group_by_length: bool = True) -> list[torch.Tensor]:
    """Example indices of each step, from a fresh seeded permutation per epoch.

    ``group_by_length``: each epoch's permutation is cut into pools of ``LENGTH_GROUP_BATCHES``
    batches; a pool is sorted by length and split into batches, and the batches are shuffled.
    Batches then hold sentences of similar length, so padding (wasted compute) shrinks, while
    every example is still seen once per epoch in a seed-determined order. Otherwise the
    permutation is cut into batches as it is: a random sampler's batches (transformers'
    ``Trainer`` and sentence-transformers' default, the study's), whose composition (for
    retrieval, the in-batch negatives) is random.
    """
    # Drawn on the CPU from a CPU generator, so the order is the same on every device.
    generator = torch.Generator().manual_seed(seed)
    pool_size = LENGTH_GROUP_BATCHES * batch_size
    batches: list[torch.Tensor] = []
    while len(batches) < num_steps:
        permutation = torch.randperm(len(lengths), generator=generator, device="cpu")
        if not group_by_length:
            batches += list(permutation.split(batch_size))
            continue
        epoch = []
        for start in range(0, len(permutation), pool_size):
            pool = permutation[start : start + pool_size].tolist()
            pool.sort(key=lambda i: lengths[i])
            epoch += [torch.tensor(pool[j : j + batch_size], device="cpu") for j in range(0, len(pool), batch_size)]
        shuffled = torch.randperm(len(epoch), generator=generator, device="cpu").tolist()
        batches += [epoch[i] for i in shuffled]
    return batches[:num_steps]


def autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """bf16: matmuls of the forward pass in bfloat16 (torch.autocast); weights, gradients,
    optimizer state and losses stay float32. fp32 and bf16_weights (already bfloat16
    throughout): nothing changes."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


def in_precision(model: nn.Module, precision: str) -> nn.Module:
    """bf16_weights: ``model`` cast to bfloat16, as EncodEval casts the model before its
    ``Trainer``, so AdamW keeps bf16 moments and updates bf16 weights in place (no fp32
    master copy: an update below half a weight's bf16 step rounds away). Else as it is."""
    return model.to(torch.bfloat16) if precision == "bf16_weights" else model


class Sweep:
    """Holds what every grid point shares: the pretrained weights and the encoded splits."""

    def __init__(
        self,
        task_type: TaskType,
        pretrained: nn.Module,
        splits: dict[str, EncodedSplit],
        spec: FinetuningSpec,
        metric: Metric,
        also_metrics: Sequence[Metric] = (),
        evaluated: Mapping[str, Evaluation] = MappingProxyType({}),
        events: Path | None = None,
    ):
        self.events = events  # where each point's TensorBoard curve goes (pipeline/tensorboard_log.py); None: nowhere
        self.pretrained = pretrained
        self.pretrained_state = copy.deepcopy(pretrained.state_dict())
        self.train = splits["train"]
        self.spec = spec
        self.own = Evaluation(task_type, splits, metric, also_metrics)
        self.evaluated = dict(evaluated)  # other tasks, by name: scored by the same models, never trained on
        self.device = next(pretrained.parameters()).device
        if spec.precision in ("bf16", "bf16_weights") and self.device.type == "cpu":
            # torch's CPU SDPA kernel is ~5x slower in bf16 than in fp32 (measured on the tiny
            # model's shapes, backward above all), which eats the whole matmul gain; eager
            # attention is two bf16 matmuls around a float32 softmax.
            pretrained.set_attn_implementation("eager")
        if spec.compile:
            compile_layers(pretrained)  # in place: every point's restored weights and fresh head run through it

    def run_grid(self, description: str, store: PointStore | None = None) -> list[Point]:
        """Every LR at the selection seeds, then the other seeds at the LR those chose on
        validation (the trained task's); on the study's full grid (no ``selection_seeds``)
        every seed runs every LR. Each point: its result, and those of ``evaluated`` by name.
        ``store``: points a killed attempt finished are taken from it, each new one put in it."""
        spec = self.spec
        selecting = spec.seeds_at_every_rate
        others = [seed for seed in spec.seeds if seed not in selecting]
        with tqdm(total=spec.num_runs, desc=description, unit="run") as progress:

            def run(learning_rate: float, seed: int) -> Point:
                point = store.get(learning_rate, seed) if store is not None else None
                if point is not None:
                    log.info("lr %.1e seed %d: from the resume state (validation %.2f)", learning_rate, seed, point[0].validation)
                else:
                    point = self.run_point(learning_rate, seed, description)
                    if store is not None:
                        store.put(learning_rate, seed, point)
                progress.update()
                return point

            results = [run(learning_rate, seed) for learning_rate in spec.learning_rates for seed in selecting]
            if others:
                chosen = best_on_validation((r.learning_rate, r.validation) for r, _ in results)
                log.info("lr %.1e chosen on validation (seeds %s); seeds %s run at it", chosen, list(selecting), others)
                results += [run(chosen, seed) for seed in others]
        return results

    def run_point(self, learning_rate: float, seed: int, description: str) -> Point:
        """One grid point: the pretrained weights restored, a head, data order and schedule
        drawn from ``seed``, ``budget.trained_steps`` steps, then validation and test scored on
        the trained task and on each of ``evaluated``. A loss that stops being finite ends the
        job (``description`` names it): its scores would be the untrained head's, passed off
        as a result."""
        started = time.perf_counter()
        spec, train = self.spec, self.train
        self.pretrained.load_state_dict(self.pretrained_state)
        torch.manual_seed(seed)
        # the head drawn on the CPU (the same weights on every device), then moved where the backbone is
        model = in_precision(self.own.task_type.build_model(self.pretrained).to(self.device), spec.precision)
        optimizer = build_adamw(model, spec.optimizer, learning_rate, fused=spec.fused_optimizer)
        trained_steps = spec.budget.trained_steps(len(train))
        set_up = self.elapsed(started)
        losses = []
        model.train()
        for step, indices in enumerate(batch_order(train.lengths, trained_steps, spec.batch_size, seed, spec.group_by_length)):
            set_learning_rate(optimizer, linear_with_warmup(step, trained_steps, learning_rate, spec.warmup_fraction, spec.lr_warmup))
            examples = [train.examples[i] for i in indices]
            micro_batch_size = spec.micro_batch_size or len(examples)
            forward = functools.partial(autocast, spec.precision, self.device)  # one pass's context, entered per micro-batch
            losses.append(self.own.task_type.accumulate(model, examples, micro_batch_size, forward, spec.accumulated_loss))
            torch.nn.utils.clip_grad_norm_(model.parameters(), spec.optimizer.grad_clip_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if not math.isfinite(losses[-1]):
                raise PipelineError(
                    f"{description}: the loss is {losses[-1]} at step {step + 1} of learning rate {learning_rate:g}, seed {seed};"
                    " nothing is written (lower the learning rate, or check the model it starts from)"
                )
        training = self.elapsed(started) - set_up
        result = self.scored(self.own, model, learning_rate, seed, trained_steps, {"set_up": set_up, "training": training})
        tail = losses[-max(1, trained_steps // 10) :]
        log.info(
            "lr %.1e seed %d: validation %s %.2f, test %.2f (%d steps, final loss %.3f, %.1f s)",
            learning_rate,
            seed,
            self.own.metric.headline,
            result.validation,
            result.test,
            trained_steps,
            sum(tail) / len(tail),
            result.seconds,
        )
        elsewhere = {
            name: self.scored(evaluation, model, learning_rate, seed, trained_steps) for name, evaluation in self.evaluated.items()
        }
        if self.events is not None:
            self.write_events(learning_rate, seed, losses, result, elsewhere)
        for name, other in elsewhere.items():
            log.info("  on %s: validation %.2f, test %.2f (%.1f s)", name, other.validation, other.test, other.seconds)
        return result, elsewhere

    def write_events(self, learning_rate: float, seed: int, losses: list[float], result: GridResult, elsewhere: dict) -> None:
        """One grid point's curve: its training loss at every step, the validation scores at its last."""
        events = ScalarLog(self.events / f"lr{learning_rate:g}-seed{seed}")
        for step, loss in enumerate(losses, start=1):
            events.add(step, {"train/loss": loss})
        # the trained task's headline metric, and each task scored on the same model by its name
        events.add(len(losses), {"validation/score": result.validation, **{f"validation/{n}": o.validation for n, o in elsewhere.items()}})
        events.close()

    def scored(
        self,
        evaluation: Evaluation,
        model: nn.Module,
        learning_rate: float,
        seed: int,
        trained_steps: int,
        before: Mapping[str, float] = MappingProxyType({}),
    ) -> GridResult:
        """``model``'s validation and test scores on ``evaluation``'s task; its phases: ``before``
        (the set-up's and training's seconds, for the trained task) and the scoring's own."""
        started = time.perf_counter()
        predictions = {split: self.predict(evaluation.task_type, model, evaluation.splits[split]) for split in EVALUATION_SPLITS}
        scores = {split: split_scores(evaluation, evaluation.splits[split], predictions[split]) for split in EVALUATION_SPLITS}
        metric, test = evaluation.metric, evaluation.splits["test"]
        phases = {**before, "scoring": self.elapsed(started)}
        return GridResult(
            learning_rate,
            seed,
            scores["validation"][metric.headline],
            scores["test"][metric.headline],
            trained_steps,
            sum(phases.values()),
            scores["validation"],
            scores["test"],
            metric.per_example(*evaluation.task_type.metric_inputs(metric, test, predictions["test"])),
            phases,
        )

    def elapsed(self, started: float) -> float:
        """Seconds since ``started`` (``time.perf_counter``), the device's queued work included."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - started

    def predict(self, task_type: TaskType, model: nn.Module, split: EncodedSplit) -> list:
        """The task's predictions for ``split``, in eval mode."""
        model.eval()
        with torch.no_grad(), autocast(self.spec.precision, self.device):
            predictions = task_type.predict(model, split, self.spec.eval_batch_size)
        model.train()
        return predictions


def split_scores(evaluation: Evaluation, split: EncodedSplit, predictions: list) -> dict[str, float]:
    """The headline metric's whole result, and each other metric's under its name."""
    task_type = evaluation.task_type
    scores = task_type.scores(evaluation.metric, split, predictions)
    for other in evaluation.also_metrics:
        scores |= {f"{other.name}.{key}": value for key, value in task_type.scores(other, split, predictions).items()}
    return scores
