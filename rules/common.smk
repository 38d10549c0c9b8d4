# Config validation, targets and helpers shared by every rule file.
#
# The config is parsed strictly into pipeline.config.Config and checked, planned and its
# claims parsed once by pipeline.configure.resolve (unknown keys, wrong types and
# typos in claims.yaml stop the run with one line naming the key). Each rule gets its slice of the
# config as JSON through params:, plus a hash of the code it runs, so a changed value
# or a code change reruns exactly the jobs it affects.

import dataclasses
import functools
import json
import os
import sys
from pathlib import Path

from pipeline import jobs, strict
from pipeline.__main__ import STAGES
from pipeline.code_graph import stage_code as module_code
from pipeline.config import RANDOM_INIT
from pipeline.config.replicates import arm_of, is_random_init, replicate_name
from pipeline.configure import resolve_files
from pipeline.errors import PipelineError
from pipeline.finetune.plan import finetunes, finetunes_outside
from pipeline.integrity import VERIFY_TOKENS
from pipeline.jobs import as_json
from pipeline.malloc_tunables import glibc_tunables

PYTHON = sys.executable

# Every job's shell: strict, and reading nothing from standard input, so no prompt of a library a
# job runs can be answered by the terminal Snakemake was started from. (The stages close it too.)
shell.prefix("set -euo pipefail; exec </dev/null; ")

# Jobs inherit this environment: freed memory stays in each job (pipeline/malloc_tunables.py).
os.environ["GLIBC_TUNABLES"] = glibc_tunables(os.environ)

try:
    # config is Snakemake's merge of the default and the --configfile overlays (and --config values);
    # the files are read again only to name the one behind a bad key.
    RESOLVED = resolve_files(config, [str(f) for f in workflow.configfiles])
except PipelineError as error:
    sys.exit(f"error: {error}")
CFG = RESOLVED.config
# Through the environment, not params: turning verification on or off reruns nothing (pipeline/integrity.py).
os.environ[VERIFY_TOKENS] = "1" if CFG.hardware.verify_token_checksums else "0"

# A relative claims file is the repository's own (config/claims.yaml), wherever --directory
# points; the jobs get it relative to the working directory they run in, as an absolute path in
# params would rerun the report of a checkout moved or copied whole.
CLAIMS_FILE = RESOLVED.claims_file and os.path.relpath(RESOLVED.claims_file)
REPORT_SPEC = dataclasses.replace(CFG.report, claims_file=CLAIMS_FILE)


@functools.cache
def stage_code(stage):
    """The hash of every file ``python -m pipeline <stage>`` can run, from its imports
    (pipeline/code_graph.py): a rule's ``code`` param, so a change there, and only there, reruns it."""
    return module_code(STAGES[stage][0])


wildcard_constraints:
    source="[A-Za-z0-9_]+",
    task="[A-Za-z0-9_]+",
    name="[A-Za-z0-9_]+",
    step="[0-9]+",
    size="[A-Za-z0-9_]+",


# ---------------------------------------------------------------- targets

PLANS = RESOLVED.plans  # run name -> RunPlan
PRETRAIN_RUNS = [(p.name, p.size) for p in PLANS.values()]
# The untrained twin of every pretraining replicate at every size: random, random_r1, ...
RANDOM_INIT_RUNS = sorted({(replicate_name(RANDOM_INIT, p.replicate), p.size) for p in PLANS.values()})
FINETUNE_RUNS = PRETRAIN_RUNS + RANDOM_INIT_RUNS


def pretrain_summaries():
    return [f"results/pretrain/{n}-{s}/summary.json" for n, s in PRETRAIN_RUNS]


def pretrain_logs():
    return [f"results/pretrain/{n}-{s}/log.csv" for n, s in PRETRAIN_RUNS]


def run_objective(name, size):
    """The objective (config name) a run was trained with; the baseline's own name for random init."""
    return RANDOM_INIT if is_random_init(name) else PLANS[f"{name}-{size}"].objective


def finetune_scores():
    return [
        f"results/finetune/{t}/{n}-{s}/scores.json"
        for t in CFG.finetuning.tasks
        for n, s in FINETUNE_RUNS
        if finetunes(CFG, t, n, s, run_objective(n, s))
    ]


def outside_scores():
    return [
        f"results/finetune_outside/{t}/{m.name}/scores.json"
        for t in CFG.finetuning.tasks
        for m in CFG.outside_models
        if finetunes_outside(CFG, t, m.name)
    ]


