"""The study's fine-tuning protocol for one (model, task): every LR x seed in-process.

The sweep is the costliest part of the study (15,000+ runs). Here one process loads the
checkpoint and tokenizes the task once, then reuses both for every grid point: each
point only restores the pretrained encoder weights (a tensor copy) and draws a fresh
head, data order and schedule from its seed.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pipeline.config import FinetuningSpec
from pipeline.finetune.classifier import MeanPoolClassifier
from pipeline.finetune.task_data import EncodedSplit, TaskData, pad_batch
from pipeline.metrics import Metric
from pipeline.optimization import build_adamw, set_learning_rate
from pipeline.schedules import linear_with_warmup


@dataclass(frozen=True)
class GridResult:
    learning_rate: float
    seed: int
    validation: float
    test: float
    num_steps: int
    seconds: float


def num_finetune_steps(num_examples: int, spec: FinetuningSpec) -> int:
    """At most ``max_steps`` optimizer steps or ``max_epochs`` epochs, whichever is fewer."""
    return max(1, min(spec.max_steps, math.ceil(spec.max_epochs * num_examples / spec.batch_size)))


# Examples per length-sorted pool: big enough to group similar lengths, small enough that
# batch composition stays random (the scheme of transformers' LengthGroupedSampler).
LENGTH_GROUP_BATCHES = 50


def batch_order(lengths: list[int], num_steps: int, batch_size: int, seed: int) -> list[torch.Tensor]:
    """Example indices of each step, from a fresh seeded permutation per epoch.

    Each epoch's permutation is cut into pools of ``LENGTH_GROUP_BATCHES`` batches; a pool
    is sorted by length and split into batches, and the batches are shuffled. Batches then
    hold sentences of similar length, so padding (wasted compute) shrinks, while every
    example is still seen once per epoch in a seed-determined order.
    """
    generator = torch.Generator().manual_seed(seed)
    pool_size = LENGTH_GROUP_BATCHES * batch_size
    batches: list[torch.Tensor] = []
    while len(batches) < num_steps:
        permutation = torch.randperm(len(lengths), generator=generator)
        epoch = []
        for start in range(0, len(permutation), pool_size):
            pool = permutation[start : start + pool_size].tolist()
            pool.sort(key=lambda i: lengths[i])
            epoch += [torch.tensor(pool[j : j + batch_size]) for j in range(0, len(pool), batch_size)]
        shuffled = torch.randperm(len(epoch), generator=generator).tolist()
        batches += [epoch[i] for i in shuffled]
    return batches[:num_steps]


@torch.no_grad()
def predict(model: MeanPoolClassifier, split: EncodedSplit, pad_id: int, batch_size: int) -> list[int]:
    """Argmax predictions in example order; batches of similar length waste less padding."""
    model.eval()
    order = sorted(range(len(split)), key=lambda i: len(split.input_ids[i]))
    predictions = [0] * len(split)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        ids, mask = pad_batch([split.input_ids[i] for i in chunk], pad_id)
        for index, label in zip(chunk, model(ids, mask).argmax(-1).tolist()):
            predictions[index] = label
    model.train()
    return predictions


class Sweep:
    """Holds what every grid point shares: the encoder's pretrained weights and the data."""

    def __init__(self, encoder: torch.nn.Module, hidden_size: int, task: TaskData, spec: FinetuningSpec, metric: Metric, pad_id: int):
        self.encoder = encoder
        self.pretrained_state = copy.deepcopy(encoder.state_dict())
        self.hidden_size = hidden_size
        self.task = task
        self.spec = spec
        self.metric = metric
        self.pad_id = pad_id

    def run_point(self, learning_rate: float, seed: int) -> GridResult:
        started = time.perf_counter()
        spec, train = self.spec, self.task.splits["train"]
        self.encoder.load_state_dict(self.pretrained_state)
        torch.manual_seed(seed)
        model = MeanPoolClassifier(self.encoder, self.hidden_size, self.task.num_labels)
        optimizer = build_adamw(model, spec.optimizer, learning_rate)
        num_steps = num_finetune_steps(len(train), spec)
        model.train()
        lengths = [len(ids) for ids in train.input_ids]
        for step, indices in enumerate(batch_order(lengths, num_steps, spec.batch_size, seed)):
            set_learning_rate(optimizer, linear_with_warmup(step, num_steps, learning_rate, spec.warmup_fraction))
            ids, mask = pad_batch([train.input_ids[i] for i in indices], self.pad_id)
            loss = F.cross_entropy(model(ids, mask), train.labels[indices])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), spec.optimizer.grad_clip_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        scores = {
            split: self.metric.compute(
                predict(model, self.task.splits[split], self.pad_id, spec.eval_batch_size),
                self.task.splits[split].labels.tolist(),
            )
            for split in ("validation", "test")
        }
        return GridResult(learning_rate, seed, scores["validation"], scores["test"], num_steps, time.perf_counter() - started)
