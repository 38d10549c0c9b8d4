"""``python -m pipeline progress``: where a workflow's GPU work stands in a working directory, and
the GPU-hours it has left, for a workstation run that is stopped and restarted (``make one-gpu``
prints it before it resumes).

Read from what the jobs leave, nothing run: a pretraining run is done when its ``summary.json``
exists, part-way at the step its resume state last saved (``progress.json`` beside
``state.pt``); a fine-tuning job is done when its ``scores.json`` exists, part-way by the grid
points its resume state holds. Hours are the cost estimate's (:mod:`pipeline.workflow.cost`) for what is
left of each: fine-tuning from the lengths measured on the tasks prepared there, from the datasets'
published records elsewhere (the cap without one).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Config
from pipeline.finetune.lengths import measured_lengths
from pipeline.pretrain.trainer import PROGRESS_FILE
from pipeline.workflow.configure import Resolved, resolve_in
from pipeline.workflow.cost import Lengths, finetuning_job_hours, pretraining_gpu_hours
from pipeline.workflow.record_lengths import with_records
from pipeline.workflow.rule_params import finetune_outputs, pretrain_work_dir
from pipeline.workflow.targets import finetuned, output, pretrain_runs


@dataclass(frozen=True)
class Work:
    """One GPU job: what it is, its estimated GPU-hours and the share of it done."""

    kind: str  # "pretrain" or "finetune"
    label: str
    hours: float
    done: float  # 0 .. 1
    position: str  # where it stands, for a part-way job


def pretraining_work(resolved: Resolved, directory: Path) -> list[Work]:
    config, work = resolved.config, []
    for name, size in pretrain_runs(resolved):
        plan = resolved.plans[f"{name}-{size}"]
        hours = pretraining_gpu_hours(config, plan)
        if (directory / output("pretrain", name=name, size=size)).is_file():
            work.append(Work("pretrain", plan.run, hours, 1.0, ""))
            continue
        saved = directory / pretrain_work_dir(name, size) / PROGRESS_FILE
        step = json.loads(saved.read_text())["step"] if saved.is_file() else plan.first_step
        share = (step - plan.first_step) / (plan.last_step - plan.first_step)
        work.append(Work("pretrain", plan.run, hours, share, f"{plan.run} at step {step:,} of {plan.last_step:,}"))
    return work


def finetuning_work(resolved: Resolved, directory: Path, lengths: Lengths) -> list[Work]:
    config = resolved.config
    work = []
    for task, name, size in finetuned(resolved):
        if config.tasks[task].trained_with is not None:  # scored in its trainer's jobs
            continue
        scores = output("finetune", task=task, name=name, size=size)
        hours = finetuning_job_hours(config, task, size, lengths.get(task))
        label = f"{task}/{name}-{size}"
        if (directory / scores).is_file():
            work.append(Work("finetune", label, hours, 1.0, ""))
            continue
        points = directory / finetune_outputs(str(Path(scores).parent))["work_dir"] / "points"
        finished = len(list(points.glob("*.json"))) if points.is_dir() else 0
        runs = config.finetuning.for_task(task).num_runs
        work.append(Work("finetune", label, hours, finished / runs, f"{label} at {finished} of {runs} grid points"))
    return work


def progress_line(config: Config, work: list[Work], lengths: Lengths) -> str:
    """One line: jobs done per kind, what is part-way, and the GPU-hours left."""
    parts = []
    for kind, what in (("pretrain", "pretraining runs"), ("finetune", "fine-tuning jobs")):
        jobs = [w for w in work if w.kind == kind]
        if jobs:
            running = [w.position for w in jobs if 0 < w.done < 1]
            parts.append(f"{sum(w.done == 1 for w in jobs)} of {len(jobs)} {what} done" + (f" ({'; '.join(running)})" if running else ""))
    left = sum(w.hours * (1 - w.done) for w in work)
    total = sum(w.hours for w in work)
    sources = Counter(tokens.source for tokens in lengths.values())
    said = [
        f"{sources[source]} task(s) {what}"
        for source, what in (("measured", "measured lengths"), ("record", "published lengths"))
        if sources[source]
    ]
    how = f"fine-tuning from {' and '.join(said)}" if said else "fine-tuning at the length cap (an upper bound)"
    return f"{'; '.join(parts)}; {left:,.1f} of {total:,.1f} GPU-hours left on one {config.hardware.gpu_name} (the cost estimate's: {how})"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--configfile", nargs="*", default=[], help="config files merged over config/default.yaml, as snakemake --configfile"
    )
    parser.add_argument("--directory", type=Path, default=Path("."), help="the workflow's working directory (snakemake --directory)")


def run(args: argparse.Namespace) -> None:
    directory = args.directory.resolve()
    resolved = resolve_in(args.configfile, directory)
    lengths = with_records(resolved.config, measured_lengths(resolved.config, directory))
    work = pretraining_work(resolved, directory) + finetuning_work(resolved, directory, lengths)
    print(progress_line(resolved.config, work, lengths))
