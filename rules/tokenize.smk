# Tokenizer trained on the pretraining corpus, then the corpus packed into token arrays.


rule train_tokenizer:
    input:
        "results/data/corpus/train.jsonl",
    output:
        directory("results/tokenizer"),
    params:
        spec=as_json(CFG.tokenizer),
        code=CODE["tokenize"],
    log:
        "logs/train_tokenizer.log",
    benchmark:
        "benchmarks/train_tokenizer/tokenizer.tsv"
    shell:
        "{PYTHON} -m pipeline train-tokenizer --spec {params.spec:q} --corpus {input} --out {output} > {log} 2>&1"


rule pack:
    input:
        train="results/data/corpus/train.jsonl",
        heldout="results/data/corpus/heldout.jsonl",
        tokenizer="results/tokenizer",
    output:
        directory("results/tokens"),
    params:
        corpus="results/data/corpus",
        code=CODE["tokenize"],
    log:
        "logs/pack.log",
    benchmark:
        "benchmarks/pack/tokens.tsv"
    shell:
        "{PYTHON} -m pipeline pack --corpus {params.corpus} --tokenizer {input.tokenizer} --out {output} > {log} 2>&1"
