# Tokenizer trained on the pretraining corpus (or taken ready-made), then each corpus shard packed into token
# arrays, and the arrays indexed as one stream per split.


rule train_tokenizer:
    input:
        INPUTS.tokenizer_inputs(),
    output:
        update(directory(OUTPUTS["train_tokenizer"])),
    params:
        **rule_params("train_tokenizer"),
    log:
        "logs/train_tokenizer.log",
    benchmark:
        "benchmarks/train_tokenizer/tokenizer.tsv"
    shell:
        "{PYTHON:q} -m pipeline train-tokenizer --spec {params.spec:q} {params.corpus:q} --out {output:q} > {log:q} 2>&1"


PACK_COMMAND = (
    "{PYTHON:q} -m pipeline pack --corpus results/data/corpus --shard {wildcards.shard:q} --tokenizer {input.tokenizer:q}"
    " --out {output:q} > {log:q} 2>&1"
)
INDEX_TOKENS_COMMAND = "{PYTHON:q} -m pipeline index-tokens --shards {input:q} --out {params.out:q} > {log:q} 2>&1"
CORPUS_SHARD = {"index": "results/data/corpus/index.json", "shard": "results/data/corpus/shards/{shard}"}


rule pack:
    input:
        **CORPUS_SHARD,
        tokenizer="results/tokenizer",
    output:
        directory(OUTPUTS["pack"]),
    wildcard_constraints:
        shard=r"\d+",
    params:
        **rule_params("pack"),
    log:
        "logs/pack/{shard}.log",
    benchmark:
        "benchmarks/pack/{shard}.tsv"
    shell:
        PACK_COMMAND


rule index_tokens:
    input:
        expand("results/tokens/shards/{shard}", shard=range(CFG.corpus.num_shards)),
    output:
        update(OUTPUTS["index_tokens"]),
    params:
        **rule_params("index_tokens"),
    log:
        "logs/index_tokens.log",
    shell:
        INDEX_TOKENS_COMMAND


# The corpus again, packed with an outside model's own tokenizer, for the runs that continue it
# (continued_pretraining.outside_bases): once per outside model, whatever runs read it.
rule pack_outside:
    input:
        **CORPUS_SHARD,
        tokenizer="results/outside/{name}/model",
    output:
        directory(OUTPUTS["pack_outside"]),
    wildcard_constraints:
        shard=r"\d+",
    params:
        **rule_params("pack_outside"),
    log:
        "logs/pack_outside/{name}/{shard}.log",
    benchmark:
        "benchmarks/pack_outside/{name}/{shard}.tsv"
    shell:
        PACK_COMMAND


rule index_tokens_outside:
    input:
        expand("results/outside/{{name}}/tokens/shards/{shard}", shard=range(CFG.corpus.num_shards)),
    output:
        update(OUTPUTS["index_tokens_outside"]),
    params:
        **rule_params("index_tokens_outside"),
    log:
        "logs/index_tokens_outside/{name}.log",
    shell:
        INDEX_TOKENS_COMMAND
