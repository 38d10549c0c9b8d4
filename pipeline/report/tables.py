"""The report's displayed tables: one function per table, CSV rows in, text cells out.

Each function returns a :class:`Table` of already-formatted strings, so the template
only lays out cells and every number's rounding is decided here, once. Rows keep the
order of the aggregated CSVs (sizes by parameter count).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.report.runs import CAUSAL, CONTINUED, DENOISERS, MASKED, MASKING, OTHER, SECTIONS, TWO_STAGE

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


def percent_text(fraction: float) -> str:
    """0.25 -> ``25%``."""
    return "—" if math.isnan(fraction) else f"{100 * fraction:g}%"


def yardstick_text(run: Mapping[str, Any]) -> str:
    """The held-out yardstick of a pretraining row, or why it was not measured."""
    name, value = run["heldout_metric_name"].replace("_", " "), run["heldout_metric_value"]
    if math.isnan(value):
        return f"{name}: not measured (LM head never trained)"
    return f"{name} {number_text(value)}"


def steps_text(run: Mapping[str, Any]) -> str:
    """The steps a run trained: ``480``, or ``120–480`` for a second stage."""
    return f"{run['first_step']:,}–{run['num_steps']:,}" if run["first_step"] else f"{run['num_steps']:,}"


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
        low, high = (count_text(group["num_tokens"].agg(f)) for f in ("min", "max"))
        rows.append(row(
            key(size), ", ".join(group["run_name"]), num(count_text(first["num_parameters"])),
            num(count_text(first["num_non_embedding_parameters"])), num(f"{int(group['num_steps'].max()):,}"),
            num(low if low == high else f"{low}–{high}"),
        ))  # fmt: skip
    return Table(
        "Model sizes trained in this run",
        ("Size", "Runs", "Parameters", "Non-embedding", "Steps", "Tokens per run"),
        tuple(rows),
        note="Tokens are the input positions a run processed; they differ between objectives whose examples are longer than "
        "the corpus block (span corruption adds sentinels and targets) and for second stages and continued runs, which count their own steps only.",
    )


def comparison_cells(item: Mapping[str, Any]) -> tuple[Cell, Cell, Cell, Cell]:
    """MLM, CLM, MLM − CLM and winner cells of a comparison.csv or curve_comparison.csv row."""
    return (
        num(plus_minus_text(item["mlm_mean"], item["mlm_low"], item["mlm_high"])),
        num(plus_minus_text(item["clm_mean"], item["clm_low"], item["clm_high"])),
        num(interval_text(item["difference_mean"], item["difference_low"], item["difference_high"], signed=True)),
        Cell(item["winner"], f"winner-{item['winner'].replace(' ', '-')}"),
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
                rows.append(row(key(name), *comparison_cells(item), css="family" if is_family else ""))
        parameters = at_size["num_parameters"].iloc[0]
        tables.append(Table(
            f"Size {size} ({count_text(parameters)} parameters): test score, seed mean ± {level}, at the LR chosen on validation",
            ("Task", "MLM", "CLM", f"MLM − CLM [{level}, Welch]", "Winner"),
            tuple(rows),
        ))  # fmt: skip
    return tables


def curve_step_text(item: Mapping[str, Any]) -> str:
    """``150 (25%)`` for a checkpoint, ``600 (final model)`` for the finished run."""
    if item["final"]:
        return f"{item['step']:,} (final model)"
    return f"{item['step']:,}" if math.isnan(item["budget_fraction"]) else f"{item['step']:,} ({100 * item['budget_fraction']:.0f}%)"


def learning_curve_tables(curve_comparison: pd.DataFrame, confidence: float) -> list[Table]:
    """One "Step | CLM | MLM | MLM − CLM | Winner" table per (family, size), from the
    first checkpoint to the final model; CLM first, as the run the claims have leading early.

    A winner is named only when the CI of MLM − CLM excludes zero; otherwise "tie".
    """
    level = f"{100 * confidence:g}% CI"
    tables = []
    families = curve_comparison[curve_comparison["level"] == "family"]
    for (family, size), group in families.groupby(["family", "size"], sort=False):
        rows = []
        for _, item in group.iterrows():
            mlm, clm, gap, winner = comparison_cells(item)
            rows.append(row(num(curve_step_text(item)), clm, mlm, gap, winner))
        tables.append(Table(
            f"{family} average, size {size}: test score at each pretraining checkpoint, seed mean ± {level}, at the LR chosen on validation at that checkpoint",
            ("Pretraining step (share of the budget)", "CLM", "MLM", f"MLM − CLM [{level}, Welch]", "Winner"),
            tuple(rows),
            note="The final model's row is the headline comparison. Per-task points are in learning_curves.csv and curve_comparison.csv.",
        ))  # fmt: skip
    return tables


def lexical_note(baselines: pd.DataFrame) -> str:
    """How many runs the bag of words leaves behind, where the task has one."""
    scored = baselines[baselines["bag_of_words_mean"].notna()]
    if scored.empty:
        return ""
    below = int((scored["pretrained_high"] < scored["bag_of_words_low"]).sum())
    above = int((scored["pretrained_low"] > scored["bag_of_words_high"]).sum())
    return (
        f" Against the bag of words ({', '.join(sorted(scored['task'].unique()))}): {above} of {len(scored)} pretrained runs above it "
        f"and {below} below it, intervals not overlapping."
    )


def baselines_table(baselines: pd.DataFrame) -> Table:
    """What pretraining bought: majority class, bag of words, random init, pretrained, gain."""
    rows = [
        row(
            key(item["task"]), key(item["size"]), num(number_text(item["majority_test_score"])),
            num(plus_minus_text(item["bag_of_words_mean"], item["bag_of_words_low"], item["bag_of_words_high"])),
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
        ("Task", "Size", "Majority class", "Bag of words", "Random init", "Pretrained run", "Pretrained", "Pretrained − random"),
        tuple(rows),
        note=f"Pretraining beat random initialisation (interval above zero) in {above} of {len(baselines)} task-run pairs "
        f"and lost (interval below zero) in {below}; in the others the interval spans zero.{lexical_note(baselines)}",
    )


def pretraining_table(pretraining: pd.DataFrame) -> Table:
    """One row per pretraining run: budget, loss fraction, losses, throughput."""
    rows = [
        row(
            key(item["run"]), num(count_text(item["num_parameters"])), num(steps_text(item)), num(count_text(item["num_tokens"])),
            num(f"{100 * item['loss_fraction']:.1f}%"), num(number_text(item["final_train_loss"], 3)),
            num(number_text(item["heldout_loss"], 3)), yardstick_text(item),
            num(f"{item['tokens_per_second']:,.0f}"), num(duration_text(item["wall_seconds"])),
        )
        for _, item in pretraining.iterrows()
    ]  # fmt: skip
    return Table(
        "Pretraining runs",
        ("Run", "Params", "Steps", "Tokens", "Loss on", "Final train loss", "Held-out loss", "Held-out metric", "Tokens/s", "Wall time"),
        tuple(rows),
        note="“Loss on” is the fraction of token positions that carry loss, counted over the batches actually trained. "
        "Losses of different objectives are over different targets and are not comparable with each other. The held-out "
        "yardstick is shared by runs of one attention pattern: next-token perplexity for causal and prefix attention, "
        "masked-token accuracy at 15% masking for bidirectional. A second stage (steps a–b) counts its own steps only.",
    )


# ------------------------------------------------------------------ objective sections

SECTION_INTROS = {
    CAUSAL: "Left-to-right next-token prediction. MEAP replaces a share of a causal LM's input positions by [MASK] and still predicts every next token.",
    MASKED: "Bidirectional models trained on corrupted positions: MLM (the headline run), MLM with next-sentence prediction "
    "(RoBERTa's ablation), and ELECTRA's replaced-token detection, whose kept discriminator never trains the LM head "
    "that the held-out yardstick reads.",
    DENOISERS: "Prefix attention: bidirectional over a prefix, causal after it. Prefix LM predicts the suffix; span "
    "corruption (T5) drops spans from the input and predicts them after it; UL2 mixes span-corruption and prefix-LM denoisers.",
    MASKING: "MLM at several masking ratios with BERT's replacement rule ([MASK] / random token / kept), and with every "
    "selected token replaced by [MASK]. The headline MLM run is repeated (grey) as its point of the sweep.",
    TWO_STAGE: "CLM for the first share of the step budget, then MLM from the CLM checkpoint taken before any learning-rate "
    "decay, to the same total steps on the same data. 0% is the MLM run and 100% the CLM run (grey). At a budget shorter "
    "than the full runs', the 0% and 100% ends are the MLM and CLM runs branched before their decay and decayed at that "
    "budget, and that budget's splits are measured against them. A second stage's “Loss on” counts its own (MLM) steps only.",
    CONTINUED: "MLM trained further on the finished (decayed) CLM and MLM models, with the same steps, schedule and data "
    "for both bases: compare the two rows (claims c09 and p02 give their difference with its interval).",
    OTHER: "Runs of objective kinds that no other section covers.",
}
SECTION_FIGURES = {TWO_STAGE: "two_stage", MASKING: "masking"}
NO_BREAK = "\u00a0"
VERSUS_NOTE = (
    "Δ is the run minus the CLM (MLM) run of the same size (in the two-stage section, of the same step budget), with a "
    "Welch interval; “better” or “worse” only when the "
    "interval excludes zero, else “no difference resolved”. Grey rows repeat a reference run."
)


def replacement_text(run: Mapping[str, Any]) -> str:
    """An MLM replacement rule as ``80/10/10``: [MASK] / random token / kept, in percent."""
    mask, random = run["mask_token_fraction"], run["random_token_fraction"]
    return f"{100 * mask:g}/{100 * random:g}/{100 * (1 - mask - random):g}"


# Columns only some sections show: (header, text of an objectives.csv row).
SECTION_COLUMNS: dict[str, tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...]] = {
    MASKING: (("Masking ratio; [MASK] / random / kept", lambda r: f"{percent_text(r['mask_ratio'])}; {replacement_text(r)}"),),
    TWO_STAGE: (("Budget (steps)", lambda r: f"{int(r['num_steps']):,}"), ("CLM share", lambda r: percent_text(r["clm_share"]))),
}


@dataclass(frozen=True)
class ObjectiveSection:
    """One report section per value of objectives.csv's ``section``."""

    title: str
    anchor: str
    intro: str
    tables: tuple[Table, ...]
    figure: str  # the name of its figure among the report's images; "" for none


