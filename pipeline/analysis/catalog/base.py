"""What a result table is: one registration naming its CSV, its columns, how the aggregate
stage builds it and the displays that show it.

The aggregate stage builds every registered table in the order their ``needs`` allow and
writes each as ``results/tables/{name}.csv``; the claim checks read them as
:class:`~pipeline.analysis.contract.Results`; the report stage reads each CSV back checking
its columns and renders each display the table names (:mod:`pipeline.report.displays`: the
section and the tables it shows). The names keep this side free of rendering code, so an edit
to how a table looks reruns the report alone. A new table is one new module of this package
that calls :func:`register`, and its display, if shown, one entry in ``report/displays.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from pipeline.analysis.claims.spec import Claim
from pipeline.registry import Registry


@dataclass(frozen=True)
class Sources:
    """What the aggregate stage read and validated (:mod:`pipeline.analysis.inputs`), from which
    every table is built."""

    grid: pd.DataFrame  # final models' fine-tuning grid, one row per (task, run, LR, seed)
    outside_grid: pd.DataFrame  # the same for outside models
    curve_grid: pd.DataFrame  # the same for learning-curve checkpoints, with pretraining_step
    pretraining: pd.DataFrame  # one row per summary.json
    tasks: pd.DataFrame  # one row per task stats.json
    bag_of_words: pd.DataFrame  # the lexical reference per task
    pair_outcomes: pd.DataFrame  # one row per (model, method, minimal pair)
    confidence: float
    objective_params: Mapping[str, Mapping[str, Any]]  # each run's objective parameters, as summary.json records them
    claims: Sequence[Claim]
    measured_by: str = "this run"  # whose runs these are (Results.measured_by)
    # task -> how its grids were fine-tuned, as scores.json records it (study_protocol.PROTOCOL_KEYS)
    protocols: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ResultTable:
    name: str  # the CSV's stem, the key in Results.tables
    description: str  # one line: what a row is (aggregate --help lists them)
    columns: tuple[str, ...]
    needs: tuple[str, ...]  # the tables build reads (built before it)
    build: Callable[[Sources, Mapping[str, pd.DataFrame]], pd.DataFrame]
    displays: tuple[str, ...] = ()  # names of the displays showing it (pipeline/report/displays.py)


TABLES: Registry[ResultTable] = Registry("result table")


def register(table: ResultTable) -> ResultTable:
    return TABLES.add(table.name, table)


def build_order() -> list[ResultTable]:
    """Every registered table after the tables it needs, alphabetical where they allow."""
    done: dict[str, ResultTable] = {}
    pending = sorted(TABLES)
    while pending:
        ready = [name for name in pending if all(need in done for need in TABLES[name].needs)]
        if not ready:
            raise ValueError(f"result tables whose needs are unregistered or circular: {pending}")
        for name in ready:
            done[name] = TABLES[name]
        pending = [name for name in pending if name not in done]
    return list(done.values())
