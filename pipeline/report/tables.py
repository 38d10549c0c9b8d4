"""The report's displayed tables: one function per table, CSV rows in, text cells out.

Each function returns a :class:`Table` of already-formatted strings, so the template
only lays out cells and every number's rounding is decided here, once. Rows keep the
order of the aggregated CSVs (sizes by parameter count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

# ------------------------------------------------------------------ formatting


def number_text(value: float, digits: int = 1, signed: bool = False) -> str:
    """A rounded number with a typographic minus (and a plus when ``signed``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "−")


def interval_text(mean: float, low: float, high: float, signed: bool = False, digits: int = 1) -> str:
    """``+1.2 [−0.8, +3.2]``; a single seed has no interval and says so."""
    if math.isnan(mean):
        return "—"
    if math.isnan(low):
        return f"{number_text(mean, digits, signed)} (one seed, no CI)"
    return f"{number_text(mean, digits, signed)} [{number_text(low, digits, signed)}, {number_text(high, digits, signed)}]"


def plus_minus_text(mean: float, low: float, high: float, digits: int = 1) -> str:
    """``71.2 ± 1.3`` for a symmetric t-interval."""
    if math.isnan(mean):
        return "—"
    if math.isnan(low):
        return f"{number_text(mean, digits)} (1 seed)"
    return f"{number_text(mean, digits)} ± {number_text((high - low) / 2, digits)}"


def count_text(value: float) -> str:
    """1570000 -> ``1.6M``: parameter and token counts at a glance."""
    if math.isnan(value):
        return "—"
    for threshold, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    return f"{value:g}"


def duration_text(seconds: float) -> str:
    if math.isnan(seconds):
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


# ------------------------------------------------------------------ the table type


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""  # e.g. "num" (right-aligned), "verdict-supported", "winner-mlm"


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    css: str = ""  # "family" (bold average rows), "total"


@dataclass(frozen=True)
class Table:
    caption: str
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    note: str = ""
    css: str = ""  # "wide-text" for tables dominated by prose


def row(*cells: str | Cell, css: str = "") -> Row:
    return Row(tuple(c if isinstance(c, Cell) else Cell(c) for c in cells), css)


def num(text: str) -> Cell:
    return Cell(text, "num")


def key(text: str) -> Cell:
    """An identifier (run, task, rule name) that must not wrap mid-name."""
    return Cell(text, "key")


# ------------------------------------------------------------------ the tables


def scale_table(pretraining: pd.DataFrame) -> Table:
    """What was trained: per size, its runs, parameter counts and tokens seen."""
    rows = []
    for size, group in pretraining.groupby("size", sort=False):
        first = group.iloc[0]
        rows.append(row(
            key(size), ", ".join(group["objective"]), num(count_text(first["num_parameters"])),
            num(count_text(first["num_non_embedding_parameters"])), num(f"{int(group['num_steps'].max()):,}"),
            num(count_text(group["num_tokens"].max())),
        ))  # fmt: skip
    return Table(
        "Model sizes trained in this run",
        ("Size", "Objectives", "Parameters", "Non-embedding", "Steps", "Tokens per run"),
        tuple(rows),
    )


def headline_tables(comparison: pd.DataFrame, confidence: float) -> list[Table]:
    """One "Task | MLM | CLM | Winner" table per size; family averages in bold.

    A winner is named only when the CI of MLM − CLM excludes zero; otherwise "tie".
    """
    tables = []
    level = f"{100 * confidence:g}% CI"
    for size, at_size in comparison.groupby("size", sort=False):
        rows = []
        for family, group in at_size.groupby("family", sort=True):
            tasks = group[group["level"] == "task"]
            for _, item in pd.concat([tasks, group[group["level"] == "family"]]).iterrows():
                is_family = item["level"] == "family"
                name = f"{family} average ({len(tasks)} task{'s' * (len(tasks) != 1)})" if is_family else item["name"]
                rows.append(row(
                    key(name),
                    num(plus_minus_text(item["mlm_mean"], item["mlm_low"], item["mlm_high"])),
                    num(plus_minus_text(item["clm_mean"], item["clm_low"], item["clm_high"])),
                    num(interval_text(item["difference_mean"], item["difference_low"], item["difference_high"], signed=True)),
                    Cell(item["winner"], f"winner-{item['winner'].replace(' ', '-')}"),
                    css="family" if is_family else "",
                ))  # fmt: skip
        parameters = at_size["num_parameters"].iloc[0]
        tables.append(Table(
            f"Size {size} ({count_text(parameters)} parameters): test score, seed mean ± {level}, at the LR chosen on validation",
            ("Task", "MLM", "CLM", f"MLM − CLM [{level}, Welch]", "Winner"),
            tuple(rows),
        ))  # fmt: skip
    return tables


