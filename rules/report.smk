# Tidy tables from the per-run JSON, then one template rendered to HTML and PDF.
# The report reads only these small files, never checkpoints.


rule aggregate:
    input:
        manifest=result_manifest.RESULT_MANIFEST,
        results=[path for paths in RESULT_FILES.values() for path in paths],
        claims=[CLAIMS_FILE] if CLAIMS_FILE else [],
    output:
        update(directory(OUTPUTS["aggregate"])),
    params:
        **rule_params("aggregate"),
    log:
        "logs/aggregate.log",
    benchmark:
        "benchmarks/aggregate/tables.tsv"
    shell:
        "{PYTHON:q} -m pipeline aggregate --spec {params.spec:q} --results {input.manifest:q} --out {output:q} > {log:q} 2>&1"


if CFG.study_results is not None:

    # The study's results recomputed, and beside them this harness's fine-tuning of the
    # outside models that are the study's checkpoints.
    rule study_results:
        input:
            root=CFG.study_results.path,
            ours=result_manifest.study_versus_scores(RESULT_FILES, RESOLVED),
            claims=[CLAIMS_FILE] if CLAIMS_FILE else [],
        output:
            update(directory(OUTPUTS["study_results"])),
        params:
            **rule_params("study_results"),
        log:
            "logs/study_results.log",
        shell:
            "{PYTHON:q} -m pipeline study-results --root {input.root:q} --confidence {params.confidence:q} --pairs {params.pairs:q}"
            " --ours {input.ours:q} --matches {params.matches:q} --tasks {params.tasks:q} {params.claims:q} --out {output:q} > {log:q} 2>&1"


rule report:
    input:
        tables="results/tables",
        study=["results/study"] if CFG.study_results is not None else [],
        logs=targets.pretrain_logs(RESOLVED),
        corpus_stats="results/data/corpus/stats.json",
        manifests=targets.source_manifests(RESOLVED),
    output:
        html=update(report(OUTPUTS["report"], category="Replication report")),
        pdf=update(report("reports/replication.pdf", category="Replication report")),
        figures=update(directory("reports/figures")),
    params:
        **rule_params("report"),
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report/report.tsv"
    shell:
        # Cost comes from every benchmark file present: each upstream job has written its own
        # (this rule's own is written after it finishes, so a rerun reports the previous one).
        "{PYTHON:q} -m pipeline report --spec {params.spec:q} --scale {params.scale:q} --tables {input.tables:q}"
        " --logs {input.logs:q} --corpus-stats {input.corpus_stats:q} --manifests {input.manifests:q}"
        " --benchmarks $(find benchmarks -name '*.tsv' | sort) --html {output.html:q} --pdf {output.pdf:q}"
        " --figures-dir {output.figures:q} {params.study:q} > {log:q} 2>&1"
