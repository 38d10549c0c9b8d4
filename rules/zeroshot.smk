# The zero-shot family: minimal pairs from held-out corpus text, scored by every pretrained
# model, every learning-curve checkpoint, every outside model and the random-init weights,
# with no fine-tuning.
# pipeline/zeroshot/methods.py says which score each objective gets.

MINIMAL_PAIRS_COMMAND = (
    "{PYTHON:q} -m pipeline minimal-pairs --spec {params.spec:q} --model {params.model:q} --pairs {input.pairs:q}"
    " --out {params.out:q} --threads {threads:q} --device {params.device:q} > {log:q} 2>&1"
)


rule prepare_minimal_pairs:
    input:
        index="results/data/corpus/index.json",
        shards=targets.corpus_shards(RESOLVED),
    output:
        pairs=update(OUTPUTS["prepare_minimal_pairs"]),
        stats=update("results/data/minimal_pairs/stats.json"),
    params:
        **rule_params("prepare_minimal_pairs"),
    log:
        "logs/prepare_minimal_pairs.log",
    benchmark:
        "benchmarks/prepare_minimal_pairs/pairs.tsv"
    shell:
        "{PYTHON:q} -m pipeline prepare-minimal-pairs --spec {params.spec:q} --seed {params.seed:q} --corpus results/data/corpus"
        " --out {params.out:q} > {log:q} 2>&1"


rule minimal_pairs:
    input:
        model=INPUTS.finetune_model,
        pairs="results/data/minimal_pairs/pairs.jsonl",
    output:
        update(OUTPUTS["minimal_pairs"]),
    params:
        **rule_params("minimal_pairs"),
        device=job_device,
    threads: job_threads("minimal_pairs")
    resources:
        **job_resources("minimal_pairs"),
    log:
        "logs/minimal_pairs/{name}-{size}.log",
    benchmark:
        "benchmarks/minimal_pairs/{name}-{size}.tsv"
    shell:
        MINIMAL_PAIRS_COMMAND


rule minimal_pairs_checkpoint:
    input:
        checkpoints="results/pretrain/{name}-{size}/checkpoints",
        pairs="results/data/minimal_pairs/pairs.jsonl",
    output:
        update(OUTPUTS["minimal_pairs_checkpoint"]),
    params:
        **rule_params("minimal_pairs_checkpoint"),
        device=job_device,
    threads: job_threads("minimal_pairs_checkpoint")
    resources:
        **job_resources("minimal_pairs_checkpoint"),
    log:
        "logs/minimal_pairs/{name}-{size}-step{step}.log",
    benchmark:
        "benchmarks/minimal_pairs/{name}-{size}-step{step}.tsv"
    shell:
        MINIMAL_PAIRS_COMMAND


rule minimal_pairs_outside:
    input:
        model="results/outside/{name}/model",
        pairs="results/data/minimal_pairs/pairs.jsonl",
    output:
        update(OUTPUTS["minimal_pairs_outside"]),
    params:
        **rule_params("minimal_pairs_outside"),
        device=job_device,
    threads: job_threads("minimal_pairs_outside")
    resources:
        **job_resources("minimal_pairs_outside"),
    log:
        "logs/minimal_pairs_outside/{name}.log",
    benchmark:
        "benchmarks/minimal_pairs_outside/{name}.tsv"
    shell:
        MINIMAL_PAIRS_COMMAND
