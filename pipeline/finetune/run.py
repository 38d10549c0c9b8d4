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
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

from pipeline import strict
from pipeline.config import FinetuningSpec, TaskSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, write_json
from pipeline.finetune.grid_result import GridResult
from pipeline.finetune.resume import PointStore, grid_fingerprint
from pipeline.finetune.selection import best_on_validation
from pipeline.finetune.sweep import Evaluation, Sweep
from pipeline.finetune.task_data import DOCUMENTS_FILE, SPLITS, read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.metrics import get_metric
from pipeline.model.backbone import WEIGHTS_FILE
from pipeline.model.numerics import use_numerics_for
from pipeline.provenance import write_provenance
from pipeline.tensorboard_log import EVENTS_DIR
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
    # Tasks scored on this job's fine-tuned models besides its own (TaskSpec.trained_with), by name.
    evaluated: dict[str, TaskSpec] = field(default_factory=dict)


def command_line(spec: str, model: str | Path, task_dir: str | Path, out: str | Path, *options: str) -> list[str]:
    """One fine-tuning job's command, as its rule runs it (``python -m pipeline finetune``), for a
    benchmark or a test that runs a job by hand; ``options``: the optional flags (``--work-dir``, ...)."""
    stage = [sys.executable, "-m", "pipeline", "finetune", "--spec", spec, "--model", str(model)]
    return [*stage, "--task-dir", str(task_dir), "--out", str(out), *options]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the fine-tuning run")
    parser.add_argument("--model", required=True, help="checkpoint directory (pretrained or initial weights)")
    parser.add_argument("--task-dir", required=True, help="prepared task (train/validation/test.jsonl, stats.json)")
    parser.add_argument(
        "--evaluated-task-dir",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a prepared task of the spec's 'evaluated', scored on every grid point's model (repeatable)",
    )
    parser.add_argument("--out", required=True, help="output directory for scores.json")
    parser.add_argument("--work-dir", type=Path, help="finished grid points, kept across interrupted attempts (none: no resume)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (the job's GPU, `resources: gpu=1`)")


def examples_identity(rows: list[dict]) -> str:
    """sha256 of the split's example ids in order."""
    return hashlib.sha256("\n".join(str(row["id"]) for row in rows).encode()).hexdigest()


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    use_numerics_for(device)  # no default device: the task types make their batches where the model is (pipeline.batch.device_of)
    spec = strict.parse_json(FinetuneRunSpec, args.spec, "finetune")
    finetuning = spec.finetuning
    tokenizer = load_saved_tokenizer(args.model)
    task_dirs = {spec.task_name: args.task_dir, **evaluated_task_dirs(args.evaluated_task_dir, spec)}
    tasks = {spec.task_name: spec.task, **spec.evaluated}
    rows, evaluations = {}, {}
    for name, task in tasks.items():
        stats, rows[name] = read_task(task_dirs[name])
        documents = read_documents(task_dirs[name])
        context = TaskContext(task, stats, tokenizer, finetuning.attention, spec.objective_kind, finetuning.input_format, documents)
        task_type = get_task_type(task.type)(context)
        # An evaluated task's training rows are not trained on: left unencoded.
        kept = {split: split_rows for split, split_rows in rows[name].items() if name == spec.task_name or split != "train"}
        splits = {split: task_type.encode_split(split_rows) for split, split_rows in kept.items()}
        evaluations[name] = Evaluation(task_type, splits, get_metric(task.metric), [get_metric(other) for other in task.also_metrics])
    own = evaluations.pop(spec.task_name)
    pretrained = own.task_type.load_pretrained(args.model).to(device)
    events = None if args.work_dir is None else Path(args.work_dir) / EVENTS_DIR  # beside the resume state: kept across attempts
    sweep = Sweep(own.task_type, pretrained, own.splits, finetuning, own.metric, own.also_metrics, evaluations, events)
    log.info(
        "%s on %s (%s): %s train / %s validation / %s test examples, %s attention, %s%s",
        spec.run,
        spec.task_name,
        spec.task.type,
        *(len(own.splits[name]) for name in ("train", "validation", "test")),
        own.task_type.attention,
        finetuning.precision,
        f"; scored on {', '.join(evaluations)} too" if evaluations else "",
    )
    store = None
    if args.work_dir is not None:
        task_files = [f"{split}.jsonl" for split in SPLITS] + [DOCUMENTS_FILE]  # what every task's results are read from
        recorded = [Path(args.model) / WEIGHTS_FILE, *(Path(d) / name for d in task_dirs.values() for name in task_files)]
        store = PointStore(args.work_dir, grid_fingerprint(args.spec, recorded))
        if len(store):
            log.info("resuming: %d grid point(s) finished by an earlier attempt (%s)", len(store), args.work_dir)
    grid = sweep.run_grid(f"finetune {spec.run} on {spec.task_name}", store)
    record = scores_record(spec, spec.task_name, own, rows[spec.task_name]["test"], [result for result, _ in grid])
    # What an evaluated task's own scores.json will hold (pipeline.finetune.evaluated writes it out).
    record["evaluated"] = {
        name: scores_record(spec, name, evaluation, rows[name]["test"], [elsewhere[name] for _, elsewhere in grid])
        for name, evaluation in evaluations.items()
    }
    with atomic_path(args.out) as out:
        out.mkdir()
        inputs = {"model": Path(args.model) / WEIGHTS_FILE, **{f"task {name}": directory for name, directory in task_dirs.items()}}
        write_json(out / "scores.json", record)
        if events is not None and events.is_dir():
            shutil.copytree(events, out / EVENTS_DIR)
        # scores.json recorded: a task trained with this one is written out of it (pipeline.finetune.evaluated), verified.
        write_provenance(out, strict.to_plain(spec), inputs, outputs=[out / "scores.json"])
    if store is not None:
        store.remove()


