"""``python -m pipeline bag-of-words``: a lexical reference for one sequence-classification task.

A binary bag of tokens over exactly the input the fine-tuned models see (the project's
tokenizer, the task type's framing and truncation to ``max_length``; a sentence pair is
one bag) and L2-regularised logistic regression, trained on the very examples one
fine-tuning run of the task sees with the same seed (its budget: ``min(max_steps,
max_epochs x train / batch_size)`` batches, drawn by the sweep's own ``batch_order``).
Like the LR of the fine-tuning protocol, the regularisation strength C is picked on
validation (mean over seeds), and the test score is kept per seed so the report gives a
mean with a CI.

It answers what the fine-tuned models' scores mean: a model that does not beat it has
learned no more than which words go with which label.
"""

from __future__ import annotations

import argparse
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from pipeline import strict
from pipeline.config import BagOfWordsSpec, ExampleBudget, TaskSpec
from pipeline.data.task_rows import TASK_TYPES
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, write_json
from pipeline.finetune.selection import best_on_validation
from pipeline.finetune.sweep import batch_order
from pipeline.finetune.task_data import EncodedSplit, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.metrics import get_metric
from pipeline.provenance import write_provenance
from pipeline.tokenization.saved import load_saved_tokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BagOfWordsRunSpec:
    task_name: str
    task: TaskSpec
    budget: ExampleBudget  # the task's own fine-tuning budget and seeds, and no more of its protocol
    attention: Literal["bidirectional", "causal"]  # the fine-tuning attention, which frames the inputs the bag is made of
    bag_of_words: BagOfWordsSpec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the baseline run")
    parser.add_argument("--task-dir", required=True, help="prepared task (train/validation/test.jsonl, stats.json)")
    parser.add_argument("--tokenizer", required=True, help="the project's tokenizer (results/tokenizer)")
    parser.add_argument("--out", required=True, help="output directory for scores.json")


def fine_tuning_examples(lengths: list[int], budget: ExampleBudget, seed: int) -> list[int]:
    """Indices of the training examples one fine-tuning run with ``seed`` trains on: the
    sweep's own ``batch_order``, so the very same examples (each once)."""
    batches = batch_order(lengths, budget.trained_steps(len(lengths)), budget.batch_size, seed)
    return sorted(set(torch.cat(batches).tolist()))


def bag_of_tokens(split: EncodedSplit, vocab_size: int, rows: list[int] | None = None) -> scipy.sparse.csr_matrix:
    """(examples, vocab_size) 0/1: which token ids each (framed, truncated) input holds."""
    examples = [split.examples[i] for i in rows] if rows is not None else split.examples
    present = [sorted(set(e.input_ids)) for e in examples]  # per example: its distinct token ids (CSR column indices)
    indptr = np.cumsum([0] + [len(ids) for ids in present])
    indices = np.fromiter((i for ids in present for i in ids), dtype=np.int64, count=int(indptr[-1]))
    return scipy.sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(examples), vocab_size))


def run_seed(
    splits: dict[str, EncodedSplit], vocab_size: int, chosen: list[int], seed: int, spec: BagOfWordsSpec, metric_name: str
) -> list[dict]:
    """One grid point per C, trained on the ``chosen`` train examples: validation and test scores, in points."""
    metric = get_metric(metric_name)
    labels = np.array([splits["train"].references[i] for i in chosen])
    if len(set(labels.tolist())) < 2:
        raise PipelineError(f"bag of words: seed {seed}'s {len(chosen)} training examples hold one label only")
    inputs = {
        "train": bag_of_tokens(splits["train"], vocab_size, chosen),
        **{name: bag_of_tokens(splits[name], vocab_size) for name in ("validation", "test")},
    }
    points = []
    for inverse_regularization in spec.regularization:
        model = LogisticRegression(C=inverse_regularization, max_iter=spec.max_iterations, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # an unconverged fit is an error, not a score
            model.fit(inputs["train"], labels)
        scores = {
            name: metric.compute(model.predict(inputs[name]).tolist(), splits[name].references)[metric.headline]
            for name in ("validation", "test")
        }
        points.append({"regularization": inverse_regularization, "seed": seed, **scores})
    return points


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(BagOfWordsRunSpec, args.spec, "bag-of-words")
    if not TASK_TYPES[spec.task.type].lexical_baseline:
        raise PipelineError(f"bag-of-words: task {spec.task_name!r} is {spec.task.type}, which has no bag-of-words baseline")
    stats, rows = read_task(args.task_dir)
    tokenizer = load_saved_tokenizer(args.tokenizer)
    task_type = get_task_type(spec.task.type)(TaskContext(spec.task, stats, tokenizer, spec.attention, "random"))
    splits = {name: task_type.encode_split(split_rows) for name, split_rows in rows.items()}
    examples = {seed: fine_tuning_examples(splits["train"].lengths, spec.budget, seed) for seed in spec.budget.seeds}
    try:
        grid = [
            point
            for seed, chosen in examples.items()
            for point in run_seed(splits, len(tokenizer), chosen, seed, spec.bag_of_words, spec.task.metric)
        ]
    except ConvergenceWarning as warning:
        raise PipelineError(
            f"bag-of-words on {spec.task_name}: logistic regression did not converge ({warning}); raise bag_of_words.max_iterations"
        ) from None
    best = best_on_validation((point["regularization"], point["validation"]) for point in grid)  # the study's rule, as for the LR
    count = len(examples[spec.budget.seeds[0]])  # the same for every seed: the budget, capped at one epoch
    log.info("bag of words on %s: %d examples per seed, C=%g best on validation", spec.task_name, count, best)
    with atomic_path(args.out) as out:
        out.mkdir()
        write_json(
            out / "scores.json",
            {"task": spec.task_name, "metric": spec.task.metric, "num_examples": count, "best_regularization": best, "grid": grid},
        )
        inputs = {"task": Path(args.task_dir), "tokenizer": Path(args.tokenizer)}
        write_provenance(out, strict.to_plain(spec), inputs, outputs=[out / "scores.json"])  # the aggregate verifies it
