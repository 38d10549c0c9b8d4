"""What each GPU job of a plan asks its scheduler for (time, host memory, GPUs, CPUs), from the cost estimate.

The rules give these as a job's ``resources:`` and ``threads:`` when the config computes on
GPUs (a CPU run keeps Snakemake's defaults), so the SLURM profile names no per-rule number:

* **time**: the job's estimated wall hours (:mod:`pipeline.workflow.cost`, at the measured MFU where
  one is recorded) with ``hardware.runtime_margin``, at most ``hardware.max_job_hours``. A job
  estimated beyond the limit is split over consecutive attempts, each resuming where the last
  stopped (pretraining at its last saved step, a fine-tuning grid at its next point); it
  takes ``attempts`` of them, and one needing more than ``hardware.job_attempts`` stops the plan.
* **host memory**: what the job's processes hold in RAM beside their GPUs, itemised below.
  Its allowances are not measured on a GPU node (the CPU runs here keep activations in RAM
  too): they are upper bounds to be replaced by ``sacct``'s MaxRSS after a first paper job.
* **GPUs** and **CPUs**: ``hardware.gpus_per_run`` for pretraining and ``finetune_gpus``
  otherwise; ``hardware.cpus_per_gpu`` CPU cores per GPU (data loading, tokenized batches).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.config import Config
from pipeline.pretrain.plan import RunPlan
from pipeline.workflow.cost import (
    GB,
    JobCost,
    Lengths,
    Plans,
    finetuning_job_cost,
    finetuning_job_hours,
    minimal_pairs_hours,
    minimal_pairs_job_cost,
    parameters,
    pretraining_job_cost,
    pretraining_job_hours,
)
from pipeline.workflow.targets import Job

# One Python process with torch, its CUDA libraries and the pipeline imported, before it loads a model
# (~0.4 GB on a CPU here; the CUDA libraries add ~1-3 GB on a GPU node: an allowance, rounded up).
PROCESS_BASELINE_BYTES = 4 * GB
# A fine-tuning job's tokenized splits and, for retrieval, its judged corpora (the largest paper
# task, MS MARCO's pairs with its three IR test sets, is ~1 GB of JSON Lines): an allowance.
TASK_DATA_BYTES = 8 * GB
MEMORY_MARGIN = 1.25


@dataclass(frozen=True)
class JobRequest:
    """One job's request: ``runtime`` minutes per attempt, ``mem_mb`` of host memory, ``gpus``, ``cpus``."""

    runtime: int
    mem_mb: int
    gpus: int
    cpus: int
    estimated_hours: float  # the estimate with its margin; above max_job_hours, it takes several attempts

    def attempts(self) -> int:
        """Attempts the job needs at its time limit, each resuming the last."""
        return max(1, math.ceil(round(60 * self.estimated_hours) / self.runtime))  # whole minutes, as the limit is


def request(config: Config, hours: float, host_bytes: float, gpus: int) -> JobRequest:
    """The request of a job estimated at ``hours`` (margin included) and ``host_bytes`` of RAM."""
    hardware = config.hardware
    runtime = max(1, min(round(60 * hours), round(60 * hardware.max_job_hours)))
    mem_mb = math.ceil(MEMORY_MARGIN * host_bytes / GB) * 1000
    return JobRequest(runtime, mem_mb, gpus, max(1, gpus) * hardware.cpus_per_gpu, hours)


def weight_bytes(config: Config, size: str) -> int:
    """Float32 weights of a ``size`` model, as it is loaded on the CPU before it moves to its GPU."""
    return 4 * parameters(config.sizes[size], config.tokenizer.vocab_size).total


def pretraining_request(config: Config, plan: RunPlan) -> JobRequest:
    """One pretraining job: every process loads the starting weights on the CPU, and rank 0 also
    gathers the full resume state there (float32 weights and AdamW's two moments: 3 x the weights)."""
    hardware = config.hardware
    weights = weight_bytes(config, plan.size)
    host = max(hardware.gpus_per_run, 1) * (PROCESS_BASELINE_BYTES + weights) + 3 * weights
    return request(config, hardware.runtime_margin * pretraining_job_hours(config, plan), host, hardware.gpus_per_run)


def sized(config: Config, size: str | None) -> str:
    """The config size a model is costed at: its own, or (an outside model of no config size) the largest."""
    return size if size is not None else max(config.sizes, key=lambda s: parameters(config.sizes[s], 1).total)


