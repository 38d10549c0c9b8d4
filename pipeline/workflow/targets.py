"""Which jobs a resolved config has: the output path of every job by rule (one table of
templates) and the lists of outputs the workflow asks for.

The rules (``rules/*.smk``) take their outputs from :data:`OUTPUTS` and their targets from
here, and :func:`every_job` lists the same jobs without Snakemake, so the rerun contract
(``pipeline/workflow/jobs.py``) can be tested in milliseconds: build every job's params for two
configs and compare.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import RANDOM_INIT
from pipeline.config.replicates import is_random_init, replicate_name
from pipeline.data.task_rows import TASK_TYPES
from pipeline.finetune.plan import finetunes, finetunes_outside
from pipeline.workflow.configure import Resolved

# The main output of every job, by rule; its wildcards name the job.
OUTPUTS = {
    "fetch": "results/sources/{source}/manifest.json",
    "prepare_task": "results/data/tasks/{task}/stats.json",
    "prepare_corpus": "results/data/corpus/shards/{shard}",
    "gather_corpus": "results/data/corpus/index.json",
    "train_tokenizer": "results/tokenizer",
    "pack": "results/tokens/shards/{shard}",
    "index_tokens": "results/tokens/meta.json",
    "initialize": "results/init/{name}-{size}",
    "pretrain": "results/pretrain/{name}-{size}/summary.json",
    "finetune": "results/finetune/{task}/{name}-{size}/scores.json",
    "finetune_checkpoint": "results/finetune/{task}/{name}-{size}-step{step}/scores.json",
    "import_model": "results/outside/{name}/model",
    "pack_outside": "results/outside/{name}/tokens/shards/{shard}",
    "index_tokens_outside": "results/outside/{name}/tokens/meta.json",
    "finetune_outside": "results/finetune_outside/{task}/{name}/scores.json",
    # A task scored on another's fine-tuned models (TaskSpec.trained_with), out of that job: any of the three above.
    "finetune_evaluated": "results/{finetuned}/{task}/{model}/scores.json",
    "bag_of_words": "results/baselines/{task}/bag_of_words/scores.json",
    "prepare_minimal_pairs": "results/data/minimal_pairs/pairs.jsonl",
    "minimal_pairs": "results/zeroshot/minimal_pairs/{name}-{size}/scores.json",
    "minimal_pairs_checkpoint": "results/zeroshot/minimal_pairs/{name}-{size}-step{step}/scores.json",
    "minimal_pairs_outside": "results/zeroshot/minimal_pairs_outside/{name}/scores.json",
    "aggregate": "results/tables",
    "study_results": "results/study",
    "report": "reports/replication.html",
}


@dataclass(frozen=True)
class Job:
    rule: str
    wildcards: dict[str, str]
    # the rule whose output this job writes in its place: a task scored on another's models
    # (finetune_evaluated) writes the scores.json its own finetune job would have
    writes_for: str | None = None

    @property
    def output(self) -> str:
        return OUTPUTS[self.rule].format(**self.wildcards)


def output(rule: str, **wildcards: object) -> str:
    return OUTPUTS[rule].format(**wildcards)


def pretrain_runs(resolved: Resolved) -> list[tuple[str, str]]:
    return [(plan.name, plan.size) for plan in resolved.plans.values()]


def random_init_runs(resolved: Resolved) -> list[tuple[str, str]]:
    """The untrained twin of every pretraining replicate at every size: random, random_r1, ..."""
    return sorted({(replicate_name(RANDOM_INIT, plan.replicate), plan.size) for plan in resolved.plans.values()})


def finetune_runs(resolved: Resolved) -> list[tuple[str, str]]:
    return pretrain_runs(resolved) + random_init_runs(resolved)


def run_objective(resolved: Resolved, name: str, size: str) -> str:
    """The objective (config name) a run was trained with; the baseline's own name for random init."""
    return RANDOM_INIT if is_random_init(name) else resolved.plans[f"{name}-{size}"].objective


def objective_kind(resolved: Resolved, name: str, size: str) -> str:
    """The objective kind a run was trained with (``RANDOM_INIT`` for the untrained baseline)."""
    objective = run_objective(resolved, name, size)
    return RANDOM_INIT if objective == RANDOM_INIT else resolved.config.objectives[objective]["kind"]


def curve_points(resolved: Resolved) -> list[tuple[str, str, int]]:
    """(run name, size, step) of every checkpoint fine-tuned for learning curves."""
    return [(plan.name, plan.size, step) for plan, step in resolved.curve_points]


def finetuned(resolved: Resolved) -> list[tuple[str, str, str]]:
    """(task, run name, size) of every final model fine-tuned."""
    config = resolved.config
    return [
        (task, name, size)
        for task in config.finetuning.tasks
        for name, size in finetune_runs(resolved)
        if finetunes(config, task, name, size, run_objective(resolved, name, size))
    ]


def finetuned_checkpoints(resolved: Resolved) -> list[tuple[str, str, str, int]]:
    """(task, run name, size, step) of every learning-curve checkpoint fine-tuned."""
    config = resolved.config
    return [
        (task, name, size, step)
        for task in config.finetuning.curve_tasks
        for name, size, step in curve_points(resolved)
        if finetunes(config, task, name, size, run_objective(resolved, name, size))
    ]


