"""The study's published numbers (its appendix Tables 2-17, ``published/study_tables.csv``; the
source and its columns are in ``published/SOURCE.md``), read and checked as facts to set beside
this harness's results: no hub, no clone of the study's repository needed.

What is checked on every read, each failure one line naming the file, its line and the column:
the columns, their types and ranges (whole step counts a study could train, a masking
percentage, scores and half-widths on 0-100); each table's experiment and datasets (its family's three and their
``Average``); every model or checkpoint (a row's key: its table and every column but dataset,
mean and ci) given once per dataset; every ``Average`` equal to its three datasets' mean within
the rounding of numbers printed with two decimals; and the rows two tables share (the 610M
MLM-40 and CLM at 42k, which Tables 2-5 report, are the 0+42k and 42k+0 splits of Tables 10-13
and the bases of Tables 14-17, before any continued step) equal in mean and CI.
"""

from __future__ import annotations

import functools
import io
import math
from pathlib import Path

import pandas as pd

from pipeline.errors import PipelineError, first_line

PUBLISHED = Path(__file__).parent / "published" / "study_tables.csv"
CITATION = "Gisserot-Boukhlef et al., Should We Still Pretrain Encoders with Masked Language Modeling? arXiv:2507.00994v4, Tables 2-17"

COLUMNS = ["table", "experiment", "size", "objective", "masking", "steps", "cpt_steps", "clm_steps", "mlm_steps", "dataset", "mean", "ci"]
REQUIRED = ("table", "steps", "mean", "ci")  # the others are empty where they do not apply (a CLM's masking)
KEY = ["table", "experiment", "size", "objective", "masking", "steps", "cpt_steps", "clm_steps", "mlm_steps"]  # one model or checkpoint
AVERAGE = "Average"
FAMILY_DATASETS = {
    "SC": ("SST-2", "QQP", "MNLI"),
    "TC": ("CoNLL", "OntoNotes", "UNER"),
    "QA": ("SQuAD", "SQuAD-v2", "ReCoRD"),
    "IR": ("MS MARCO", "NQ", "MLDR"),
}
# The study's QA datasets whose every question has an answer in its passage (SQuAD v1.1; ReCoRD's
# cloze queries are each answered by an entity of the passage): a claim about abstaining is not about them.
UNANSWERABLE_FREE = ("SQuAD", "ReCoRD")
EXPERIMENTS = {"mlm_vs_clm": range(2, 6), "data_efficiency": range(6, 10), "two_stage": range(10, 14), "cpt": range(14, 18)}
FAMILY_ORDER = list(FAMILY_DATASETS)  # each experiment's four tables give SC, TC, QA, IR in this order
# An average of three numbers printed to 0.01 may differ from the printed average by up to
# 0.005 (its own rounding) + 0.005 (the mean of three roundings): 0.01, with a float's slack.
AVERAGE_TOLERANCE = 0.0101


def family_of_table(table: int) -> str:
    return FAMILY_ORDER[(table - 2) % 4]


def read_published_tables(path: Path = PUBLISHED) -> pd.DataFrame:
    """Every published cell, one row each, with its ``family``; PipelineError for any check that fails.

    The checks run once per content: the aggregate and report stages each read the tables
    twice or more (the reference table, the claims, the headline, the curve figure); every
    caller gets its own copy to change."""
    try:
        content = Path(path).read_bytes()
    except OSError as error:
        raise PipelineError(f"{path}: cannot read the published tables ({first_line(error)})") from None
    return _checked(content, str(path)).copy()


@functools.lru_cache(maxsize=4)
def _checked(content: bytes, path: str) -> pd.DataFrame:
    """The tables of a file's ``content``, typed and checked (``path`` names it in errors)."""
    try:
        frame = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise PipelineError(f"{path}: cannot read the published tables ({first_line(error)})") from None
    if list(frame.columns) != COLUMNS:
        raise PipelineError(f"{path}: columns {list(frame.columns)}, not {COLUMNS}")
    frame = _typed(frame, path)
    frame["family"] = frame["table"].map(family_of_table)
    _check_rows(frame, path)
    _check_averages(frame, path)
    _check_shared_rows(frame, path)
    return frame


# Each numeric column's range: tables 2-17, a masking percentage strictly inside 0-100, step
# counts a study could train (the study's longest is 42,000), scores and half-widths on 0-100.
RANGES = {
    "table": (2, 17),
    "masking": (1, 99),
    "steps": (0, 1_000_000),
    "cpt_steps": (0, 1_000_000),
    "clm_steps": (0, 1_000_000),
    "mlm_steps": (0, 1_000_000),
    "mean": (0, 100),
    "ci": (0, 100),
}
FRACTIONAL = ("mean", "ci")