def finetuning_request(config: Config, task: str, size: str | None) -> JobRequest:
    """One fine-tuning job, a model's whole grid on ``task``: the checkpoint as read and the model
    it fills (2 x the weights), and the task's data. An outside model of no config size is given
    the limit and the largest size's memory."""
    hardware = config.hardware
    hours = hardware.max_job_hours if size is None else hardware.runtime_margin * finetuning_job_hours(config, task, size)
    host = PROCESS_BASELINE_BYTES + 2 * weight_bytes(config, sized(config, size)) + TASK_DATA_BYTES
    return request(config, hours, host, hardware.finetune_gpus)


def minimal_pairs_request(config: Config, size: str | None) -> JobRequest:
    """One minimal-pairs job: the model as fine-tuning loads it, and the pairs (small)."""
    assert config.minimal_pairs is not None, "minimal pairs are requested only where the config scores them"
    size = sized(config, size)
    host = PROCESS_BASELINE_BYTES + 2 * weight_bytes(config, size) + 1 * GB
    hours = config.hardware.runtime_margin * minimal_pairs_hours(config, config.minimal_pairs, size)
    return request(config, hours, host, config.hardware.finetune_gpus)


def job_size(config: Config, wildcards: Mapping[str, str]) -> str | None:
    """The size of the model a job reads: its wildcard, or an outside model's config size."""
    return wildcards["size"] if "size" in wildcards else config.outside_model(wildcards["name"]).size


@dataclass(frozen=True)
class GpuJob:
    """What a rule whose jobs compute on GPUs declares (``@rule(..., gpu=...)`` in
    :mod:`pipeline.workflow.rule_params`): which GPU count its jobs take, their request, and what
    each adds to the estimate (``python -m pipeline cost`` iterates the registered GPU rules)."""

    pretraining: bool  # hardware.gpus_per_run GPUs a job; else hardware.finetune_gpus
    request: Callable[[Config, Plans, Mapping[str, str]], JobRequest]
    cost: Callable[[Config, Plans, Mapping[str, str], Lengths], JobCost | None]

    def gpus(self, config: Config) -> int:
        return config.hardware.gpus_per_run if self.pretraining else config.hardware.finetune_gpus


def run_plan(plans: Plans, wildcards: Mapping[str, str]) -> RunPlan:
    return plans[f"{wildcards['name']}-{wildcards['size']}"]


PRETRAINING = GpuJob(
    True,
    lambda config, plans, w: pretraining_request(config, run_plan(plans, w)),
    lambda config, plans, w, lengths: pretraining_job_cost(config, run_plan(plans, w)),
)
FINETUNING = GpuJob(
    False,
    lambda config, plans, w: finetuning_request(config, w["task"], job_size(config, w)),
    lambda config, plans, w, lengths: finetuning_job_cost(config, w["task"], job_size(config, w), lengths),
)
MINIMAL_PAIRS = GpuJob(
    False,
    lambda config, plans, w: minimal_pairs_request(config, job_size(config, w)),
    lambda config, plans, w, lengths: minimal_pairs_job_cost(config, job_size(config, w)),
)


def job_request(config: Config, plans: Plans, gpu_job: GpuJob | None, wildcards: Mapping[str, str]) -> JobRequest | None:
    """The request of one job of a rule declaring ``gpu_job`` (None: a rule that runs on CPUs, or a CPU config)."""
    if gpu_job is None or gpu_job.gpus(config) == 0:
        return None
    return gpu_job.request(config, plans, wildcards)


def rule_resources(config: Config, plans: Plans, gpu_job: GpuJob | None) -> dict[str, Any]:
    """A rule's Snakemake resources: its GPUs and, when it has any, each job's time limit and host
    memory from its request; on CPUs Snakemake's defaults. Like any resource, changing them reruns nothing."""
    gpus = 0 if gpu_job is None else gpu_job.gpus(config)
    if gpus == 0:
        return {"gpu": 0}

    def estimated(field: str) -> Callable[[Mapping[str, str]], int]:
        return lambda wildcards: getattr(job_request(config, plans, gpu_job, dict(wildcards.items())), field)

    return {"gpu": gpus, "runtime": estimated("runtime"), "mem_mb": estimated("mem_mb")}


