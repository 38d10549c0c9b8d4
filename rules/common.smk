# Config validation, targets and helpers shared by every rule file.
#
# The config is parsed strictly into pipeline.config.Config and checked, planned and its
# claims parsed once by pipeline.workflow.configure.resolve (unknown keys, wrong types and
# typos in claims.yaml stop the run with one line naming the key). Which jobs exist and where
# they write is pipeline/workflow/targets.py; each rule's params (its slice of the config as JSON and a
# hash of the code it runs, so that a changed value or a code change reruns exactly the jobs
# it affects) are pipeline/workflow/rule_params.py, tested there without Snakemake.

import functools
import os
import re
import sys
from pathlib import Path

from pipeline import warm_worker
from pipeline.workflow import rule_params as rerun
from pipeline.workflow import targets
from pipeline.config import RANDOM_INIT
from pipeline.workflow.configure import resolve_files
from pipeline.errors import PipelineError
from pipeline.integrity import VERIFY_TOKENS
from pipeline.workflow.job_resources import job_request
from pipeline.malloc_tunables import glibc_tunables
from pipeline.workflow.targets import OUTPUTS

PYTHON = sys.executable

# Every job's shell: strict, and reading nothing from standard input, so no prompt of a library a
# job runs can be answered by the terminal Snakemake was started from. (The stages close it too.)
shell.prefix("set -euo pipefail; exec </dev/null; ")

# Jobs inherit this environment: freed memory stays in each job (pipeline/malloc_tunables.py).
os.environ["GLIBC_TUNABLES"] = glibc_tunables(os.environ)

# profiles/slurm passes --config profile=slurm: a --configfile on the command line replaces the
# profile's `configfile: config/paper.yaml`, and the cluster would plan another config's run.
PROFILE = config.pop("profile", None)
try:
    # config is Snakemake's merge of the default and the --configfile overlays (and --config values);
    # the files are read again only to name the one behind a bad key.
    RESOLVED = resolve_files(config, [str(f) for f in workflow.configfiles])
except PipelineError as error:
    sys.exit(f"error: {error}")
CFG = RESOLVED.config
PAPER_CONFIG = Path(workflow.basedir, "config", "paper.yaml").resolve()
if PROFILE == "slurm" and PAPER_CONFIG not in {Path(f).resolve() for f in workflow.configfiles}:
    print(
        f"warning: profiles/slurm without config/paper.yaml among the config files ({', '.join(map(str, workflow.configfiles))}):"
        f" planning {CFG.scale.split('.')[0]!r}; to run the paper, give --configfile config/paper.yaml <your overlay>",
        file=sys.stderr,
    )
# Through the environment, not params: turning verification on or off reruns nothing (pipeline/integrity.py).
os.environ[VERIFY_TOKENS] = "1" if CFG.hardware.verify_token_checksums else "0"
# Through the environment too: a warm worker (pipeline/warm_worker.py) changes where a CPU job's
# imports happen, not what it computes.
if CFG.hardware.finetune_gpus == 0 and CFG.hardware.warm_worker_idle_seconds > 0:
    os.environ[warm_worker.ENVIRONMENT_VARIABLE] = str(CFG.hardware.warm_worker_idle_seconds)
else:
    os.environ.pop(warm_worker.ENVIRONMENT_VARIABLE, None)
# With a hub mirror every job reads local paths (the config was rewritten to them); offline, so that
# nothing the mirror lacks is fetched behind its back on a node that can reach the hub.
if CFG.hub_mirror is not None:
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
# The report's claims file, an input of the aggregate stage (rule_params.report_spec says why relative).
CLAIMS_FILE = RESOLVED.claims_file and os.path.relpath(RESOLVED.claims_file)


@functools.cache
def job_params(rule, wildcards):
    """One job's params, built once however many of them the rule asks for (``wildcards``: sorted items)."""
    return rerun.params(RESOLVED, rule, dict(wildcards))


def rule_params(rule):
    """The rule's params (pipeline/workflow/rule_params.py), each computed from the job's wildcards. Every
    job of a rule has the same keys, read from any one of its jobs; a rule without a job in
    this config gets none."""
    keys = job_params(rule, tuple(sorted(EXAMPLE_JOBS[rule].items()))) if rule in EXAMPLE_JOBS else {}
    return {key: (lambda wildcards, key=key: job_params(rule, tuple(sorted(wildcards.items())))[key]) for key in keys}


wildcard_constraints:
    source="[A-Za-z0-9_]+",
    task="[A-Za-z0-9_]+",
    name="[A-Za-z0-9_]+",
    step="[0-9]+",
    size="[A-Za-z0-9_]+",


# ---------------------------------------------------------------- targets

PLANS = RESOLVED.plans  # run name -> RunPlan
EXAMPLE_JOBS = {job.rule: job.wildcards for job in targets.every_job(RESOLVED)}