def evaluated_task_dirs(pairs: list[str], spec: FinetuneRunSpec) -> dict[str, str]:
    """``NAME=DIR`` arguments as {name: dir}, exactly the spec's ``evaluated`` tasks."""
    dirs = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
    if len(dirs) != len(pairs) or set(dirs) != set(spec.evaluated):
        raise PipelineError(
            f"--evaluated-task-dir {pairs}: give NAME=DIR once for each task of the spec's evaluated ({sorted(spec.evaluated)})"
        )
    return dirs


def lr_choice(finetuning: FinetuningSpec) -> str:
    """Whose validation scores choose the learning rate: "every seed" (the full grid), or "seeds 0"."""
    if finetuning.selection_seeds is None:
        return "every seed"
    return "seeds " + ", ".join(str(seed) for seed in finetuning.seeds_at_every_rate)


def grid_protocol(task: TaskSpec, finetuning: FinetuningSpec, trained_on: str) -> dict[str, str]:
    """How a grid of ``task`` is fine-tuned under ``finetuning`` on the rows of task ``trained_on``:
    study-results pairs with the study only under its head, input, precision, text, rows and
    batches, and study-cells marks a cell comparable only under those and its LR choice
    (pipeline/external/study_protocol.py's PROTOCOL_KEYS)."""
    return {
        "task_type": task.type,
        "input_format": finetuning.input_format,
        "precision": finetuning.precision,
        "text": "raw" if task.raw_text else "cleaned",
        "rows": "deduplicated" if task.deduplicate else "all",
        "batches": "grouped by length" if finetuning.group_by_length else "random",
        "lr_warmup": finetuning.lr_warmup,
        # the reduced grid (selection_seeds) runs its other seeds at the rate these chose alone
        "learning_rate_chosen_on": lr_choice(finetuning),
        # The task whose training rows fine-tuned the models (itself unless TaskSpec.trained_with).
        "trained_on": trained_on,
    }


def scores_record(spec: FinetuneRunSpec, task_name: str, evaluation: Evaluation, test_rows: list[dict], grid: list[GridResult]) -> dict:
    """One task's ``scores.json``: every grid point of ``grid``, how it was fine-tuned, and the learning rate
    the study's protocol takes: the best mean validation score of this task over the selection seeds."""
    task, metric, finetuning = evaluation.task_type.context.task, evaluation.metric, spec.finetuning
    selecting = finetuning.seeds_at_every_rate
    return {
        "task": task_name,
        "family": task.family,
        "metric": task.metric,
        "metric_headline": metric.headline,  # the key of test_scores the headline (each point's test) is
        **grid_protocol(task, finetuning, spec.task_name),
        "higher_is_better": metric.higher_is_better,
        "run": spec.run,
        "objective": spec.objective,
        "objective_kind": spec.objective_kind,
        "size": spec.size,
        "attention": evaluation.task_type.attention,  # NIAH: the objective's generative pattern
        "pretraining_step": spec.pretraining_step,
        # Which test examples, in which order, the per-example scores are of: two lists
        # pair example by example only under the same identity (and the same metric),
        # and with the study's only where the test split is the study's.
        "test_source": task.test_source,
        "test_examples_identity": examples_identity(test_rows),
        "selection_seeds": list(selecting),  # the seeds that ran every rate (every seed on the study's full grid)
        "chosen_learning_rate": best_on_validation((r.learning_rate, r.validation) for r in grid if r.seed in selecting),
        "grid": [dataclasses.asdict(result) for result in grid],
    }