def _typed(frame: pd.DataFrame, path: str) -> pd.DataFrame:
    """Integers where the column counts (-1 where it does not apply: left empty), mean and ci as
    floats; each a finite number in its column's range (``RANGES``), counts whole."""
    if frame.empty:
        raise PipelineError(f"{path}: no rows under its header")
    typed = frame.copy()
    for column, (low, high) in RANGES.items():
        text = frame[column].str.strip()
        values = pd.to_numeric(text.replace("", math.nan), errors="coerce")
        bad = values.isna() & ((text != "") | (column in REQUIRED))
        if bad.any():
            index = int(bad.idxmax())
            raise PipelineError(f"{path}: line {index + 2}: column {column!r}: {frame[column][index]!r} is not a number")
        given = values.notna()
        whole = values.isna() | (values == values.round()) | (column in FRACTIONAL)
        wrong = given & ~(values.between(low, high) & whole)
        if wrong.any():
            index = int(wrong.idxmax())
            kind = "a number" if column in FRACTIONAL else "a whole number"
            raise PipelineError(
                f"{path}: line {index + 2}: column {column!r}: {frame[column][index]!r} is not {kind} from {low:,} to {high:,}"
            )
        typed[column] = values if column in FRACTIONAL else values.fillna(-1).astype(int)
    return typed


def _check_rows(frame: pd.DataFrame, path: str) -> None:
    for index, row in frame.iterrows():
        where = f"{path}: line {index + 2}"
        tables = EXPERIMENTS.get(row["experiment"])
        if tables is None or row["table"] not in tables:
            known = ", ".join(f"{name} {span.start}-{span.stop - 1}" for name, span in EXPERIMENTS.items())
            raise PipelineError(f"{where}: table {row['table']} of experiment {row['experiment']!r} is not one of its tables ({known})")
        if row["dataset"] not in (*FAMILY_DATASETS[row["family"]], AVERAGE):
            raise PipelineError(f"{where}: dataset {row['dataset']!r} is not one of Table {row['table']}'s ({row['family']})")
    counts = frame.groupby(KEY)["dataset"].agg(lambda datasets: tuple(sorted(datasets)))
    for key, datasets in counts.items():
        expected = tuple(sorted((*FAMILY_DATASETS[family_of_table(key[0])], AVERAGE)))
        if datasets != expected:
            raise PipelineError(f"{path}: {_describe(key)}: datasets {list(datasets)}, not each of {list(expected)} once")


def _check_averages(frame: pd.DataFrame, path: str) -> None:
    for key, rows in frame.groupby(KEY):
        scores = rows.set_index("dataset")["mean"]
        mean = scores.drop(AVERAGE).mean()
        if abs(scores[AVERAGE] - mean) > AVERAGE_TOLERANCE:
            raise PipelineError(f"{path}: {_describe(key)}: Average {scores[AVERAGE]:.2f} is not its datasets' mean {mean:.3f}")


def _check_shared_rows(frame: pd.DataFrame, path: str) -> None:
    """The 610M models at 42k that three experiments report: one model, one number each."""
    for objective in ("MLM", "CLM"):
        headline = frame[(frame["experiment"] == "mlm_vs_clm") & (frame["size"] == "610M") & (frame["objective"] == objective)]
        headline = headline[(headline["masking"] == 40) | (objective == "CLM")]
        split = frame[(frame["experiment"] == "two_stage") & (frame["steps"] == 42000) & (frame["objective"] == objective)]
        base = frame[(frame["experiment"] == "cpt") & (frame["cpt_steps"] == 0) & (frame["objective"] == objective)]
        reference = headline.set_index("dataset")[["mean", "ci"]]
        for name, other in (("the 42k split", split), ("the continued-pretraining base", base)):
            if not other.set_index("dataset")[["mean", "ci"]].sort_index().equals(reference.sort_index()):
                raise PipelineError(f"{path}: 610M {objective} at 42k: {name} (Tables {_tables(other)}) differs from Tables 2-5")


def _tables(rows: pd.DataFrame) -> str:
    return ", ".join(str(table) for table in sorted(set(rows["table"])))


def _describe(key: tuple) -> str:
    """A model or checkpoint as the paper's tables name it: "Table 10, 610M CLM+MLM, 3000+9000 steps"."""
    row = dict(zip(KEY, key))
    what = f"Table {row['table']}, {row['size']} {row['objective']}" + (f"-{row['masking']}" if row["masking"] >= 0 else "")
    if row["clm_steps"] >= 0:
        return f"{what}, {row['clm_steps']}+{row['mlm_steps']} steps"
    if row["cpt_steps"] >= 0:
        return f"{what}, {row['steps']} steps + {row['cpt_steps']} continued"
    return f"{what}, {row['steps']} steps"