def rule_threads(config: Config, plans: Plans, gpu_job: GpuJob | None, on_cpus: int = 1) -> Callable[[Mapping[str, str]], int]:
    """A rule's cores per job: hardware.cpus_per_gpu per GPU on GPUs, else ``on_cpus``."""

    def threads(wildcards: Mapping[str, str]) -> int:
        request = job_request(config, plans, gpu_job, dict(wildcards.items()))
        return on_cpus if request is None else request.cpus

    return threads


def job_requests(config: Config, plans: Plans, jobs: Iterable[Job], gpu_jobs: Mapping[str, GpuJob]) -> list[tuple[Job, JobRequest]]:
    """Every GPU job of ``jobs`` (:func:`pipeline.workflow.targets.every_job`) with its request;
    ``gpu_jobs``: each GPU rule's declaration (:func:`pipeline.workflow.rule_params.gpu_jobs`)."""
    found = ((job, job_request(config, plans, gpu_jobs.get(job.rule), job.wildcards)) for job in jobs)
    return [(job, asked) for job, asked in found if asked is not None]


def described(job: Job, gpu_job: GpuJob) -> str:
    """A GPU job in words, for a refusal: "pretraining run 'mlm-1b'", "fine-tuning clm-210m on 'sst2'"."""
    wildcards = job.wildcards
    model = "-".join(wildcards[key] for key in ("name", "size") if key in wildcards)
    model += f" at step {wildcards['step']}" if "step" in wildcards else ""
    if gpu_job.pretraining:
        return f"pretraining run {model!r}"
    return f"fine-tuning {model} on {wildcards['task']!r}" if "task" in wildcards else f"scoring the minimal pairs with {model}"


def check_job_limits(config: Config, plans: Plans, jobs: Iterable[Job], gpu_jobs: Mapping[str, GpuJob]) -> None:
    """A GPU job of the plan that would need more attempts than ``hardware.job_attempts``, or more
    host memory than ``hardware.node_memory_gb``, is refused at plan time, before anything is submitted."""
    hardware = config.hardware
    for job, asked in job_requests(config, plans, jobs, gpu_jobs):
        job_text = described(job, gpu_jobs[job.rule])
        if asked.attempts() > hardware.job_attempts:
            raise ValueError(
                f"hardware: {job_text} is estimated at {asked.estimated_hours:,.0f} hours on {max(asked.gpus, 1)} GPU(s) (margin"
                f" included), more than max_job_hours {hardware.max_job_hours:g} x job_attempts {hardware.job_attempts}: raise"
                " job_attempts or max_job_hours, or gpus_per_run (pretraining), or shrink the task's grid (finetuning.by_task)"
            )
        if asked.mem_mb > 1000 * hardware.node_memory_gb:
            raise ValueError(
                f"hardware: {job_text} is estimated to need {asked.mem_mb / 1000:,.0f} GB of host memory, more than"
                f" node_memory_gb {hardware.node_memory_gb:g}: raise node_memory_gb to your nodes' memory, or lower gpus_per_run"
            )


def format_requests(config: Config, plans: Plans, jobs: Iterable[Job], gpu_jobs: Mapping[str, GpuJob]) -> str:
    """Each GPU rule's jobs and what they ask for, as the plan submits them (an empty string on CPUs)."""
    by_rule: dict[str, list[JobRequest]] = {}
    for job, asked in job_requests(config, plans, jobs, gpu_jobs):
        by_rule.setdefault(job.rule, []).append(asked)
    if not by_rule:
        return ""
    hardware = config.hardware
    lines = [
        f"Job requests (pipeline/workflow/job_resources.py: time = estimate x {hardware.runtime_margin:g},"
        f" at most {hardware.max_job_hours:g} h per attempt; host memory itemised, x {MEMORY_MARGIN:g}):",
        f"  {'rule':<26}{'jobs':>6}{'time per attempt (h)':>22}{'attempts':>10}{'GPU-h, margin':>17}{'host GB':>9}{'GPUs':>6}{'CPUs':>6}",
    ]
    for rule, requests in by_rule.items():
        hours = [r.runtime / 60 for r in requests]
        gpu_hours = sum(r.estimated_hours * max(r.gpus, 1) for r in requests)
        lines.append(
            f"  {rule:<26}{len(requests):>6}{f'{min(hours):.1f}-{max(hours):.1f}':>22}{max(r.attempts() for r in requests):>10}"
            f"{gpu_hours:>17,.0f}{max(r.mem_mb for r in requests) / 1000:>9.0f}{max(r.gpus for r in requests):>6}"
            f"{max(r.cpus for r in requests):>6}"
        )
    return "\n".join(lines)
