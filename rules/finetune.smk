# Every pretrained model, and the untrained initial weights ("random-{size}"), on every
# task: the whole LR x seed grid in one job, so the model and data load once. Each finished
# grid point is kept in results/resume/ until the job's output is written: a job killed at its
# time limit and resubmitted (the profile's retries) resumes at its next point. A job asks
# for hardware.finetune_gpus GPUs (0 on the CPU default, 1 at paper scale) and computes
# there; like any resource, changing it reruns nothing.

from pipeline.cost import finetuning_runtime_minutes

FINETUNE_COMMAND = (
    "{PYTHON:q} -m pipeline finetune --spec {params.spec:q} --model {params.model:q} --task-dir {params.task_dir:q}"
    " {params.evaluated_task_dirs:q} --out {params.out:q} --work-dir {params.work_dir:q} --threads {threads:q}"
    " --device {params.device:q} > {log:q} 2>&1"
)



def finetune_runtime(wildcards):
    """Minutes a GPU fine-tuning job asks for: its grid's estimate with the margin, at most
    hardware.max_job_hours (a longer grid resumes at its next point on the next attempt). An
    outside model is costed at the config size it names."""
    size = wildcards.size if "size" in wildcards.keys() else CFG.outside_model(wildcards.name).size
    return finetuning_runtime_minutes(CFG, wildcards.task, size)


# On a GPU the time limit comes from the estimate; a CPU run keeps the default resources.
FINETUNE_RUNTIME = {"runtime": finetune_runtime} if CFG.hardware.finetune_gpus > 0 else {}


rule finetune:
    input:
        model=finetune_model,
        task=task_split_inputs,
    output:
        update(OUTPUTS["finetune"]),
    wildcard_constraints:
        task=FINE_TUNED_TASKS,
    params:
        **rule_params("finetune"),
        device=job_device,
    threads: 1
    resources:
        gpu=CFG.hardware.finetune_gpus,
        **FINETUNE_RUNTIME,
    log:
        "logs/finetune/{task}/{name}-{size}.log",
    benchmark:
        "benchmarks/finetune/{task}/{name}-{size}.tsv"
    shell:
        FINETUNE_COMMAND


# Learning curves: the same sweep on an intermediate checkpoint of a run (config: learning_curves).
rule finetune_checkpoint:
    input:
        checkpoints="results/pretrain/{name}-{size}/checkpoints",
        task=task_split_inputs,
    output:
        update(OUTPUTS["finetune_checkpoint"]),
    wildcard_constraints:
        task=FINE_TUNED_TASKS,
    params:
        **rule_params("finetune_checkpoint"),
        device=job_device,
    threads: 1
    resources:
        gpu=CFG.hardware.finetune_gpus,
        **FINETUNE_RUNTIME,
    log:
        "logs/finetune/{task}/{name}-{size}-step{step}.log",
    benchmark:
        "benchmarks/finetune/{task}/{name}-{size}-step{step}.tsv"
    shell:
        FINETUNE_COMMAND


# A task scored on another task's fine-tuned models (the study's nq and mldr_en on MS MARCO's):
# its scores.json, written out of that task's job on the same model. Nothing is trained.
if EVALUATED_TASKS:

    rule finetune_evaluated:
        input:
            trained=lambda w: f"{job_params('finetune_evaluated', tuple(sorted(w.items())))['trained']}/scores.json",
        output:
            update(OUTPUTS["finetune_evaluated"]),
        wildcard_constraints:
            finetuned="finetune|finetune_outside",
            task=EVALUATED_TASKS,
            model=r"[A-Za-z0-9_-]+",
        params:
            **rule_params("finetune_evaluated"),
        localrule: True
        log:
            "logs/finetune_evaluated/{finetuned}/{task}/{model}.log",
        shell:
            "{PYTHON:q} -m pipeline finetune-evaluated --trained {params.trained:q} --task {wildcards.task:q} --out {params.out:q}"
            " > {log:q} 2>&1"
