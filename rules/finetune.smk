# Every pretrained model, and the untrained initial weights ("random-{size}"), on every
# task: the whole LR x seed grid in one job, so the model and data load once. Each finished
# grid point is kept in results/resume/ until the job's output is written: a job killed at its
# time limit and resubmitted (the profile's retries) resumes at its next point. A job asks
# for hardware.finetune_gpus GPUs (0 on the CPU default, 1 at paper scale) and computes
# there, with the time, memory and cores its estimate gives (common.smk: job_resources).

FINETUNE_COMMAND = (
    "{PYTHON:q} -m pipeline finetune --spec {params.spec:q} --model {params.model:q} --task-dir {params.task_dir:q}"
    " {params.evaluated_task_dirs:q} --out {params.out:q} --work-dir {params.work_dir:q} --threads {threads:q}"
    " --device {params.device:q} > {log:q} 2>&1"
)


rule finetune:
    input:
        model=INPUTS.finetune_model,
        task=INPUTS.task_split_inputs,
    output:
        update(OUTPUTS["finetune"]),
    wildcard_constraints:
        task=INPUTS.fine_tuned_tasks,
    params:
        **rule_params("finetune"),
        device=job_device,
    threads: job_threads("finetune")
    resources:
        **job_resources("finetune"),
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
        task=INPUTS.task_split_inputs,
    output:
        update(OUTPUTS["finetune_checkpoint"]),
    wildcard_constraints:
        task=INPUTS.fine_tuned_tasks,
    params:
        **rule_params("finetune_checkpoint"),
        device=job_device,
    threads: job_threads("finetune_checkpoint")
    resources:
        **job_resources("finetune_checkpoint"),
    log:
        "logs/finetune/{task}/{name}-{size}-step{step}.log",
    benchmark:
        "benchmarks/finetune/{task}/{name}-{size}-step{step}.tsv"
    shell:
        FINETUNE_COMMAND


# A task scored on another task's fine-tuned models (the study's nq and mldr_en on MS MARCO's):
# its scores.json, written out of that task's job on the same model. Nothing is trained.
if INPUTS.evaluated_tasks:

    rule finetune_evaluated:
        input:
            trained=lambda w: f"{job_params('finetune_evaluated', tuple(sorted(w.items())))['trained']}/scores.json",
        output:
            update(OUTPUTS["finetune_evaluated"]),
        wildcard_constraints:
            finetuned="finetune|finetune_outside",
            task=INPUTS.evaluated_tasks,
            model=r"[A-Za-z0-9_-]+",
        params:
            **rule_params("finetune_evaluated"),
        localrule: True
        log:
            "logs/finetune_evaluated/{finetuned}/{task}/{model}.log",
        shell:
            "{PYTHON:q} -m pipeline finetune-evaluated --trained {params.trained:q} --task {wildcards.task:q} --out {params.out:q}"
            " > {log:q} 2>&1"
