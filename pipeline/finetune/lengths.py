"""What one fine-tuning run of a prepared task computes, in tokens, measured on its rows: for the
cost estimate (:mod:`pipeline.workflow.cost`) in place of every example at the task's ``max_length``.

A run's training steps are the sweep's (:meth:`ExampleBudget.trained_steps`); each step computes its
batch padded to the longest example of each micro-batch, as the sweep pads (both sides of a
retrieval pair, each to its own longest). The batches are drawn as the sweep draws them
(:func:`.sweep.batch_order`, seed 0) from a seeded sample of the training rows: the study's random
batches, or length-grouped ones where ``group_by_length`` says so. Scoring a grid point is a
forward pass over the validation and test examples (and a judged corpus's documents) of the task
and of every task scored on its models (``trained_with``), at their own lengths (the sweep scores
in length order, so padding is small there and not counted).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from pipeline.config import Config, FinetuningSpec, TaskSpec
from pipeline.finetune.run_tokens import RunTokens
from pipeline.finetune.sweep import EVALUATION_SPLITS, batch_order
from pipeline.finetune.task_data import read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.finetune.task_types.retrieval import RetrievalExample
from pipeline.tokenization.saved import load_saved_tokenizer

SAMPLE_ROWS = 4096  # training rows encoded per task: enough for the mean padded batch within ~1%
SAMPLE_SEED = 0


def example_tokens(example) -> tuple[int, ...]:
    """The sequences an encoded example puts through the encoder: a retrieval pair's two, else one."""
    if isinstance(example, RetrievalExample):
        return (len(example.query_ids), len(example.document_ids))
    return (len(example.input_ids),)


def padded_step_tokens(examples: Sequence, batch: Sequence[int], micro_batch_size: int | None) -> int:
    """Tokens one training step computes: each micro-batch padded to its longest, side by side."""
    size = micro_batch_size or len(batch)
    total = 0
    for start in range(0, len(batch), size):
        micro = [example_tokens(examples[i]) for i in batch[start : start + size]]
        total += len(micro) * sum(max(side) for side in zip(*micro))
    return total


def encoded_tokens(examples: Sequence) -> int:
    return sum(sum(example_tokens(example)) for example in examples)


def task_encoder(name: str, tasks: Mapping[str, TaskSpec], task_dirs: Mapping[str, Path], tokenizer, protocol: FinetuningSpec):
    """The task type of ``name`` that encodes its rows as a job under ``protocol`` does, with the rows and documents."""
    stats, rows = read_task(task_dirs[name])
    documents = read_documents(task_dirs[name])
    context = TaskContext(tasks[name], stats, tokenizer, protocol.attention, "mlm", protocol.input_format, documents)
    return get_task_type(tasks[name].type)(context), rows, documents


def scored_tokens(encoder, rows: Mapping[str, list], documents: list) -> int:
    """Tokens a grid point's scoring of one task puts through the encoder: validation, test and a judged corpus's documents."""
    scored = sum(encoded_tokens(encoder.encode(rows[split])) for split in EVALUATION_SPLITS)
    if documents:
        scored += sum(len(ids) for ids in encoder.evaluated([document["document"] for document in documents]))
    return scored


def train_tokens(examples: Sequence, steps: int, protocol: FinetuningSpec, seed: int) -> int:
    """Padded tokens of the ``steps`` batches the sweep draws from ``examples`` with ``seed`` (epochs repeat)."""
    lengths = [max(example_tokens(e)) for e in examples]
    batches = batch_order(lengths, steps, protocol.batch_size, seed, protocol.group_by_length)
    return sum(padded_step_tokens(examples, batch.tolist(), protocol.micro_batch_size) for batch in batches)


def run_tokens(
    task: str,
    tasks: Mapping[str, TaskSpec],
    task_dirs: Mapping[str, Path],
    tokenizer,
    finetuning: FinetuningSpec,
    scored_with: Sequence[str] = (),
) -> RunTokens:
    """Measure one grid point of ``task`` (its prepared rows in ``task_dirs[task]``) under
    ``finetuning``'s protocol for it; ``scored_with``: the tasks scored on its models."""
    protocol = finetuning.for_task(task)
    scored = sum(scored_tokens(*task_encoder(name, tasks, task_dirs, tokenizer, protocol)) for name in scored_with)
    encoder, rows, documents = task_encoder(task, tasks, task_dirs, tokenizer, protocol)
    scored += scored_tokens(encoder, rows, documents)
    train_rows = len(rows["train"])
    sample = random.Random(SAMPLE_SEED).sample(rows["train"], min(SAMPLE_ROWS, train_rows))
    train_examples = encoder.encode(sample)
    steps = protocol.budget.trained_steps(train_rows)
    mean_tokens = encoded_tokens(train_examples) / max(len(train_examples), 1)
    # the sweep's batches over the sample, as many steps as a run takes (epochs of the sample repeat)
    return RunTokens(task, train_rows, steps, mean_tokens, train_tokens(train_examples, steps, protocol, SAMPLE_SEED), scored)


def measured_lengths(config: Config, directory: Path) -> dict[str, RunTokens]:
    """Task -> what one grid point of it computes, for every trained task prepared under the
    workflow directory ``directory`` (with the tasks scored on its models); none without its tokenizer."""
    task_dirs = {task: directory / "results" / "data" / "tasks" / task for task in config.finetuning.tasks}
    prepared = {task for task, path in task_dirs.items() if (path / "stats.json").is_file()}
    tokenizer_dir = directory / "results" / "tokenizer"
    if not prepared or not tokenizer_dir.is_dir():
        return {}
    tokenizer = load_saved_tokenizer(tokenizer_dir)
    lengths = {}
    for task in config.finetuning.tasks:
        scored_with = [other for other in config.finetuning.tasks if config.tasks[other].trained_with == task]
        if config.tasks[task].trained_with is None and {task, *scored_with} <= prepared:
            lengths[task] = run_tokens(task, config.tasks, task_dirs, tokenizer, config.finetuning, scored_with)
    return lengths
