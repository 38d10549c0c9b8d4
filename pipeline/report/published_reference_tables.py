"""The report's tables of the study's published cells (published_reference.csv): how many of
each experiment's cells this run produced and how they fell, then every produced cell beside
the study's number."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from pipeline.analysis.contract import NOT_RUN, OUTSIDE, WITHIN
from pipeline.analysis.text import interval_text, number_text
from pipeline.external.published_tables import CITATION
from pipeline.report.tables import Cell, Table, key, num, row

EXPERIMENT_TITLES = {
    "mlm_vs_clm": "MLM vs CLM, 42k steps (Tables 2-5)",
    "data_efficiency": "Learning curves, 610M (Tables 6-9)",
    "two_stage": "CLM→MLM splits, 610M (Tables 10-13)",
    "cpt": "MLM continued pretraining, 610M (Tables 14-17)",
}


def summary_line(cells: pd.DataFrame) -> str:
    """How many of the study's cells this run reproduced, differed from, or did not run."""
    counts = cells["verdict"].value_counts()
    produced = int(counts.get(WITHIN, 0) + counts.get(OUTSIDE, 0))
    comparable = int(cells["comparable"].astype(bool).sum())
    if produced == 0:
        return (
            f"Of the study's {len(cells)} published cells, this run produced none ({len(cells)} not run): it has none of the"
            " study's sizes (210m, 610m, 1b) fine-tuned on its datasets at its budgets."
        )
    return (
        f"Of the study's {len(cells)} published cells, this run produced {produced}: {int(counts.get(WITHIN, 0))} within the study's "
        f"interval, {int(counts.get(OUTSIDE, 0))} outside it; {int(counts.get(NOT_RUN, 0))} not run. "
        f"{comparable} of the {produced} were measured the study's way (its scale and fine-tuning protocol); "
        + ("the others are set beside it to place this run, not to test the study." if produced > comparable else "")
    ).strip()


def model_text(cell: pd.Series) -> str:
    """A published model as the paper's tables name it: "610M MLM-40, 3k+9k", "610M CLM base + 12k MLM"."""
    masking = f"-{int(cell['masking'])}" if cell["masking"] >= 0 else ""
    if cell["experiment"] == "two_stage":
        return f"{cell['size']} {cell['clm_steps'] // 1000}k CLM + {cell['mlm_steps'] // 1000}k MLM{masking}"
    if cell["experiment"] == "cpt":
        return f"{cell['size']} {cell['objective']} base + {cell['cpt_steps'] // 1000}k MLM{masking}"
    return f"{cell['size']} {cell['objective']}{masking}, {cell['steps'] // 1000}k steps"


def summary_table(cells: pd.DataFrame) -> Table:
    rows = []
    for experiment, group in cells.groupby("experiment", sort=False):
        counts = {verdict: int((group["verdict"] == verdict).sum()) for verdict in (WITHIN, OUTSIDE, NOT_RUN)}
        produced = counts[WITHIN] + counts[OUTSIDE]
        rows.append(
            row(
                EXPERIMENT_TITLES[experiment],
                num(f"{len(group)}"),
                num(f"{produced}"),
                num(f"{int(group['comparable'].sum())}"),
                num(f"{counts[WITHIN]}"),
                num(f"{counts[OUTSIDE]}"),
                num(f"{counts[NOT_RUN]}"),
            )
        )
    return Table(
        "The study's published cells against this run",
        ("Experiment", "Cells", "Produced here", "Comparable", "Within its interval", "Outside", "Not run"),
        tuple(rows),
        note=f"{summary_line(cells)} Source: {CITATION} (pipeline/external/published/).",
    )


def cells_table(cells: pd.DataFrame) -> Table:
    produced = cells[cells["verdict"] != NOT_RUN]
    rows = [
        row(
            key(model_text(cell)),
            cell["dataset"],
            num(f"{cell['study_mean']:.2f} ± {cell['study_ci']:.2f}"),
            num(interval_text(cell["mean"], cell["low"], cell["high"])),
            num(number_text(cell["difference"], signed=True)),
            Cell(cell["verdict"], "verdict"),
            key(cell["run"] + (f" @ step {cell['step']}" if pd.notna(cell["step"]) else "")),
            "yes" if cell["comparable"] else f"no: {cell['not_comparable_because']}",
        )
        for _, cell in produced.iterrows()
    ]
    return Table(
        "Every published cell this run produced, beside the study's number",
        ("Study's model", "Dataset", "Study (mean ± 95% CI)", "This run", "Difference", "Verdict", "Run", "Comparable"),
        tuple(rows),
        note="The study's numbers are means over 5 fine-tuning seeds at the LR chosen on validation, as printed; a run is matched"
        " by its size name, objective, masking and steps in proportion to its budget, so a shrunk run fills the study's cells to"
        " show where it sits, and says why it is not comparable.",
        css="wide-text",
    )


def published_reference_tables(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    cells = frames["published_reference"]
    produced = (cells["verdict"] != NOT_RUN).any()
    return [summary_table(cells), *([cells_table(cells)] if produced else [])]
