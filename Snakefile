# Replication of "Should We Still Pretrain Encoders with Masked Language Modeling?"
# (arXiv 2507.00994): data -> tokenizer -> pretraining per objective and size ->
# fine-tuning -> report. The science lives in pipeline/; rules are thin shells.
#
#   snakemake --cores all                                  # embedded default
#   snakemake --cores all --configfile config/smoke.yaml   # a 2-minute smoke run
#   snakemake -n                                           # what would run, and why

# Relative to the Snakefile, so `--directory` elsewhere still finds it.
configfile: f"{workflow.basedir}/config/default.yaml"


include: "rules/common.smk"
include: "rules/kept_outputs.smk"
include: "rules/data.smk"
include: "rules/tokenize.smk"
include: "rules/pretrain.smk"
include: "rules/finetune.smk"
include: "rules/outside.smk"
include: "rules/baselines.smk"
include: "rules/zeroshot.smk"
include: "rules/report.smk"


rule all:
    input:
        "reports/replication.html",
        "reports/replication.pdf",
    default_target: True