def baselines_table(baselines: pd.DataFrame) -> Table:
    """What pretraining bought: majority class, random init, pretrained, gain."""
    rows = [
        row(
            key(item["task"]), key(item["size"]), num(number_text(item["majority_test_score"])),
            num(plus_minus_text(item["random_mean"], item["random_low"], item["random_high"])),
            key(item["run"]), num(plus_minus_text(item["pretrained_mean"], item["pretrained_low"], item["pretrained_high"])),
            num(interval_text(item["minus_random_mean"], item["minus_random_low"], item["minus_random_high"], signed=True)),
        )
        for _, item in baselines.iterrows()
    ]  # fmt: skip
    above = int((baselines["minus_random_low"] > 0).sum())
    below = int((baselines["minus_random_high"] < 0).sum())
    return Table(
        "Baselines: majority class and random initialisation (same backbone, not pretrained) against each pretrained run",
        ("Task", "Size", "Majority class", "Random init", "Pretrained run", "Pretrained", "Pretrained − random"),
        tuple(rows),
        note=f"Pretraining beat random initialisation (interval above zero) in {above} of {len(baselines)} task-run pairs "
        f"and lost (interval below zero) in {below}; in the others the interval spans zero.",
    )


def pretraining_table(pretraining: pd.DataFrame) -> Table:
    """One row per pretraining run: budget, loss fraction, losses, throughput."""
    rows = [
        row(
            key(item["run"]), num(count_text(item["num_parameters"])), num(f"{item['num_steps']:,}"), num(count_text(item["num_tokens"])),
            num(f"{100 * item['loss_fraction']:.1f}%"), num(number_text(item["final_train_loss"], 3)),
            num(number_text(item["heldout_loss"], 3)),
            f"{item['heldout_metric_name'].replace('_', ' ')} {number_text(item['heldout_metric_value'])}",
            num(f"{item['tokens_per_second']:,.0f}"), num(duration_text(item["wall_seconds"])),
        )
        for _, item in pretraining.iterrows()
    ]  # fmt: skip
    return Table(
        "Pretraining runs",
        ("Run", "Params", "Steps", "Tokens", "Loss on", "Final train loss", "Held-out loss", "Held-out metric", "Tokens/s", "Wall time"),
        tuple(rows),
        note="“Loss on” is the fraction of token positions that carry loss, counted over the batches actually trained. "
        "MLM and CLM losses are over different targets and are not comparable with each other.",
    )


def lr_sensitivity_table(lr_sensitivity: pd.DataFrame, scores: pd.DataFrame) -> Table:
    """How much each run's test score depends on the fine-tuning learning rate."""
    merged = lr_sensitivity.merge(scores[["task", "run", "best_learning_rate", "test_mean"]], on=["task", "run"], how="left")
    rows = [
        row(
            key(item["task"]), key(item["run"]), num(f"{item['best_learning_rate']:.0e}"), num(number_text(item["test_mean"])),
            num(number_text(item["test_spread"])), num(number_text(item["test_std"])),
            num(f"{item['num_near_best']} of {item['num_learning_rates']}"),
        )
        for _, item in merged.iterrows()
    ]  # fmt: skip
    return Table(
        "Learning-rate sensitivity: seed-mean test score over the LR grid",
        ("Task", "Run", "Best LR (validation)", "Test at best LR", "Spread (max − min)", "Std over LRs", "LRs within 1 pt of best"),
        tuple(rows),
    )


