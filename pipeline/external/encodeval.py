"""The study's own fine-tuning results, as EncodEval released them (github.com/hgissbkh/EncodEval,
branch ``MLM_vs_CLM``): one ``results.json`` per (model, task family, dataset, LR, seed),

    results/<model>/<family>/<dataset>/[<training set>_]lr<LR>_sd<seed>/results.json
    {"validation": {"score": 0.907, "scores_i": [1, 0, ...]}, "test": {"score": ..., "scores_i": [...]}}

``scores_i`` holds each evaluation example's score (accuracy 0/1, a QA F1, a ranking
metric), in the dataset's order, so two models' lists pair example by example. IR datasets
name the training pairs in front of the LR (``msmarco_pairs_lr1e-04_sd0``).

:func:`read_grid` reads every file into one row per grid point (the per-example lists stay on
disk; :func:`example_scores` reads those of the points a table chose), refusing a file that
does not follow the schema with a one-line error naming it and the key at fault.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.errors import PipelineError

SPLITS = ("validation", "test")
# EncodEval's metric per family (../shared/REFERENCE.md section 7), as this harness's metric
# registry names it: a per-example list of ours pairs with the study's only under the same one.
STUDY_METRICS = {"SC": "accuracy", "TC": "sentence_macro_f1", "QA": "qa_token_position_f1", "IR": "encodeval_ndcg_at_10"}
# Where EncodEval takes each dataset's test examples (encodeval/datasets.py, as TaskSpec.test_source
# names them): a per-example list of ours pairs with the study's only when it is of the same split.
STUDY_TEST_SOURCES = {
    "sst2": ("nyu-mll/glue/sst2 validation",),
    "mnli_m": ("nyu-mll/glue/mnli validation_matched",),
    "qqp": ("nyu-mll/glue/qqp validation",),
    "conll2003_en": ("hgissbkh/conll2003-en test",),
    "ontonotes": ("hgissbkh/ontonotes5 test", "hf://datasets/hgissbkh/ontonotes5@~parquet/ontonotes5/test/*.parquet"),
    "uner_en": ("hgissbkh/uner_en test",),
    "squad": ("rajpurkar/squad validation",),
    "squad_v2": ("rajpurkar/squad_v2 validation",),
    "record": ("hgissbkh/record validation",),
    "msmarco": ("BeIR/msmarco-qrels test",),
    "mldr_en": ("hgissbkh/mldr-en/default test",),
}
# Datasets whose test examples EncodEval draws anew in each run: their per-example lists are
# never paired or averaged by position (a dataset's test mean per run still stands).
UNSEEDED_TEST_SPLITS = {"nq": "its test queries are an unseeded random half of BeIR nq's, drawn anew in each run"}
# The LR as EncodEval writes it (1e-04, 5e-05, 0.0001): one number, not "1.2.3".
POINT = re.compile(r"^(?:(?P<training_set>.+)_)?lr(?P<learning_rate>(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)_sd(?P<seed>\d+)$")
GRID_COLUMNS = [
    "model",
    "family",
    "dataset",
    "training_set",
    "learning_rate",
    "seed",
    "validation",
    "test",
    "validation_examples",
    "test_examples",
    "path",
]


def read_grid(root: str | Path) -> pd.DataFrame:
    """One row per results.json under ``root`` (EncodEval's ``results/``): the point's
    model, family, dataset, training set ("" if none named), LR, seed, and each split's
    score and number of examples."""
    root = Path(root)
    if not root.is_dir():
        raise PipelineError(f"{root}: no such directory (EncodEval's results/, from its MLM_vs_CLM branch)")
    rows = [grid_point(root, path) for path in sorted(root.glob("*/*/*/*/results.json"))]
    if not rows:
        raise PipelineError(f"{root}: no <model>/<family>/<dataset>/<point>/results.json under it")
    return pd.DataFrame(rows, columns=GRID_COLUMNS)


def grid_point(root: Path, path: Path) -> dict[str, object]:
    model, family, dataset, point = path.relative_to(root).parts[:4]
    matched = POINT.match(point)
    if matched is None:
        raise PipelineError(f"{path}: directory {point!r} is not [<training set>_]lr<LR>_sd<seed>")
    row: dict[str, object] = {
        "model": model,
        "family": family,
        "dataset": dataset,
        "training_set": matched["training_set"] or "",
        "learning_rate": float(matched["learning_rate"]),
        "seed": int(matched["seed"]),
        "path": str(path),
    }
    for split, (score, examples) in zip(SPLITS, split_scores(path)):
        row[split], row[f"{split}_examples"] = score, len(examples)
    return row


def split_scores(path: Path) -> list[tuple[float, np.ndarray]]:
    """(score, per-example scores) of each split of one results.json."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PipelineError(f"{path}: not a JSON file ({error})") from None
    found = []
    for split in SPLITS:
        part = data.get(split) if isinstance(data, dict) else None
        if not isinstance(part, dict):
            raise PipelineError(f"{path}: no {split!r} object")
        score, examples = part.get("score"), part.get("scores_i")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not np.isfinite(score) or not 0 <= score <= 1:
            raise PipelineError(f"{path}: {split}.score is {score!r}, not a number from 0 to 1 (EncodEval's scale)")
        if (
            not isinstance(examples, list)
            or not examples
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in examples)
        ):
            raise PipelineError(f"{path}: {split}.scores_i is not a non-empty list of numbers")
        bad = next((i for i, v in enumerate(examples) if not (math.isfinite(v) and 0 <= v <= 1)), None)
        if bad is not None:
            raise PipelineError(f"{path}: {split}.scores_i[{bad}] is {examples[bad]!r}, not a number from 0 to 1 (EncodEval's scale)")
        found.append((float(score), np.asarray(examples, dtype=float)))
    return found


def example_scores(paths: list[str], split: str = "test") -> np.ndarray:
    """The per-example scores of ``split`` of these points (one model's seeds at its chosen
    LR), averaged over the points: (examples,)."""
    lists = [dict(zip(SPLITS, split_scores(Path(path))))[split][1] for path in paths]
    if len({len(values) for values in lists}) != 1:
        raise PipelineError(f"{paths[0]}: its {split} examples differ in number from those of {paths[-1]}")
    return np.mean(lists, axis=0)