def study_versus_scores():
    """The fine-tuning scores of the outside models that are the study's checkpoints."""
    matched = CFG.study_matches()
    return [path for path in outside_scores() if Path(path).parent.name in matched]


def outside_model_inputs(wildcards):
    """A local outside model's directory (so a change to it reruns the import); a hub id has none."""
    path = CFG.outside_model(wildcards.name).path
    return [path] if Path(path).is_dir() or path.startswith(("results/", "/", ".")) else []


def outside_finetune_spec(wildcards):
    return finetune_job_spec(wildcards.task, wildcards.name, "outside", CFG.outside_model(wildcards.name).objective, None)


def curve_points():
    """(run name, size, step) of every checkpoint fine-tuned for learning curves."""
    return [(p.name, p.size, step) for p, step in RESOLVED.curve_points]


def curve_scores():
    return [
        f"results/finetune/{t}/{n}-{s}-step{step}/scores.json"
        for t in CFG.finetuning.tasks
        for n, s, step in curve_points()
        if finetunes(CFG, t, n, s, run_objective(n, s))
    ]


def bag_of_words_scores():
    """The lexical reference on every sequence-classification task, when the config asks for it."""
    if CFG.bag_of_words is None:
        return []
    return [f"results/baselines/{t}/bag_of_words/scores.json" for t in CFG.finetuning.tasks if CFG.tasks[t].type == "sequence_classification"]


def bag_of_words_spec(wildcards):
    """What the reference reads of the task's protocol (its example budget, the attention that
    frames its inputs) and no more, so that a learning rate changed does not rerun it."""
    finetuning = CFG.finetuning.for_task(wildcards.task)
    return as_json(
        {
            "task_name": wildcards.task,
            "task": CFG.tasks[wildcards.task],
            "budget": finetuning.budget,
            "attention": finetuning.attention,
            "bag_of_words": CFG.bag_of_words,
        }
    )


def minimal_pairs_scores():
    """Every pretrained model's, checkpoint's and random init's zero-shot scores, when the config asks for them."""
    if CFG.minimal_pairs is None:
        return []
    models = [f"{n}-{s}" for n, s in FINETUNE_RUNS] + [f"{n}-{s}-step{step}" for n, s, step in curve_points()]
    outside = [f"results/zeroshot/minimal_pairs_outside/{m.name}/scores.json" for m in CFG.outside_models]
    return [f"results/zeroshot/minimal_pairs/{model}/scores.json" for model in models] + outside


def corpus_shards():
    return [f"results/data/corpus/shards/{i}" for i in range(CFG.corpus.num_shards)]


def tokenizer_inputs():
    """A BPE trains on the corpus; a ready-made tokenizer needs only its directory, if local."""
    ready_made = CFG.tokenizer.ready_made
    if ready_made is None:
        return ["results/data/corpus/index.json", *corpus_shards()]
    return [ready_made.path] if Path(ready_made.path).is_dir() else []


def task_stats():
    return [f"results/data/tasks/{t}/stats.json" for t in CFG.finetuning.tasks]


def used_sources():
    names = {d.artifact for d in CFG.corpus.documents} | {CFG.tasks[t].data.artifact for t in CFG.finetuning.tasks}
    return sorted(n for n in names if n is not None)


# Snakemake does not rerun a job for a missing intermediate whose consumers are up to date, so
# an extracted/ deleted beside its manifest would only surface when a job next reads it.
for source in used_sources():
    fetched = Path("results/sources") / source
    if (fetched / "manifest.json").is_file() and not (fetched / "extracted").is_dir():
        sys.exit(f"error: {fetched}/extracted: missing beside its manifest.json; fetch it again: snakemake -f {fetched}/extracted")


# ---------------------------------------------------------------- params


def max_model_length():
    """A bound on the longest sequence any stage feeds the backbone, in tokens.

    Span corruption appends its targets (T + 2 x spans + 2 <= 3T + 1 for a block of T);
    RoPE has no parameters, so the bound costs nothing.
    """
    return max([3 * CFG.pretraining.sequence_length + 1] + [CFG.tasks[t].max_length for t in CFG.finetuning.tasks])


TASK_SPLITS = ("train", "validation", "test")


def source_inputs(artifacts):
    return [f"results/sources/{a}/manifest.json" for a in artifacts if a is not None]


def source_manifests():
    return source_inputs(used_sources())


