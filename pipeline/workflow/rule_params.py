"""The rerun contract: every rule's params, by rule, as a function of the resolved config and
the job's wildcards.

Snakemake reruns a job when one of its params changes, so a job's params are exactly what
its result depends on besides its input files: its slice of the config (a spec from
:mod:`pipeline.workflow.jobs`, or a value), the paths it is told to read and write, and ``code``,
the hash of every file its job can run (:func:`pipeline.code_graph.stage_code`, narrowed to the
registry members the job uses by :mod:`pipeline.workflow.job_code`). The
rules take their params from here (``params: **rule_params("finetune")`` in
``rules/common.smk``), and the tests compare :func:`params` of every job
(:func:`pipeline.workflow.targets.every_job`) between two configs to pin which jobs a change reruns.
Params that depend on a job's resources (its device, its launcher) stay in the rules: a
resource changed reruns nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline import strict
from pipeline.__main__ import STAGES
from pipeline.code_graph import Uses, stage_code
from pipeline.config import RANDOM_INIT, ReportSpec
from pipeline.config.replicates import arm_of, is_random_init, replicate_name
from pipeline.result_kinds import RESULT_KINDS
from pipeline.workflow import jobs
from pipeline.workflow.configure import Resolved
from pipeline.workflow.job_code import bag_of_words_uses, model_and_task_uses, model_uses
from pipeline.workflow.job_resources import FINETUNING, MINIMAL_PAIRS, PRETRAINING, GpuJob
from pipeline.workflow.targets import objective_kind, run_objective

Wildcards = Mapping[str, str]
ParamsOf = Callable[[Resolved, Wildcards], dict[str, Any]]

UsesOf = Callable[[Resolved, Wildcards], Uses]  # the registry members one job runs (pipeline/workflow/job_code.py)


@dataclass(frozen=True)
class Rule:
    """What the package knows of a rule: the stage it runs, its params but code, the registry
    members its jobs run (None: every registry whole), for a rule computing on GPUs its kind of
    GPU job (what it asks the scheduler for and what the estimate costs), and for a rule whose
    outputs the aggregate reads, the kind of result they are (pipeline/result_kinds.py)."""

    stage: str
    params_of: ParamsOf
    uses: UsesOf | None = None
    gpu: GpuJob | None = None
    results: str | None = None


RULES: dict[str, Rule] = {}


def rule(
    name: str, stage: str, uses: UsesOf | None = None, gpu: GpuJob | None = None, results: str | None = None
) -> Callable[[ParamsOf], ParamsOf]:
    def register(params_of: ParamsOf) -> ParamsOf:
        if stage not in STAGES:
            raise ValueError(f"rule {name!r}: no stage {stage!r}")
        if results is not None and results not in RESULT_KINDS:
            raise ValueError(f"rule {name!r}: no result kind {results!r} (pipeline/result_kinds.py: {', '.join(RESULT_KINDS)})")
        RULES[name] = Rule(stage, params_of, uses, gpu, results)
        return params_of

    return register


def gpu_jobs() -> dict[str, GpuJob]:
    """Each rule computing on GPUs, with its kind of GPU job."""
    return {name: spec.gpu for name, spec in RULES.items() if spec.gpu is not None}


@functools.cache
def code_of(stage: str, uses: Uses = ()) -> str:
    return stage_code(STAGES[stage][0], uses=uses)


def job_uses(resolved: Resolved, rule_name: str, wildcards: Wildcards) -> Uses:
    uses = RULES[rule_name].uses
    return () if uses is None else uses(resolved, wildcards)


def params(resolved: Resolved, rule_name: str, wildcards: Wildcards) -> dict[str, Any]:
    """The params of one job of ``rule_name``: its own, then the hash of the code it runs (its
    stage's, with only the registry members the job uses: pipeline/workflow/job_code.py)."""
    spec = RULES[rule_name]
    return {**spec.params_of(resolved, wildcards), "code": code_of(spec.stage, job_uses(resolved, rule_name, wildcards))}


# ------------------------------------------------------------------ data and tokens


@rule("fetch", "fetch")
def fetch(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {"spec": jobs.as_json(resolved.config.sources[w["source"]]), "out": f"results/sources/{w['source']}"}


# Task keys that matter to fine-tuning only: leaving them out of the data's spec keeps a change
# from re-preparing the data (and, through decontamination, the whole corpus).
FINETUNING_ONLY_TASK_KEYS = ("max_length", "also_metrics")


@rule("prepare_task", "prepare-task", results="task_stats")
def prepare_task(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    spec = strict.to_plain(resolved.config.tasks[w["task"]])
    return {
        "spec": json.dumps({key: value for key, value in spec.items() if key not in FINETUNING_ONLY_TASK_KEYS}, sort_keys=True),
        "out": f"results/data/tasks/{w['task']}",
    }


@rule("prepare_corpus", "prepare-corpus")
def prepare_corpus(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config = resolved.config
    return {"spec": jobs.as_json(config.corpus), "tasks": [f"results/data/tasks/{task}" for task in config.finetuning.tasks]}


@rule("gather_corpus", "gather-corpus")
def gather_corpus(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {"out": "results/data/corpus"}


@rule("train_tokenizer", "train-tokenizer")
def train_tokenizer(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    tokenizer = resolved.config.tokenizer
    return {"spec": jobs.as_json(tokenizer), "corpus": ["--corpus", "results/data/corpus"] if tokenizer.ready_made is None else []}


@rule("pack", "pack")
@rule("pack_outside", "pack")
def pack(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {}


@rule("index_tokens", "index-tokens")
def index_tokens(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {"out": "results/tokens"}


@rule("index_tokens_outside", "index-tokens")
def index_tokens_outside(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {"out": f"results/outside/{w['name']}/tokens"}


@rule("prepare_minimal_pairs", "prepare-minimal-pairs")
def prepare_minimal_pairs(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config = resolved.config
    return {"spec": jobs.as_json(config.minimal_pairs), "seed": config.seed, "out": "results/data/minimal_pairs"}


# ------------------------------------------------------------------ models


def max_model_length(resolved: Resolved) -> int:
    """A bound on the longest sequence any stage feeds the backbone, in tokens.

    Span corruption appends its targets (T + 2 x spans + 2 <= 3T + 1 for a block of T);
    RoPE has no parameters, so the bound costs nothing.
    """
    config = resolved.config
    return max([3 * config.pretraining.sequence_length + 1] + [config.tasks[t].max_length for t in config.finetuning.tasks])


@rule("initialize", "initialize")
def initialize(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    # Replicate i of a size starts from the weights of seed config.seed + i.
    config = resolved.config
    return {
        "size": jobs.as_json(config.sizes[w["size"]]),
        "max_length": max_model_length(resolved),
        "seed": config.seed + arm_of(w["name"])[1],
    }


def pretrain_start_dir(resolved: Resolved, name: str, size: str) -> str:
    """The weights a run starts from: the initial weights of its seed, another run's final
    model or checkpoint (a second stage, continued pretraining), or an imported model."""
    plan = resolved.plans[f"{name}-{size}"]
    start = plan.start
    if start.kind == "initial":
        return f"results/init/{replicate_name(RANDOM_INIT, plan.replicate)}-{size}"
    if start.kind == "final":
        return f"results/pretrain/{start.run}/model"
    if start.kind == "outside":
        return f"results/outside/{start.run}/model"
    return f"results/pretrain/{start.run}/checkpoints/step-{start.step:06d}"


def pretrain_tokens(resolved: Resolved, name: str, size: str) -> str:
    """The packed corpus a run reads: the harness's, or an outside base's (packed with its own tokenizer)."""
    start = resolved.plans[f"{name}-{size}"].start
    return f"results/outside/{start.run}/tokens" if start.kind == "outside" else "results/tokens"


@rule("pretrain", "pretrain", uses=model_uses, gpu=PRETRAINING, results="summaries")
def pretrain(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    name, size = w["name"], w["size"]
    return {
        "spec": jobs.pretrain_spec(resolved.config, resolved.plans[f"{name}-{size}"]),
        "start": pretrain_start_dir(resolved, name, size),
        "tokens": pretrain_tokens(resolved, name, size),
        "out": f"results/pretrain/{name}-{size}",
        "work_dir": pretrain_work_dir(name, size),
    }


def pretrain_work_dir(name: str, size: str) -> str:
    """A pretraining job's resume state (its state.pt, progress.json and checkpoints)."""
    return f"results/resume/pretrain/{name}-{size}"


@rule("import_model", "import-model", uses=model_uses)
def import_model(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config = resolved.config
    return {"spec": jobs.as_json(config.outside_model(w["name"])), "sentinels": config.tokenizer.num_sentinel_tokens}


# ------------------------------------------------------------------ fine-tuning and zero-shot


def final_model(name: str, size: str) -> str:
    """A final model's weights: a pretrained run's, or random init's initial weights."""
    return f"results/init/{name}-{size}" if is_random_init(name) else f"results/pretrain/{name}-{size}/model"


def checkpoint(name: str, size: str, step: str) -> str:
    return f"results/pretrain/{name}-{size}/checkpoints/step-{int(step):06d}"


def finetune_outputs(out: str) -> dict[str, str]:
    """A fine-tuning job's output folder, and its resume state's (finished grid points across
    attempts, pipeline.finetune.resume): the same path under results/resume/."""
    return {"out": out, "work_dir": "results/resume/" + out.removeprefix("results/")}


def evaluated_task_dirs(resolved: Resolved, task: str) -> list[str]:
    """The fine-tuning command's arguments naming the prepared tasks scored on its models besides ``task``."""
    return [
        arg for other in resolved.config.evaluated_with(task) for arg in ("--evaluated-task-dir", f"{other}=results/data/tasks/{other}")
    ]


@rule("finetune", "finetune", uses=model_and_task_uses, gpu=FINETUNING, results="scores")
def finetune(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    task, name, size = w["task"], w["name"], w["size"]
    spec = jobs.finetune_spec(resolved.config, task, name, size, objective_kind(resolved, name, size), None)
    return {
        "spec": spec,
        "model": final_model(name, size),
        "task_dir": f"results/data/tasks/{task}",
        "evaluated_task_dirs": evaluated_task_dirs(resolved, task),
        **finetune_outputs(f"results/finetune/{task}/{name}-{size}"),
    }


@rule("finetune_checkpoint", "finetune", uses=model_and_task_uses, gpu=FINETUNING, results="curve_scores")
def finetune_checkpoint(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    task, name, size, step = w["task"], w["name"], w["size"], w["step"]
    spec = jobs.finetune_spec(resolved.config, task, name, size, objective_kind(resolved, name, size), int(step))
    return {
        "spec": spec,
        "model": checkpoint(name, size, step),
        "task_dir": f"results/data/tasks/{task}",
        "evaluated_task_dirs": evaluated_task_dirs(resolved, task),
        **finetune_outputs(f"results/finetune/{task}/{name}-{size}-step{step}"),
    }


@rule("finetune_outside", "finetune", uses=model_and_task_uses, gpu=FINETUNING, results="outside_scores")
def finetune_outside(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config, task, name = resolved.config, w["task"], w["name"]
    return {
        "spec": jobs.finetune_spec(config, task, name, "outside", config.outside_model(name).objective, None),
        "model": f"results/outside/{name}/model",
        "task_dir": f"results/data/tasks/{task}",
        "evaluated_task_dirs": evaluated_task_dirs(resolved, task),
        **finetune_outputs(f"results/finetune_outside/{task}/{name}"),
    }


@rule("finetune_evaluated", "finetune-evaluated")
def finetune_evaluated(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    """A task trained with another (``TaskSpec.trained_with``): its scores, out of the trainer's job
    on the same model (``finetuned``: finetune or finetune_outside; ``model``: run, checkpoint or outside model)."""
    finetuned, task, model = w["finetuned"], w["task"], w["model"]
    return {"trained": f"results/{finetuned}/{resolved.config.trainer_of(task)}/{model}", "out": f"results/{finetuned}/{task}/{model}"}


@rule("bag_of_words", "bag-of-words", uses=bag_of_words_uses, results="bag_of_words")
def bag_of_words(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    # What the reference reads of the task's protocol (its example budget, the attention that
    # frames its inputs) and no more, so that a learning rate changed does not rerun it.
    config, task = resolved.config, w["task"]
    finetuning = config.finetuning.for_task(task)
    spec = {
        "task_name": task,
        "task": dataclasses.replace(config.tasks[task], also_metrics=()),  # the reference scores the headline metric only
        "budget": finetuning.budget,
        "attention": finetuning.attention,
        "bag_of_words": config.bag_of_words,
    }
    return {"spec": jobs.as_json(spec), "task_dir": f"results/data/tasks/{task}", "out": f"results/baselines/{task}/bag_of_words"}


@rule("minimal_pairs", "minimal-pairs", uses=model_uses, gpu=MINIMAL_PAIRS, results="minimal_pairs")
def minimal_pairs(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    name, size = w["name"], w["size"]
    spec = jobs.minimal_pairs_spec(resolved.config, name, size, run_objective(resolved, name, size), None)
    return {"spec": spec, "model": final_model(name, size), "out": f"results/zeroshot/minimal_pairs/{name}-{size}"}


@rule("minimal_pairs_checkpoint", "minimal-pairs", uses=model_uses, gpu=MINIMAL_PAIRS, results="minimal_pairs")
def minimal_pairs_checkpoint(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    name, size, step = w["name"], w["size"], w["step"]
    spec = jobs.minimal_pairs_spec(resolved.config, name, size, run_objective(resolved, name, size), int(step))
    return {"spec": spec, "model": checkpoint(name, size, step), "out": f"results/zeroshot/minimal_pairs/{name}-{size}-step{step}"}


@rule("minimal_pairs_outside", "minimal-pairs", uses=model_uses, gpu=MINIMAL_PAIRS, results="minimal_pairs")
def minimal_pairs_outside(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    # An outside model is scored as the objective kind its entry names (which picks its score).
    name = w["name"]
    spec = {"kind": resolved.config.outside_model(name).objective}
    return {
        "spec": jobs.as_json(
            {"run": f"{name}-outside", "objective": name, "objective_spec": spec, "size": "outside", "pretraining_step": None}
        ),
        "model": f"results/outside/{name}/model",
        "out": f"results/zeroshot/minimal_pairs_outside/{name}",
    }


# ------------------------------------------------------------------ the report


def report_spec(resolved: Resolved) -> ReportSpec:
    """The report section with the claims file relative to the working directory the jobs run
    in: the repository's own (config/claims.yaml) wherever --directory points, and a checkout
    moved or copied whole reruns nothing (an absolute path in params would rerun its report)."""
    claims_file = resolved.claims_file and os.path.relpath(resolved.claims_file)
    return dataclasses.replace(resolved.config.report, claims_file=claims_file)


@rule("aggregate", "aggregate")
def aggregate(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    return {"spec": jobs.as_json(report_spec(resolved))}


@rule("study_results", "study-results")
def study_results(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config = resolved.config
    return {
        "pairs": list(config.study_results.pairs),
        "matches": [f"{name}:{model}" for name, model in sorted(config.study_matches().items())],
        "tasks": [f"{task}:{dataset}" for task, dataset in sorted(config.study_datasets().items())],
        "confidence": config.report.confidence,
        "claims": ["--claims", report_spec(resolved).claims_file] if resolved.claims_file else [],
    }


@rule("report", "report")
def report(resolved: Resolved, w: Wildcards) -> dict[str, Any]:
    config = resolved.config
    study = ["--study", "results/study"] if config.study_results is not None else []
    return {"spec": jobs.as_json(report_spec(resolved)), "scale": config.scale, "study": study}