def anchor_of(title: str) -> str:
    return "objectives-" + re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def versus_cell(item: Mapping[str, Any], kind: str) -> Cell:
    """Δ vs the ``kind`` reference run with its interval (kept on one line), the verdict
    word below it (the template keeps the line break), coloured by the verdict."""
    verdict = item[f"versus_{kind}"]
    gap = interval_text(item[f"minus_{kind}_mean"], item[f"minus_{kind}_low"], item[f"minus_{kind}_high"], signed=True)
    return Cell(f"{gap.replace(' ', NO_BREAK)}\n{verdict}", f"num versus versus-{verdict.replace(' ', '-')}")


def objective_table(section: str, family: str, rows: pd.DataFrame, runs: pd.DataFrame, confidence: float) -> Table:
    """A section's runs on one task family: how each was trained, its pretraining
    yardsticks, its family average, and its difference from CLM and from MLM."""
    level = f"{100 * confidence:g}% CI"
    extra = SECTION_COLUMNS.get(section, ())
    body = []
    for _, item in rows.iterrows():
        run = runs.loc[item["run"]]
        body.append(row(
            key(item["run"]), run["description"], *(num(text(item)) for _, text in extra), yardstick_text(run),
            num(f"{100 * run['loss_fraction']:.1f}%"), num(plus_minus_text(item["test_mean"], item["test_low"], item["test_high"])),
            versus_cell(item, "clm"), versus_cell(item, "mlm"),
            css="reference" if item["repeated"] else "",
        ))  # fmt: skip
    return Table(
        f"{section}, {family} family average: test score, seed mean ± {level}, at the LR chosen on validation",
        ("Run", "How it was trained", *(header for header, _ in extra), "Held-out yardstick", "Loss on", f"{family} average",
         f"Δ vs CLM [{level}]", f"Δ vs MLM [{level}]"),
        tuple(body),
        note=VERSUS_NOTE,
        css="wide-text objectives",
    )  # fmt: skip


