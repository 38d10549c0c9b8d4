"""The report's result tables: one function per table, CSV rows in, text cells out.

Each function returns a :class:`Table` of already-formatted strings (:mod:`pipeline.analysis.text`), so
the template only lays out cells and every number's rounding is decided once. Rows keep
the order of the aggregated CSVs (sizes by parameter count). The objective-zoo sections
are :mod:`.objective_sections`, the provenance and cost tables :mod:`.appendix_tables`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.analysis.contract import FLOOR_MARGIN
from pipeline.analysis.text import (
    count_text,
    detectable_text,
    duration_text,
    interval_text,
    number_text,
    plus_minus_text,
    steps_text,
    text_or,
    variance_text,
    yardstick_text,
)

# ------------------------------------------------------------------ the table type


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""  # e.g. "num" (right-aligned), "verdict-supported", "winner-mlm"

    def __post_init__(self):
        # A value that missed its formatting (None, a NaN read back from an empty CSV field) would print as
        # "None" or "nan" in the report's tables, which once hid the headline's MLM − CLM column: refused here.
        if not isinstance(self.text, str):
            raise TypeError(f"a report cell must be formatted text, got {self.text!r} ({type(self.text).__name__})")


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
        rows.append(
            row(
                key(size),
                ", ".join(group["run_name"]),
                num(count_text(first["num_parameters"])),
                num(count_text(first["num_non_embedding_parameters"])),
                num(f"{int(group['trained_steps'].max()):,}"),
                num(low if low == high else f"{low}–{high}"),
            )
        )
    return Table(
        "Model sizes trained in this run",
        ("Size", "Runs", "Parameters", "Non-embedding", "Steps", "Tokens per run"),
        tuple(rows),
        note="Tokens are the input positions a run processed; they differ between objectives whose examples are longer than "
        "the corpus block (span corruption adds sentinels and targets) and for runs started from another's weights (second stages, "
        "decay branches, continued runs), which count their own steps only.",
    )


def comparison_cells(item: Mapping[str, Any]) -> tuple[Cell, Cell, Cell, Cell]:
    """MLM, CLM, MLM − CLM and winner cells of a comparison.csv or curve_comparison.csv row."""
    return (
        num(plus_minus_text(item["mlm_mean"], item["mlm_low"], item["mlm_high"])),
        num(plus_minus_text(item["clm_mean"], item["clm_low"], item["clm_high"])),
        num(interval_text(item["difference_mean"], item["difference_low"], item["difference_high"], signed=True)),
        Cell(item["winner"], f"winner-{item['winner'].replace(' ', '-')}"),
    )


def headline_tables(
    comparison: pd.DataFrame, baselines: pd.DataFrame, confidence: float, study: Mapping[tuple[str, str, str], Any] | None = None
) -> list[Table]:
    """One "Task | MLM | CLM | Winner" table per size, with the references beside each task:
    random init (the same backbone, not pretrained) and the bag of words; family averages in bold.
    ``study``: the study's own MLM − CLM (study_headline.csv's row) by (size, level, name), a column where a size has any.

    A winner is named only when the CI of MLM − CLM excludes zero; otherwise "tie". A row
    where neither run clears its trivial baseline is "no evidence", not a tie.
    """
    tables = []
    level = f"{100 * confidence:g}% CI"
    references = baselines.set_index(["task", "run"])
    study = study or {}
    for size, at_size in comparison.groupby("size", sort=False):
        rows = []
        published = any(key[0] == size for key in study)
        for family, group in at_size.groupby("family", sort=True):
            tasks = group[group["level"] == "task"]
            for _, item in pd.concat([tasks, group[group["level"] == "family"]]).iterrows():
                is_family = item["level"] == "family"
                name = f"{family} average ({len(tasks)} task{'s' * (len(tasks) != 1)})" if is_family else item["name"]
                mlm, clm, gap, winner = comparison_cells(item)
                if bool(item["at_floor"]):
                    winner = Cell("no evidence", "winner-none")
                lexical = references.loc[(item["name"], item["mlm_run"])] if (item["name"], item["mlm_run"]) in references.index else None
                theirs = study.get((size, item["level"], item["name"]))
                study_gap = [theirs[f"difference_{part}"] for part in ("mean", "low", "high")] if theirs is not None else None
                beside = [num(interval_text(*study_gap, signed=True) if study_gap else "—")] if published else []
                rows.append(
                    row(
                        key(name),
                        mlm,
                        clm,
                        *reference_cells(item, lexical),
                        gap,
                        *beside,
                        winner,
                        num(detectable_text(item["difference_mde"], item["difference_seeds_to_decide"], "seeds")),
                        css="family" if is_family else "",
                    )
                )
        parameters = at_size["num_parameters"].iloc[0]
        tables.append(
            Table(
                f"Size {size} ({count_text(parameters)} parameters): test score, seed mean ± {level}, at the LR chosen on validation",
                (
                    "Task",
                    "MLM",
                    "CLM",
                    "Random init",
                    "Bag of words",
                    "Floor",
                    f"MLM − CLM [{level}, Welch]",
                    *(["The study's MLM-40 − CLM (Tables 2-5)"] if published else []),
                    "Winner",
                    "Detectable at 80% power (seeds to decide a tie)",
                ),
                tuple(rows),
                note="Random init: the same backbone fine-tuned from its initial weights, what pretraining has to beat. Floor: the "
                f"trivial baseline (majority class, always abstain, zero; a family: its tasks' highest); a row where neither MLM nor "
                f"CLM clears it by {FLOOR_MARGIN:g} point is no evidence about the objectives, not a tie. Detectable: the smallest "
                "MLM − CLM this many seeds would find 80% of the time, at the observed seed variance; for a tie, the seeds "
                f"per objective that would find the observed gap. Intervals are {variance_text(at_size['pretraining_seeds'].max())}.",
            )
        )
    return tables


def reference_cells(item: Mapping[str, Any], lexical: pd.Series | None) -> tuple[Cell, Cell, Cell]:
    """Random init (comparison.csv's, pooled like the arms), the bag of words (a task row of
    baselines.csv; none for a family) and the floor of a headline row."""
    has_random = isinstance(item["random_run"], str) and item["random_run"]  # blank (NaN read back) without a random-init run
    random = num(plus_minus_text(item["random_mean"], item["random_low"], item["random_high"])) if has_random else num("—")
    if lexical is None:
        return random, num("—"), num(number_text(item["floor"]))
    return (
        random,
        num(plus_minus_text(lexical["bag_of_words_mean"], lexical["bag_of_words_low"], lexical["bag_of_words_high"])),
        num(number_text(item["floor"])),
    )


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
        tables.append(
            Table(
                f"{family} average, size {size}: test score at each pretraining checkpoint, seed mean ± {level}, at the LR chosen on "
                "validation at that checkpoint",
                ("Pretraining step (share of the budget)", "CLM", "MLM", f"MLM − CLM [{level}, Welch]", "Winner"),
                tuple(rows),
                note="The final model's row is the headline comparison. Per-task points are in learning_curves.csv and "
                "curve_comparison.csv.",
            )
        )
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
            key(item["task"]),
            key(item["size"]),
            num(number_text(item["majority_test_score"])),
            num(plus_minus_text(item["bag_of_words_mean"], item["bag_of_words_low"], item["bag_of_words_high"])),
            num(plus_minus_text(item["random_mean"], item["random_low"], item["random_high"])),
            key(item["run"]),
            num(plus_minus_text(item["pretrained_mean"], item["pretrained_low"], item["pretrained_high"])),
            num(interval_text(item["minus_random_mean"], item["minus_random_low"], item["minus_random_high"], signed=True)),
        )
        for _, item in baselines.iterrows()
    ]
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
            key(item["run"]),
            num(count_text(item["num_parameters"])),
            num(steps_text(item)),
            num(count_text(item["num_tokens"])),
            num(f"{100 * item['loss_fraction']:.1f}%"),
            num(number_text(item["final_train_loss"], 3)),
            num(number_text(item["heldout_loss"], 3)),
            yardstick_text(item),
            num(f"{item['tokens_per_second']:,.0f}"),
            num(duration_text(item["wall_seconds"])),
        )
        for _, item in pretraining.iterrows()
    ]
    return Table(
        "Pretraining runs",
        ("Run", "Params", "Steps", "Tokens", "Loss on", "Final train loss", "Held-out loss", "Held-out metric", "Tokens/s", "Wall time"),
        tuple(rows),
        note="“Loss on” is the fraction of token positions that carry loss, counted over the batches actually trained. "
        "Losses of different objectives are over different targets and are not comparable with each other. The held-out "
        "yardstick is shared by runs of one attention pattern: next-token perplexity for causal and prefix attention, "
        "masked-token accuracy at 15% masking for bidirectional; ELECTRA's discriminator, whose LM head never trains, by its "
        "replaced-token detection gain over the base rate (%; 0: it detects no better than always answering the share "
        "replaced). A run started from another's checkpoint (steps a–b: a second "
        "stage or a decay branch) counts its own steps only. Tokens/s is over the time inside training steps, every "
        "attempt of a resumed run included; wall time is from the job's start, every attempt's (an attempt's time after its "
        "last saved state is lost with it).",
    )


def lr_sensitivity_table(lr_sensitivity: pd.DataFrame, scores: pd.DataFrame) -> Table:
    """How much each run's test score depends on the fine-tuning learning rate, over the
    seeds that ran every LR (all of them on a full grid)."""
    merged = lr_sensitivity.merge(scores[["task", "run", "best_learning_rate", "n_seeds", "test_mean"]], on=["task", "run"], how="left")
    rows = [
        row(
            key(item["task"]),
            key(item["run"]),
            num(f"{item['best_learning_rate']:.0e}"),
            num(number_text(item["test_mean"])),
            num(f"{item['num_selection_seeds']} / {item['n_seeds']}"),
            num(number_text(item["test_spread"])),
            num(number_text(item["test_std"])),
            num(f"{item['num_near_best']} of {item['num_learning_rates']}"),
        )
        for _, item in merged.iterrows()
    ]
    return Table(
        "Learning-rate sensitivity: test score over the LR grid, mean over the seeds that ran every LR",
        (
            "Task",
            "Run",
            "Best LR (validation)",
            "Test at best LR (all seeds)",
            "Seeds: every LR / best LR",
            "Spread (max − min)",
            "Std over LRs",
            "LRs within 1 pt of best",
        ),
        tuple(rows),
    )


def verdict_cell(verdict: str) -> Cell:
    return Cell(verdict, f"verdict verdict-{verdict.replace(' ', '-')}")


def claim_evidence(item: Mapping[str, Any]) -> str:
    """A verdict's evidence, and what it needed where it was not measured."""
    needed = text_or(item["needed"], "")
    return f"{item['evidence'].rstrip('.')}. Needed: {needed}." if needed else item["evidence"]


