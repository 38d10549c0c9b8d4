"""``python -m pipeline finetune``: one pretrained model on one task, its LR x seed grid (``Sweep.run_grid``).

Any task type (``TaskSpec.type``, see :mod:`pipeline.finetune.task_types`) runs through
the same sweep. Writes ``scores.json`` (every grid point's validation and test headline
score, and the metric's whole result as ``validation_scores`` / ``test_scores``) and
``provenance.json``. Choosing the best LR and the confidence intervals is the report's
job, so the raw grid stays available.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from pipeline import strict
from pipeline.config import FinetuningSpec, TaskSpec
from pipeline.files import atomic_path, write_json
from pipeline.finetune.sweep import Sweep
from pipeline.finetune.task_data import read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.metrics import get_metric
from pipeline.model.backbone import WEIGHTS_FILE
from pipeline.model.kernels import use_kernels_for
from pipeline.provenance import write_provenance
from pipeline.tokenization.saved import load_saved_tokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinetuneRunSpec:
    task_name: str
    task: TaskSpec
    run: str
    objective: str
    objective_kind: str  # "clm", "mlm", ..., or "random" for the untrained baseline
    size: str
    finetuning: FinetuningSpec
    pretraining_step: int | None = None  # an intermediate checkpoint (learning curves); None for the final model


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the fine-tuning run")
    parser.add_argument("--model", required=True, help="checkpoint directory (pretrained or initial weights)")
    parser.add_argument("--task-dir", required=True, help="prepared task (train/validation/test.jsonl, stats.json)")
    parser.add_argument("--out", required=True, help="output directory for scores.json")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (the job's GPU, `resources: gpu=1`)")


def use_device(device: torch.device) -> None:
    """Compute on ``device`` from here on, with its kernels (:mod:`pipeline.model.kernels`).

    On a GPU every tensor the task types make (padded batches, labels, positions) is made
    there by default, so no task type needs to know where it runs; PyTorch's device
    context adds a little Python overhead per op, small beside the kernels of a model
    worth a GPU.
    """
    use_kernels_for(device)
    if device.type != "cpu":
        torch.set_default_device(device)


def examples_identity(rows: list[dict]) -> str:
    """sha256 of the split's example ids in order."""
    return hashlib.sha256("\n".join(str(row["id"]) for row in rows).encode()).hexdigest()


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    use_device(device)
    spec = strict.parse_json(FinetuneRunSpec, args.spec, "finetune")
    finetuning = spec.finetuning
    metric = get_metric(spec.task.metric)
    stats, rows = read_task(args.task_dir)
    tokenizer = load_saved_tokenizer(args.model)
    task_type = get_task_type(spec.task.type)(
        TaskContext(
            spec.task, stats, tokenizer, finetuning.attention, spec.objective_kind, finetuning.input_format, read_documents(args.task_dir)
        )
    )
    splits = {name: task_type.encode_split(split_rows) for name, split_rows in rows.items()}
    also_metrics = [get_metric(name) for name in spec.task.also_metrics]
    sweep = Sweep(task_type, task_type.load_pretrained(args.model).to(device), splits, finetuning, metric, also_metrics)
    log.info(
        "%s on %s (%s): %s train / %s validation / %s test examples, %s attention, %s",
        spec.run, spec.task_name, spec.task.type, *(len(splits[name]) for name in ("train", "validation", "test")),
        task_type.attention, finetuning.precision,
    )  # fmt: skip
    results = [dataclasses.asdict(result) for result in sweep.run_grid(f"finetune {spec.run} on {spec.task_name}")]
    with atomic_path(args.out) as out:
        out.mkdir()
        write_provenance(out, strict.to_plain(spec), {"model": Path(args.model) / WEIGHTS_FILE, "task": args.task_dir})
        write_json(
            out / "scores.json",
            {
                "task": spec.task_name,
                "family": spec.task.family,
                "metric": spec.task.metric,
                # How it was fine-tuned: study-results pairs with the study only under its head, input and precision.
                "task_type": spec.task.type,
                "input_format": finetuning.input_format,
                "precision": finetuning.precision,
                "higher_is_better": metric.higher_is_better,
                "run": spec.run,
                "objective": spec.objective,
                "objective_kind": spec.objective_kind,
                "size": spec.size,
                "attention": task_type.attention,  # NIAH: the objective's generative pattern
                "pretraining_step": spec.pretraining_step,
                # Which test examples, in which order, the per-example scores are of: two lists
                # pair example by example only under the same identity (and the same metric),
                # and with the study's only where the test split is the study's.
                "test_source": spec.task.test_source,
                "test_examples_identity": examples_identity(rows["test"]),
                "grid": results,
            },
        )