def objective_sections(objectives: pd.DataFrame, pretraining: pd.DataFrame, confidence: float) -> list[ObjectiveSection]:
    """The sections that objectives.csv has runs for, in :data:`SECTIONS` order, one
    table per task family."""
    runs = pretraining.set_index("run")
    families = objectives[objectives["level"] == "family"]
    sections = []
    for section in SECTIONS:
        rows = families[families["section"] == section]
        if rows.empty:
            continue
        tables = tuple(objective_table(section, family, group, runs, confidence) for family, group in rows.groupby("family", sort=True))
        sections.append(ObjectiveSection(section, anchor_of(section), SECTION_INTROS[section], tables, SECTION_FIGURES.get(section, "")))
    return sections


def lr_sensitivity_table(lr_sensitivity: pd.DataFrame, scores: pd.DataFrame) -> Table:
    """How much each run's test score depends on the fine-tuning learning rate, over the
    seeds that ran every LR (all of them on a full grid)."""
    merged = lr_sensitivity.merge(scores[["task", "run", "best_learning_rate", "n_seeds", "test_mean"]], on=["task", "run"], how="left")
    rows = [
        row(
            key(item["task"]), key(item["run"]), num(f"{item['best_learning_rate']:.0e}"), num(number_text(item["test_mean"])),
            num(f"{item['num_selection_seeds']} / {item['n_seeds']}"),
            num(number_text(item["test_spread"])), num(number_text(item["test_std"])),
            num(f"{item['num_near_best']} of {item['num_learning_rates']}"),
        )
        for _, item in merged.iterrows()
    ]  # fmt: skip
    return Table(
        "Learning-rate sensitivity: test score over the LR grid, mean over the seeds that ran every LR",
        (
            "Task", "Run", "Best LR (validation)", "Test at best LR (all seeds)", "Seeds: every LR / best LR",
            "Spread (max − min)", "Std over LRs", "LRs within 1 pt of best",
        ),
        tuple(rows),
    )  # fmt: skip


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


