"""The report's sections on the objective zoo: one per value of objectives.csv's
``section`` (causal, masked, denoisers, masking ratio, two-stage, continued, other), each
an introduction and one table per task family."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.analysis.runs import CAUSAL, CONTINUED, DENOISERS, MASKED, MASKING, OTHER, SECTIONS, TWO_STAGE
from pipeline.analysis.text import interval_text, percent_text, plus_minus_text, replacement_text, yardstick_text
from pipeline.report.tables import Cell, Table, key, num, row

SECTION_INTROS = {
    CAUSAL: "Left-to-right next-token prediction. MEAP replaces a share of a causal LM's input positions by [MASK] and still predicts "
    "every next token.",
    MASKED: "Bidirectional models trained on corrupted positions: MLM (the headline run), MLM with next-sentence prediction "
    "(RoBERTa's ablation), and ELECTRA's replaced-token detection, whose kept discriminator never trains the LM head "
    "that the held-out yardstick reads: it is measured by its detection gain instead, the share (%) of the base rate's "
    "cross-entropy (always answering the share of tokens replaced) that its held-out predictions remove; 0 is no better "
    "than that guess.",
    DENOISERS: "Prefix attention: bidirectional over a prefix, causal after it. Prefix LM predicts the suffix; span "
    "corruption (T5) drops spans from the input and predicts them after it; UL2 mixes span-corruption and prefix-LM denoisers.",
    MASKING: "MLM at several masking ratios with BERT's replacement rule ([MASK] / random token / kept), and with every "
    "selected token replaced by [MASK]. The MLM run of the sweep's step budget is repeated (grey) as its point of the "
    "sweep: the headline run, or, where the zoo trains a shorter budget, MLM decayed at that budget.",
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
    "Δ is the run minus the CLM (MLM) run of the same size and step budget (at a budget shorter than the headline runs', "
    "CLM or MLM branched before its decay and decayed at that budget), with a Welch interval; “better” or “worse” only when the "
    "interval excludes zero, else “no difference resolved”. Grey rows repeat a reference run."
)


# Columns only some sections show: (header, text of an objectives.csv row).
SECTION_COLUMNS: dict[str, tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...]] = {
    MASKING: (("Masking ratio; [MASK] / random / kept", lambda r: f"{percent_text(r['mask_ratio'])}; {replacement_text(r)}"),),
    TWO_STAGE: (("Budget (steps)", lambda r: f"{int(r['trained_steps']):,}"), ("CLM share", lambda r: percent_text(r["clm_share"]))),
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
        body.append(
            row(
                key(item["run"]),
                run["description"],
                *(num(text(item)) for _, text in extra),
                yardstick_text(run),
                num(f"{100 * run['loss_fraction']:.1f}%"),
                num(plus_minus_text(item["test_mean"], item["test_low"], item["test_high"])),
                versus_cell(item, "clm"),
                versus_cell(item, "mlm"),
                css="reference" if item["repeated"] else "",
            )
        )
    return Table(
        f"{section}, {family} family average: test score, seed mean ± {level}, at the LR chosen on validation",
        (
            "Run",
            "How it was trained",
            *(header for header, _ in extra),
            "Held-out yardstick",
            "Loss on",
            f"{family} average",
            f"Δ vs CLM [{level}]",
            f"Δ vs MLM [{level}]",
        ),
        tuple(body),
        note=VERSUS_NOTE,
        css="wide-text objectives",
    )


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