def outside_model_inputs(wildcards):
    """What an import reads: a model of this workflow's results, its directory (the job making it
    comes first); a local or mirrored one, each of its files, so that a file changed in place, which
    leaves the directory's own time as it was, reruns the import. A hub id has none."""
    path = CFG.outside_model(wildcards.name).path
    if path.startswith("results/") or not Path(path).is_dir():
        return [path] if path.startswith(("results/", "/", ".")) else []
    return sorted(str(file) for file in Path(path).rglob("*") if file.is_file())


def tokenizer_inputs():
    """A BPE trains on the corpus; a ready-made tokenizer needs only its directory, if local,
    or the fetched artifact it lies in."""
    ready_made = CFG.tokenizer.ready_made
    if ready_made is None:
        return ["results/data/corpus/index.json", *targets.corpus_shards(RESOLVED)]
    if ready_made.artifact is not None:
        return [OUTPUTS["fetch"].format(source=ready_made.artifact)]
    return [ready_made.path] if Path(ready_made.path).is_dir() else []


# Snakemake does not rerun a job for a missing intermediate whose consumers are up to date, so
# an extracted/ deleted beside its manifest would only surface when a job next reads it. The way
# back removes the manifest too (this check runs on every plan, `snakemake -f` included): the
# fetch then runs again, and with it the jobs that read the source.
for source in targets.used_sources(RESOLVED):
    fetched = Path("results/sources") / source
    if (fetched / "manifest.json").is_file() and not (fetched / "extracted").is_dir():
        sys.exit(
            f"error: {fetched}/extracted: missing beside its manifest.json; fetch it again: rm {fetched}/manifest.json, then rerun"
            " (the jobs reading this source rerun after it)"
        )


# ---------------------------------------------------------------- inputs

# A prepared task: its splits and its judged documents (empty unless a retrieval task ranks a corpus).
TASK_FILES = ("train", "validation", "test", "documents")


def source_inputs(artifacts):
    return [OUTPUTS["fetch"].format(source=a) for a in artifacts if a is not None]


def task_source_inputs(wildcards):
    return source_inputs([CFG.tasks[wildcards.task].data.artifact])


def corpus_source_inputs(wildcards):
    return source_inputs([d.artifact for d in CFG.corpus.documents])


def task_split_inputs(wildcards):
    """A fine-tuning job's prepared task, and those of the tasks scored on its models (``trained_with``)."""
    tasks = [wildcards.task, *CFG.evaluated_with(wildcards.task)]
    return [f"results/data/tasks/{task}/{split}.jsonl" for task in tasks for split in TASK_FILES] + [
        OUTPUTS["prepare_task"].format(task=task) for task in tasks
    ]


# Tasks that fine-tune models of their own, and those scored on another's (TaskSpec.trained_with):
# the fine-tuning rules make the first's outputs, finetune_evaluated the second's.
FINE_TUNED_TASKS = "|".join(re.escape(name) for name, task in CFG.tasks.items() if task.trained_with is None)
EVALUATED_TASKS = "|".join(re.escape(name) for name, task in CFG.tasks.items() if task.trained_with is not None)


def pretrain_start(wildcards):
    """The directory a run starts from (rule_params.pretrain_start_dir), or for a checkpoint
    of another run, that run's checkpoints: the output the job depends on."""
    start = PLANS[f"{wildcards.name}-{wildcards.size}"].start
    if start.kind == "checkpoint":
        return f"results/pretrain/{start.run}/checkpoints"
    return rerun.pretrain_start_dir(RESOLVED, wildcards.name, wildcards.size)


def pretrain_tokens(wildcards):
    return f"{rerun.pretrain_tokens(RESOLVED, wildcards.name, wildcards.size)}/meta.json"


def finetune_model(wildcards):
    return rerun.final_model(wildcards.name, wildcards.size)


def job_resources(rule):
    """A compute rule's resources: its GPUs and, when it has any, its time limit and host memory from
    the cost estimate (pipeline/workflow/job_resources.py); on CPUs Snakemake's defaults. Like any resource,
    changing them reruns nothing."""
    gpu_job = rerun.RULES[rule].gpu
    gpus = 0 if gpu_job is None else gpu_job.gpus(CFG)
    if gpus == 0:
        return {"gpu": 0}

    def estimated(field):
        return lambda wildcards: getattr(job_request(CFG, PLANS, gpu_job, dict(wildcards.items())), field)

    return {"gpu": gpus, "runtime": estimated("runtime"), "mem_mb": estimated("mem_mb")}


def job_threads(rule, on_cpus=1):
    """A compute rule's cores: hardware.cpus_per_gpu per GPU on GPUs, else ``on_cpus``."""

    def threads(wildcards):
        request = job_request(CFG, PLANS, rerun.RULES[rule].gpu, dict(wildcards.items()))
        return on_cpus if request is None else request.cpus

    return threads


def job_device(wildcards, resources):
    """Where a job computes: its GPU(s) when its ``resources: gpu=`` asks for any, else the CPU."""
    return "cuda" if resources.gpu > 0 else "cpu"
