"""Gradient accumulation (``finetuning.micro_batch_size``): a batch backpropagated a micro-batch at
a time gives the gradients of one pass, for every task type (retrieval's in-batch negatives
through cached embedding gradients, as the study's CachedMultipleNegativesRankingLoss)."""

from __future__ import annotations

import contextlib

import pytest
import torch

from pipeline import strict
from pipeline.finetune.run import FinetuneRunSpec
from pipeline.finetune.task_data import read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.tokenization.saved import load_saved_tokenizer
from tests.test_finetune_task_types import CASES, make_task, spec_json


def gradients(task_type, pretrained, examples, micro_batch_size: int) -> tuple[float, list[torch.Tensor]]:
    """The batch's loss and every parameter's gradient, from a fresh head of seed 0."""
    torch.manual_seed(0)
    model = task_type.build_model(pretrained)
    model.zero_grad(set_to_none=True)
    loss = task_type.accumulate(model, examples, micro_batch_size, contextlib.nullcontext)
    return loss, [p.grad.clone() for p in model.parameters() if p.grad is not None]


def ten_examples(name: str, init_dir, tmp_path):
    """Task type ``name`` over a made task, the pretrained encoder it fine-tunes, and ten encoded training examples."""
    task_dir = make_task(name, tmp_path / "task")
    spec = strict.parse_json(FinetuneRunSpec, spec_json(name), "finetune")
    stats, rows = read_task(task_dir)
    context = TaskContext(spec.task, stats, load_saved_tokenizer(init_dir), "bidirectional", "random", "eos", read_documents(task_dir))
    task_type = get_task_type(name)(context)
    return task_type, task_type.load_pretrained(str(init_dir)), task_type.encode(rows["train"][:10])


@pytest.mark.parametrize("name", sorted(CASES))
def test_micro_batches_give_the_gradients_of_one_pass(name, init_dir, tmp_path):
    task_type, pretrained, examples = ten_examples(name, init_dir, tmp_path)
    whole_loss, whole = gradients(task_type, pretrained, examples, len(examples))
    micro_loss, micro = gradients(task_type, pretrained, examples, 3)  # 3 + 3 + 3 + 1: uneven on purpose
    assert micro_loss == pytest.approx(whole_loss, rel=1e-5) and len(micro) == len(whole) > 0
    for ours, theirs in zip(micro, whole, strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-6)


def test_the_trainer_s_weighting_averages_micro_batch_means(init_dir, tmp_path):
    """accumulated_loss: per_micro_batch is transformers' Trainer's (each micro-batch's mean loss over
    the number of micro-batches): on token tagging, where micro-batches hold unequal tokens, not the
    batch's exact mean that per_unit gives."""
    task_type, pretrained, examples = ten_examples("token_classification", init_dir, tmp_path)
    chunks = [examples[start : start + 3] for start in range(0, len(examples), 3)]
    torch.manual_seed(0)
    model = task_type.build_model(pretrained)
    with torch.no_grad():
        means = [task_type.loss(model, chunk).item() for chunk in chunks]
    torch.manual_seed(0)
    model = task_type.build_model(pretrained)
    trainer_loss = task_type.accumulate(model, examples, 3, contextlib.nullcontext, "per_micro_batch")
    assert trainer_loss == pytest.approx(sum(means) / len(means), rel=1e-5)
    assert trainer_loss != pytest.approx(gradients(task_type, pretrained, examples, len(examples))[0], rel=1e-4)
