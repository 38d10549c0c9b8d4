"""The report's appendix tables: where the data came from (sources, corpus, tasks), the
metrics' breakdowns, what each rule cost, and the code version that produced it all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from pipeline.analysis.text import duration_text, number_text, plus_minus_text, text_or
from pipeline.report.tables import Cell, Table, key, num, row


def sources_table(manifests: Sequence[Mapping[str, Any]]) -> Table:
    """Where the raw data came from, pinned by file name and sha256."""
    rows = [
        row(m["name"], m["requirement"], Cell(m["filename"], "mono"), Cell(f"{m['sha256'][:12]}…", "mono"), m["license"], m["origin"])
        for m in sorted(manifests, key=lambda m: m["name"])
    ]
    return Table(
        "Data sources (package-registry artifacts)",
        ("Name", "Requirement", "File", "sha256", "Licence", "Origin"),
        tuple(rows),
        css="wide-text",
    )


def corpus_table(corpus: Mapping[str, Any]) -> Table:
    """Pretraining corpus: documents per source, and what cleaning removed."""
    columns = ("documents_read", "too_short", "duplicates", "contaminated", "contaminated_lines", "train", "heldout", "words")
    rows = [row(name, *(num(f"{counts[c]:,}") for c in columns)) for name, counts in sorted(corpus["sources"].items())]
    totals = {c: sum(counts[c] for counts in corpus["sources"].values()) for c in columns}
    rows.append(row("total", *(num(f"{totals[c]:,}") for c in columns), css="total"))
    removed = ", ".join(f"{task} {count:,}" for task, count in sorted(corpus["contaminated_by_task"].items())) or "none"
    return Table(
        "Pretraining corpus",
        ("Source", "Read", "Too short", "Duplicates", "Contaminated", "Lines removed", "Train", "Held-out", "Words"),
        tuple(rows),
        note=f"Decontamination removed every document (or, for sources of independent lines such as review lists, every "
        f"line) sharing a {corpus['decontamination_ngram']}-word n-gram with a task's validation or test text; a document "
        f"left shorter than the minimum length counts as contaminated; duplicates are counted among the documents that "
        f"passed it, across every shard of the corpus. Removals per task: {removed}. "
        f"Corpus: {corpus['totals']['train_documents']:,} training and {corpus['totals']['heldout_documents']:,} held-out documents, "
        f"{corpus['totals']['words']:,} words.",
    )


def majority_text(task: Mapping[str, Any]) -> str:
    """The majority-class score, or the trivial baseline's where the task has no classes."""
    label = task["majority_label"]
    return f"{number_text(task['majority_test_score'])} ({label})" if isinstance(label, str) else number_text(task["majority_test_score"])


def tasks_table(tasks: pd.DataFrame) -> Table:
    """Downstream tasks; a proxy is named as one, with how its labels were derived."""
    rows = []
    for _, item in tasks.iterrows():
        proxy = text_or(item["proxy_for"], "")
        rows.append(
            row(
                key(item["task"]),
                item["family"],
                Cell(f"PROXY for {proxy}", "proxy") if proxy else Cell("— (no study counterpart)", "muted"),
                text_or(item["labels"], "— (no label set)"),
                num(f"{item['num_train']:,} / {item['num_validation']:,} / {item['num_test']:,}"),
                num(majority_text(item)),
                item["description"],
                text_or(item.get("derived_labels"), "—"),
            )
        )
    return Table(
        "Downstream tasks",
        (
            "Task",
            "Family",
            "Stands in for",
            "Labels",
            "Train / val / test",
            "Trivial baseline (test)",
            "What it is",
            "How labels were derived",
        ),
        tuple(rows),
        css="wide-text",
    )


# The keys of a needle-in-a-haystack cell ("length=96,depth=0.5"): drawn, not tabulated.
NEEDLE_CELL_PREFIX = "length="


def metric_detail_tables(details: pd.DataFrame, tasks: pd.DataFrame) -> list[Table]:
    """One table per task whose metric gives more than its headline number: every run's
    breakdown (QA has-answer / no-answer, IR MRR@10, TC precision / recall) at the LR
    chosen for the headline, seed mean ± CI half width."""
    described = tasks.set_index("task")
    result = []
    for task, rows in details[~details["key"].str.startswith(NEEDLE_CELL_PREFIX)].groupby("task", sort=True):
        keys = sorted(set(rows["key"]))
        if len(keys) < 2:
            continue
        by_run = rows.set_index(["run", "key"])
        runs = list(dict.fromkeys(rows["run"]))
        body = [
            row(
                key(run),
                *(
                    num(plus_minus_text(*by_run.loc[(run, k), ["test_mean", "test_low", "test_high"]])) if (run, k) in by_run.index else "—"
                    for k in keys
                ),
            )
            for run in runs
        ]
        metric = described.loc[task, "metric"] if task in described.index else ""
        result.append(Table(f"{task} ({metric}): every number of the metric, at the LR chosen on validation", ("Run", *keys), tuple(body)))
    return result


def cost_table(benchmarks: pd.DataFrame) -> Table:
    """Compute spent per Snakemake rule: summed wall and CPU time, peak memory."""
    per_rule = benchmarks.groupby("rule", sort=True).agg(
        jobs=("s", "size"), wall=("s", "sum"), cpu=("cpu_time", "sum"), rss=("max_rss", "max")
    )
    rows = [
        row(
            key(rule),
            num(str(int(item["jobs"]))),
            num(duration_text(item["wall"])),
            num(duration_text(item["cpu"])),
            num(f"{item['rss']:,.0f} MB"),
        )
        for rule, item in per_rule.iterrows()
    ]
    rows.append(
        row(
            "total",
            num(str(int(per_rule["jobs"].sum()))),
            num(duration_text(per_rule["wall"].sum())),
            num(duration_text(per_rule["cpu"].sum())),
            num(f"{per_rule['rss'].max():,.0f} MB"),
            css="total",
        )
    )
    return Table(
        "Cost per rule (Snakemake benchmark files)",
        ("Rule", "Jobs", "Wall time (sum)", "CPU time (sum)", "Peak max RSS"),
        tuple(rows),
        note="Wall times are summed over jobs, so with parallel jobs the total exceeds the elapsed time. “—” marks values the benchmark "
        "did not record.",
    )


def reproducibility_table(provenance: Mapping[str, Any]) -> Table:
    """The code and package versions the tables were computed with."""
    code = provenance.get("code", {})
    dirty = {True: "yes: uncommitted changes", False: "no", None: "unknown"}[code.get("git_dirty")]
    packages = ", ".join(f"{name} {version}" for name, version in sorted(provenance.get("packages", {}).items()))
    rows = [
        row(key("Git commit"), Cell(code.get("git_commit") or "unknown (no commit recorded)", "mono")),
        row(key("Uncommitted changes"), dirty),
        row(key("Package source sha256"), Cell(code.get("source_sha256", "unknown"), "mono")),
        row(key("Packages"), packages),
        row(key("Inputs checksummed"), f"{len(provenance.get('inputs', {}))} files (see provenance.json beside the tables)"),
    ]
    return Table("Code version of the aggregated tables", ("Item", "Value"), tuple(rows))
