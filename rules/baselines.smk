# References that need no pretraining, beside the majority class (prepare_task) and random
# init (finetune): bag of words + logistic regression per sequence-classification task.


rule bag_of_words:
    input:
        task=INPUTS.task_split_inputs,
        tokenizer="results/tokenizer",
    output:
        update(OUTPUTS["bag_of_words"]),
    params:
        **rule_params("bag_of_words"),
    threads: 1
    log:
        "logs/baselines/{task}/bag_of_words.log",
    benchmark:
        "benchmarks/baselines/{task}/bag_of_words.tsv"
    shell:
        "{PYTHON:q} -m pipeline bag-of-words --spec {params.spec:q} --task-dir {params.task_dir:q} --tokenizer {input.tokenizer:q}"
        " --out {params.out:q} > {log:q} 2>&1"
