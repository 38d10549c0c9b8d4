# Config validation, targets and helpers shared by every rule file.
#
# The config is parsed strictly into pipeline.config.Config and checked, planned and its
# claims parsed once by pipeline.workflow.configure.resolve (unknown keys, wrong types and
# typos in claims.yaml stop the run with one line naming the key). Which jobs exist and where
# they write is pipeline/workflow/targets.py, what they read pipeline/workflow/rule_inputs.py; each
# rule's params (its slice of the config as JSON and a hash of the code it runs, so that a changed
# value or a code change reruns exactly the jobs it affects) are pipeline/workflow/rule_params.py,
# tested there without Snakemake. This file only binds them to the planned workflow.

import functools
import os
import sys
from pathlib import Path

from pipeline import tensorboard_log, warm_worker
from pipeline.workflow import rule_params as rerun
from pipeline.workflow import result_manifest, targets
from pipeline.config import RANDOM_INIT
from pipeline.workflow.configure import resolve_files
from pipeline.errors import PipelineError
from pipeline.integrity import VERIFY_TOKENS
from pipeline.workflow.job_resources import rule_resources, rule_threads
from pipeline.workflow.rule_inputs import TASK_FILES, RuleInputs, check_fetched_sources
from pipeline.malloc_tunables import glibc_tunables
from pipeline.result_kinds import write_manifest
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
os.environ[tensorboard_log.ENVIRONMENT_VARIABLE] = "1" if CFG.hardware.tensorboard else "0"
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
JOBS = list(targets.every_job(RESOLVED))
EXAMPLE_JOBS = {job.rule: job.wildcards for job in JOBS}
# The result files the aggregate reads, by the kind each rule registered (pipeline/workflow/result_manifest.py);
# rewritten only when the plan's files change, so its time stamp reruns the aggregate exactly then.
RESULT_FILES = result_manifest.result_files(JOBS)
write_manifest(result_manifest.RESULT_MANIFEST, RESULT_FILES)


INPUTS = RuleInputs(RESOLVED)  # what each rule's jobs read (pipeline/workflow/rule_inputs.py)
try:
    check_fetched_sources(RESOLVED)
except PipelineError as error:
    sys.exit(f"error: {error}")


def job_resources(rule):
    """A compute rule's resources (pipeline/workflow/job_resources.py: rule_resources)."""
    return rule_resources(CFG, PLANS, rerun.RULES[rule].gpu)


def job_threads(rule, on_cpus=1):
    """A compute rule's cores (pipeline/workflow/job_resources.py: rule_threads)."""
    return rule_threads(CFG, PLANS, rerun.RULES[rule].gpu, on_cpus)


def job_device(wildcards, resources):
    """Where a job computes: its GPU(s) when its ``resources: gpu=`` asks for any, else the CPU."""
    return "cuda" if resources.gpu > 0 else "cpu"
