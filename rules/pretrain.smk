# Shared initial weights per size, then one pretraining run per (objective, size).
# Interrupted runs keep their resumable state in results/resume/ and continue from it
# when rerun (the default profile sets --rerun-incomplete).


rule initialize:
    input:
        "results/tokenizer",
    output:
        directory("results/init/{size}"),
    params:
        size=size_spec,
        max_length=max_model_length(),
        seed=CFG.seed,
        code=CODE["model"],
    log:
        "logs/initialize/{size}.log",
    benchmark:
        "benchmarks/initialize/{size}.tsv"
    shell:
        "{PYTHON} -m pipeline initialize --size {params.size:q} --max-length {params.max_length}"
        " --seed {params.seed} --tokenizer {input} --out {output} > {log} 2>&1"


rule pretrain:
    input:
        tokens="results/tokens",
        init="results/init/{size}",
    output:
        model=directory("results/pretrain/{objective}-{size}/model"),
        checkpoints=directory("results/pretrain/{objective}-{size}/checkpoints"),
        log="results/pretrain/{objective}-{size}/log.csv",
        summary="results/pretrain/{objective}-{size}/summary.json",
    params:
        spec=pretrain_spec,
        out="results/pretrain/{objective}-{size}",
        work_dir="results/resume/pretrain/{objective}-{size}",
        code=CODE["pretrain"],
    threads: 1
    log:
        "logs/pretrain/{objective}-{size}.log",
    benchmark:
        "benchmarks/pretrain/{objective}-{size}.tsv"
    shell:
        "{PYTHON} -m pipeline pretrain --spec {params.spec:q} --tokens {input.tokens} --init {input.init}"
        " --work-dir {params.work_dir} --out {params.out} --threads {threads} > {log} 2>&1"
