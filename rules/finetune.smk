# Every pretrained model, and the untrained initial weights ("random-{size}"), on every
# task: the whole LR x seed grid in one job, so the model and data load once. A job asks
# for hardware.finetune_gpus GPUs (0 on the CPU default, 1 at paper scale) and computes
# there; like any resource, changing it reruns nothing.

FINETUNE_COMMAND = (
    "{PYTHON:q} -m pipeline finetune --spec {params.spec:q} --model {params.model:q} --task-dir {params.task_dir:q}"
    " --out {params.out:q} --threads {threads:q} --device {params.device:q} > {log:q} 2>&1"
)


rule finetune:
    input:
        model=finetune_model,
        task=task_split_inputs,
    output:
        update(OUTPUTS["finetune"]),
    params:
        **rule_params("finetune"),
        device=job_device,
    threads: 1
    resources:
        gpu=CFG.hardware.finetune_gpus,
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
    params:
        **rule_params("finetune_checkpoint"),
        device=job_device,
    threads: 1
    resources:
        gpu=CFG.hardware.finetune_gpus,
    log:
        "logs/finetune/{task}/{name}-{size}-step{step}.log",
    benchmark:
        "benchmarks/finetune/{task}/{name}-{size}-step{step}.tsv"
    shell:
        FINETUNE_COMMAND
