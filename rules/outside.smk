# Checkpoints made outside this harness (config: outside_models): each imported once as a
# checkpoint of the backbone, then fine-tuned on every task it takes, like a pretrained run.


rule import_model:
    input:
        INPUTS.outside_model_inputs,
    output:
        directory(OUTPUTS["import_model"]),
    params:
        **rule_params("import_model"),
    log:
        "logs/import_model/{name}.log",
    benchmark:
        "benchmarks/import_model/{name}.tsv"
    shell:
        "{PYTHON:q} -m pipeline import-model --spec {params.spec:q}"
        " --num-sentinel-tokens {params.sentinels:q} --out {output:q} > {log:q} 2>&1"


rule finetune_outside:
    input:
        model="results/outside/{name}/model",
        task=INPUTS.task_split_inputs,
    output:
        update(OUTPUTS["finetune_outside"]),
    wildcard_constraints:
        task=INPUTS.fine_tuned_tasks,
    params:
        **rule_params("finetune_outside"),
        device=job_device,
    threads: job_threads("finetune_outside")
    resources:
        **job_resources("finetune_outside"),
    log:
        "logs/finetune_outside/{task}/{name}.log",
    benchmark:
        "benchmarks/finetune_outside/{task}/{name}.tsv"
    shell:
        FINETUNE_COMMAND