def claims_table(claims: pd.DataFrame, published: pd.DataFrame, released: pd.DataFrame | None = None) -> Table:
    """Every claim with its verdict on this run (coloured), the evidence or what is missing, and
    its verdicts on the study's published tables and, where given, its released results."""
    on_tables = published.set_index("id")["verdict"]
    on_released = released.set_index("id")["verdict"] if released is not None else None
    rows = []
    for _, item in claims.iterrows():
        unit = item["decide_unit"] if isinstance(item["decide_unit"], str) else ""
        power = num(detectable_text(item["detectable"], item["to_decide"], unit) if unit else "—")
        study = [verdict_cell(on_tables.get(item["id"], "not measured"))]
        if on_released is not None:
            study.append(verdict_cell(on_released.get(item["id"], "not measured")))
        rows.append(row(item["id"], item["claim"], verdict_cell(item["verdict"]), *study, power, claim_evidence(item)))
    released_header = ("The study's released results",) if on_released is not None else ()
    return Table(
        "Claims checked against this run, the study's published tables and its released results",
        (
            "ID",
            "Claim",
            "This run",
            "The study's published tables",
            *released_header,
            "Detectable at 80% power (seeds to decide)",
            "Evidence from this run",
        ),
        tuple(rows),
        note="Supported or contradicted only when the confidence interval excludes zero in that direction; a claimed "
        "magnitude outside the interval contradicts the claim as stated. Several comparisons (sizes, families) agree or the "
        "claim is mixed (every interval resolved, some for and some against: the evidence names which) or inconclusive. "
        "Detectable: the largest minimum detectable effect among the comparisons the verdict judged (in the claim's unit), "
        "and for an inconclusive verdict the seeds per arm that would detect every gap it judged, variance as observed. "
        "The published tables' verdicts (their evidence in the next table) use the study's printed means and 95% intervals"
        + ("; the released results' are in the study's section." if on_released is not None else "; no released results were given."),
        css="wide-text claims",
    )


def published_claims_table(published: pd.DataFrame, claims: pd.DataFrame) -> Table:
    """Every claim judged on the study's published tables, with the evidence from them."""
    text = claims.set_index("id")["claim"]
    rows = tuple(
        row(item["id"], text.get(item["id"], ""), verdict_cell(item["verdict"]), claim_evidence(item)) for _, item in published.iterrows()
    )
    return Table(
        "The claims on the study's published tables (its Tables 2-17, 210M-1B)",
        ("ID", "Claim", "Verdict", "Evidence from the published tables"),
        rows,
        note="Judged by the same checks as this run's, each published model a run of this harness (its splits, shorter budgets "
        "and continued runs too) and each published cell a mean over 5 fine-tuning seeds with its 95% half-width, read as a "
        "t-interval (4 df); a family's score is its published average, differences are Welch's. A claim's steps (an early lead "
        "and crossover, a gain after so many CPT steps) and what it claims at them are judged where runs trained those steps.",
        css="wide-text claims",
    )
