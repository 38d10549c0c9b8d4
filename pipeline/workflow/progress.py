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
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Config
from pipeline.errors import first_line
from pipeline.finetune.lengths import measured_lengths
from pipeline.pretrain.plan import RunPlan
from pipeline.pretrain.spec_digest import spec_digest
from pipeline.pretrain.trainer import PROGRESS_FILE
from pipeline.workflow.configure import Resolved, resolve_in
from pipeline.workflow.cost import Lengths, finetuning_job_hours, pretraining_gpu_hours
from pipeline.workflow.jobs import pretrain_spec
from pipeline.workflow.record_lengths import with_records
from pipeline.workflow.rule_params import finetune_outputs, pretrain_work_dir
from pipeline.workflow.targets import finetuned, output, pretrain_runs

logger = logging.getLogger(__name__)


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
        step = saved_step(saved, plan, spec_digest(json.loads(pretrain_spec(config, plan)))) if saved.is_file() else plan.first_step
        share = (step - plan.first_step) / (plan.last_step - plan.first_step)
        work.append(Work("pretrain", plan.run, hours, share, f"{plan.run} at step {step:,} of {plan.last_step:,}"))
    return work


def saved_step(path: Path, plan: RunPlan, digest: str) -> int:
    """The step a run's resume state holds, as its ``progress.json`` says; the run's first step where
    that file cannot count (unreadable, not the state of this config's run, a step outside the run),
    said in one line naming it. The progress line only reads: the job's own resume decides what
    resumes, so a bad file here never stops a recovery."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        step, digest_saved = saved["step"], saved["spec_digest"]
        if not isinstance(step, int) or isinstance(step, bool) or not isinstance(digest_saved, str):
            raise TypeError(f"step {step!r} and spec_digest {digest_saved!r} are not an integer and a string")
    except (OSError, ValueError, KeyError, TypeError) as error:  # not JSON, a list, a missing key, a wrong type
        logger.warning("%s: not counted (%s: %s); the job's own resume decides", path, type(error).__name__, first_line(error))
        return plan.first_step
    if digest_saved != digest:
        logger.warning("%s: not counted: saved by a run of another config (its spec has changed); the job will not resume it", path)
        return plan.first_step
    if not plan.first_step <= step <= plan.last_step:
        logger.warning("%s: not counted: step %s is outside the run's steps %s-%s", path, step, plan.first_step, plan.last_step)
        return plan.first_step
    return step


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