def majority_text(task: Mapping[str, Any]) -> str:
    """The majority-class score, or the trivial baseline's where the task has no classes."""
    label = task["majority_label"]
    return f"{number_text(task['majority_test_score'])} ({label})" if isinstance(label, str) else number_text(task["majority_test_score"])


def tasks_table(tasks: pd.DataFrame) -> Table:
    """Downstream tasks; a proxy is named as one, with how its labels were derived."""
    rows = []
    for _, item in tasks.iterrows():
        proxy = item["proxy_for"] if isinstance(item["proxy_for"], str) and item["proxy_for"] else ""
        rows.append(row(
            key(item["task"]), item["family"], Cell(f"PROXY for {proxy}", "proxy") if proxy else Cell("— (no study counterpart)", "muted"),
            item["labels"], num(f"{item['num_train']:,} / {item['num_validation']:,} / {item['num_test']:,}"),
            num(majority_text(item)), item["description"], derived if isinstance(derived := item.get("derived_labels"), str) else "—",
        ))  # fmt: skip
    return Table(
        "Downstream tasks",
        ("Task", "Family", "Stands in for", "Labels", "Train / val / test", "Trivial baseline (test)", "What it is", "How labels were derived"),
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
            row(key(run), *(num(plus_minus_text(*by_run.loc[(run, k), ["test_mean", "test_low", "test_high"]])) if (run, k) in by_run.index else "—" for k in keys))
            for run in runs
        ]  # fmt: skip
        metric = described.loc[task, "metric"] if task in described.index else ""
        result.append(Table(f"{task} ({metric}): every number of the metric, at the LR chosen on validation", ("Run", *keys), tuple(body)))
    return result


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