def source_spec(wildcards):
    return as_json(CFG.sources[wildcards.source])


def task_spec(wildcards):
    # max_length matters to fine-tuning only: leaving it out keeps a length change from
    # re-preparing the data (and, through decontamination, the whole corpus).
    spec = strict.to_plain(CFG.tasks[wildcards.task])
    del spec["max_length"]
    return json.dumps(spec, sort_keys=True)


def task_source_inputs(wildcards):
    return source_inputs([CFG.tasks[wildcards.task].data.artifact])


def corpus_source_inputs(wildcards):
    return source_inputs([d.artifact for d in CFG.corpus.documents])


def size_spec(wildcards):
    return as_json(CFG.sizes[wildcards.size])


def task_split_inputs(wildcards):
    return [f"results/data/tasks/{wildcards.task}/{split}.jsonl" for split in TASK_SPLITS] + [
        f"results/data/tasks/{wildcards.task}/stats.json"
    ]


def run_plan(wildcards):
    return PLANS[f"{wildcards.name}-{wildcards.size}"]


def pretrain_spec(wildcards):
    return jobs.pretrain_spec(CFG, run_plan(wildcards))


def pretrain_start(wildcards):
    """The weights a run starts from; another run's output when it is a second stage or CPT,
    an imported model's when it continues an outside model."""
    start = run_plan(wildcards).start
    if start.kind == "initial":
        return f"results/init/{replicate_name(RANDOM_INIT, run_plan(wildcards).replicate)}-{wildcards.size}"
    if start.kind == "final":
        return f"results/pretrain/{start.run}/model"
    if start.kind == "outside":
        return f"results/outside/{start.run}/model"
    return f"results/pretrain/{start.run}/checkpoints"


def pretrain_tokens(wildcards):
    """The packed corpus a run reads: the harness's, or an outside base's (packed with its own tokenizer)."""
    start = run_plan(wildcards).start
    return f"results/outside/{start.run}/tokens" if start.kind == "outside" else "results/tokens"


def pretrain_start_dir(wildcards):
    start = run_plan(wildcards).start
    if start.kind == "checkpoint":
        return f"results/pretrain/{start.run}/checkpoints/step-{start.step:06d}"
    return pretrain_start(wildcards)


def job_device(wildcards, resources):
    """Where a job computes: its GPU(s) when its ``resources: gpu=`` asks for any, else the CPU."""
    return "cuda" if resources.gpu > 0 else "cpu"


def finetune_model(wildcards):
    if is_random_init(wildcards.name):
        return f"results/init/{wildcards.name}-{wildcards.size}"
    return f"results/pretrain/{wildcards.name}-{wildcards.size}/model"


def finetune_spec(wildcards):
    return run_finetune_spec(wildcards, None)


def curve_finetune_spec(wildcards):
    return run_finetune_spec(wildcards, int(wildcards.step))


def curve_checkpoint(wildcards):
    return f"results/pretrain/{wildcards.name}-{wildcards.size}/checkpoints/step-{int(wildcards.step):06d}"


def minimal_pairs_spec(wildcards):
    return run_minimal_pairs_spec(wildcards, None)


def curve_minimal_pairs_spec(wildcards):
    return run_minimal_pairs_spec(wildcards, int(wildcards.step))


def run_minimal_pairs_spec(wildcards, pretraining_step):
    """The model's run name and the objective its last stage trained (which picks its score)."""
    objective = run_objective(wildcards.name, wildcards.size)
    return jobs.minimal_pairs_spec(CFG, wildcards.name, wildcards.size, objective, pretraining_step)


def outside_minimal_pairs_spec(wildcards):
    """An outside model is scored as the objective kind its entry names (which picks its score)."""
    name = wildcards.name
    spec = {"kind": CFG.outside_model(name).objective}
    return as_json({"run": f"{name}-outside", "objective": name, "objective_spec": spec, "size": "outside", "pretraining_step": None})


def run_finetune_spec(wildcards, pretraining_step):
    if is_random_init(wildcards.name):
        kind = RANDOM_INIT
    else:
        kind = CFG.objectives[run_plan(wildcards).objective]["kind"]
    return finetune_job_spec(wildcards.task, wildcards.name, wildcards.size, kind, pretraining_step)


def finetune_job_spec(task, name, size, objective_kind, pretraining_step):
    return jobs.finetune_spec(CFG, task, name, size, objective_kind, pretraining_step)