def finetuned_outside(resolved: Resolved) -> list[tuple[str, str]]:
    """(task, outside model) of every outside model fine-tuned."""
    config = resolved.config
    return [
        (task, model.name)
        for task in config.finetuning.tasks
        for model in config.outside_models
        if finetunes_outside(config, task, model.name)
    ]


def bag_of_words_tasks(resolved: Resolved) -> list[str]:
    """The tasks the lexical reference runs on, when the config asks for it."""
    config = resolved.config
    if config.bag_of_words is None:
        return []
    return [task for task in config.finetuning.tasks if TASK_TYPES[config.tasks[task].type].lexical_baseline]


def minimal_pairs_jobs(resolved: Resolved) -> list[Job]:
    """Every pretrained model, checkpoint, random init and outside model scored zero-shot,
    when the config asks for it."""
    if resolved.config.minimal_pairs is None:
        return []
    return [
        *(Job("minimal_pairs", {"name": name, "size": size}) for name, size in finetune_runs(resolved)),
        *(Job("minimal_pairs_checkpoint", {"name": n, "size": s, "step": str(step)}) for n, s, step in curve_points(resolved)),
        *(Job("minimal_pairs_outside", {"name": model.name}) for model in resolved.config.outside_models),
    ]


def used_sources(resolved: Resolved) -> list[str]:
    config = resolved.config
    names = {document.artifact for document in config.corpus.documents} | {config.tasks[t].data.artifact for t in config.finetuning.tasks}
    if config.tokenizer.ready_made is not None:
        names.add(config.tokenizer.ready_made.artifact)
    return sorted(name for name in names if name is not None)


# ------------------------------------------------------------------ what the report and the corpus read besides


def pretrain_logs(resolved: Resolved) -> list[str]:
    """Each pretraining run's log.csv, beside its summary.json."""
    return [str(Path(output("pretrain", name=name, size=size)).with_name("log.csv")) for name, size in pretrain_runs(resolved)]


def task_stats(resolved: Resolved) -> list[str]:
    return [output("prepare_task", task=task) for task in resolved.config.finetuning.tasks]


def corpus_shards(resolved: Resolved) -> list[str]:
    return [output("prepare_corpus", shard=shard) for shard in range(resolved.config.corpus.num_shards)]


def source_manifests(resolved: Resolved) -> list[str]:
    return [output("fetch", source=source) for source in used_sources(resolved)]


# ------------------------------------------------------------------ every job


def fine_tuning_jobs(resolved: Resolved, rule: str, wildcards: Iterator[dict[str, str]]) -> Iterator[Job]:
    """The jobs of a fine-tuning rule's outputs: the rule's own for a task that fine-tunes, and
    for one scored on another's models (``trained_with``) the job writing its scores out of
    that task's job on the same model."""
    for each in wildcards:
        if resolved.config.tasks[each["task"]].trained_with is None:
            yield Job(rule, each)
        else:
            parts = Path(output(rule, **each)).parts  # results, <finetuned>, <task>, <model>, scores.json
            yield Job("finetune_evaluated", {"finetuned": parts[1], "task": each["task"], "model": parts[3]}, writes_for=rule)


def every_job(resolved: Resolved) -> Iterator[Job]:
    """Every job the workflow runs for ``resolved`` (the whole DAG of ``snakemake --forceall``)."""
    config = resolved.config
    shards = [str(shard) for shard in range(config.corpus.num_shards)]
    yield from (Job("fetch", {"source": source}) for source in used_sources(resolved))
    yield from (Job("prepare_task", {"task": task}) for task in config.finetuning.tasks)
    yield from (Job("prepare_corpus", {"shard": shard}) for shard in shards)
    yield from (Job(rule, {}) for rule in ("gather_corpus", "train_tokenizer", "index_tokens"))
    yield from (Job("pack", {"shard": shard}) for shard in shards)
    yield from (Job("initialize", {"name": name, "size": size}) for name, size in random_init_runs(resolved))
    yield from (Job("pretrain", {"name": name, "size": size}) for name, size in pretrain_runs(resolved))
    yield from fine_tuning_jobs(resolved, "finetune", ({"task": t, "name": n, "size": s} for t, n, s in finetuned(resolved)))
    checkpoints = ({"task": t, "name": n, "size": s, "step": str(i)} for t, n, s, i in finetuned_checkpoints(resolved))
    yield from fine_tuning_jobs(resolved, "finetune_checkpoint", checkpoints)
    for model in config.outside_models:
        yield Job("import_model", {"name": model.name})
    outside_bases = {plan.start.run for plan in resolved.plans.values() if plan.start.kind == "outside"}
    for name in sorted(outside_bases):
        yield from (Job("pack_outside", {"name": name, "shard": shard}) for shard in shards)
        yield Job("index_tokens_outside", {"name": name})
    yield from fine_tuning_jobs(resolved, "finetune_outside", ({"task": t, "name": n} for t, n in finetuned_outside(resolved)))
    yield from (Job("bag_of_words", {"task": task}) for task in bag_of_words_tasks(resolved))
    if config.minimal_pairs is not None:
        yield Job("prepare_minimal_pairs", {})
    yield from minimal_pairs_jobs(resolved)
    yield Job("aggregate", {})
    if config.study_results is not None:
        yield Job("study_results", {})
    yield Job("report", {})
