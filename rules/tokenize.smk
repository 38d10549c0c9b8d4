# Tokenizer trained on the pretraining corpus (or taken ready-made), then each corpus shard packed into token
# arrays, and the arrays indexed as one stream per split.


rule train_tokenizer:
    input:
        tokenizer_inputs(),
    output:
        directory("results/tokenizer"),
    params:
        spec=as_json(CFG.tokenizer),
        corpus="--corpus results/data/corpus" if CFG.tokenizer.ready_made is None else "",
        code=CODE["tokenize"],
    log:
        "logs/train_tokenizer.log",
    benchmark:
        "benchmarks/train_tokenizer/tokenizer.tsv"
    shell:
        "{PYTHON} -m pipeline train-tokenizer --spec {params.spec:q} {params.corpus} --out {output} > {log} 2>&1"


rule pack:
    input:
        index="results/data/corpus/index.json",
        shard="results/data/corpus/shards/{shard}",
        tokenizer="results/tokenizer",
    output:
        directory("results/tokens/shards/{shard}"),
    wildcard_constraints:
        shard=r"\d+",
    params:
        corpus="results/data/corpus",
        code=CODE["tokenize"],
    log:
        "logs/pack/{shard}.log",
    benchmark:
        "benchmarks/pack/{shard}.tsv"
    shell:
        "{PYTHON} -m pipeline pack --corpus {params.corpus} --shard {wildcards.shard} --tokenizer {input.tokenizer}"
        " --out {output} > {log} 2>&1"


rule index_tokens:
    input:
        expand("results/tokens/shards/{shard}", shard=range(CFG.corpus.num_shards)),
    output:
        "results/tokens/meta.json",
    params:
        out="results/tokens",
        code=CODE["tokenize"],
    log:
        "logs/index_tokens.log",
    shell:
        "{PYTHON} -m pipeline index-tokens --shards {input} --out {params.out} > {log} 2>&1"