def claims_table(claims: pd.DataFrame) -> Table:
    """Every claim with its verdict (coloured) and the evidence or what is missing."""
    rows = []
    for _, item in claims.iterrows():
        needed = item["needed"] if isinstance(item["needed"], str) and item["needed"] else ""
        evidence = f"{item['evidence'].rstrip('.')}. Needed: {needed}." if needed else item["evidence"]
        verdict = item["verdict"]
        rows.append(row(item["id"], item["claim"], Cell(verdict, f"verdict verdict-{verdict.replace(' ', '-')}"), evidence))
    return Table(
        "Claims checked against this run",
        ("ID", "Claim", "Verdict", "Evidence"),
        tuple(rows),
        note="Supported or contradicted only when the confidence interval excludes zero in that direction; a claimed "
        "magnitude outside the interval contradicts the claim as stated. Mixed results across sizes are inconclusive.",
        css="wide-text claims",
    )


def sources_table(manifests: Sequence[Mapping[str, Any]]) -> Table:
    """Where the raw data came from, pinned by file name and sha256."""
    rows = [
        row(m["name"], m["requirement"], Cell(m["filename"], "mono"), Cell(f"{m['sha256'][:12]}…", "mono"), m["license"], m["origin"])
        for m in sorted(manifests, key=lambda m: m["name"])
    ]
    return Table("Data sources (package-registry artifacts)", ("Name", "Requirement", "File", "sha256", "Licence", "Origin"), tuple(rows), css="wide-text")


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
        f"left shorter than the minimum length counts as contaminated. Removals per task: {removed}. "
        f"Corpus: {corpus['totals']['train_documents']:,} training and {corpus['totals']['heldout_documents']:,} held-out documents, "
        f"{corpus['totals']['words']:,} words.",
    )


def tasks_table(tasks: pd.DataFrame) -> Table:
    """Downstream tasks; a proxy is named as one, with how its labels were derived."""
    rows = []
    for _, item in tasks.iterrows():
        proxy = item["proxy_for"] if isinstance(item["proxy_for"], str) and item["proxy_for"] else ""
        rows.append(row(
            key(item["task"]), item["family"], Cell(f"PROXY for {proxy}", "proxy") if proxy else Cell("— (no study counterpart)", "muted"),
            item["labels"], num(f"{item['num_train']:,} / {item['num_validation']:,} / {item['num_test']:,}"),
            num(f"{number_text(item['majority_test_score'])} ({item['majority_label']})"), item["description"],
        ))  # fmt: skip
    return Table(
        "Downstream tasks",
        ("Task", "Family", "Stands in for", "Labels", "Train / val / test", "Majority (test)", "How labels were derived"),
        tuple(rows),
        css="wide-text",
    )


def cost_table(benchmarks: pd.DataFrame) -> Table:
    """Compute spent per Snakemake rule: summed wall and CPU time, peak memory."""
    per_rule = benchmarks.groupby("rule", sort=True).agg(
        jobs=("s", "size"), wall=("s", "sum"), cpu=("cpu_time", "sum"), rss=("max_rss", "max")
    )
    rows = [
        row(key(rule), num(str(int(item["jobs"]))), num(duration_text(item["wall"])), num(duration_text(item["cpu"])), num(f"{item['rss']:,.0f} MB"))
        for rule, item in per_rule.iterrows()
    ]
    rows.append(row(
        "total", num(str(int(per_rule["jobs"].sum()))), num(duration_text(per_rule["wall"].sum())),
        num(duration_text(per_rule["cpu"].sum())), num(f"{per_rule['rss'].max():,.0f} MB"), css="total",
    ))  # fmt: skip
    return Table(
        "Cost per rule (Snakemake benchmark files)",
        ("Rule", "Jobs", "Wall time (sum)", "CPU time (sum)", "Peak max RSS"),
        tuple(rows),
        note="Wall times are summed over jobs, so with parallel jobs the total exceeds the elapsed time. “—” marks values the benchmark did not record.",
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
