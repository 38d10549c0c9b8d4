"""Which run is which: the reference MLM and CLM runs, the report section of every
run, and what its objective's configuration says about it.

The headline comparison needs exactly one MLM and one CLM run per size, while the zoo
trains many runs of kind ``mlm`` (masking ratios, replacement rules, two-stage and
continued runs); the reference is the run *named* like its kind. A run trained to a
shorter step budget (a two-stage split, or the zoo at ``zoo.budget_steps``) is measured
against that budget's own MLM and CLM runs (the ``short_budget`` decay branches), not the
full-budget ones, and a section repeats the references of its runs' budget. Every other run is placed in
the section of the report that compares it with its peers (see objectives.csv in
:mod:`.aggregate`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from pipeline.errors import PipelineError
from pipeline.objectives import kind_of, registered_kinds
from pipeline.objectives.base import CAUSAL_SECTION, DENOISING_SECTION, MASKED_SECTION
from pipeline.objectives.mlm import MLMParams

# The report's sections of objectives.csv, in display order; an objective kind registers the
# first three (pipeline/objectives/).
CAUSAL, MASKED, DENOISERS = CAUSAL_SECTION, MASKED_SECTION, DENOISING_SECTION
MASKING, TWO_STAGE, CONTINUED, OTHER = "Masking ratio and 80/10/10", "Two-stage CLM→MLM", "Continued pretraining", "Other objectives"
SECTIONS = (CAUSAL, MASKED, DENOISERS, MASKING, TWO_STAGE, CONTINUED, OTHER)
STUDY_SECTIONS = {"short_budget": TWO_STAGE, "two_stage": TWO_STAGE, "continued": CONTINUED}
# Reference runs repeated in a section, with their CLM share there (None: not a two-stage point).
REPEATED_REFERENCES: dict[str, dict[str, float | None]] = {MASKING: {"mlm": None}, TWO_STAGE: {"mlm": 0.0, "clm": 1.0}}
# What an objective configured with MLMParams (or a subclass: NSP) says about its masking.
MASKING_FIELDS = tuple(field.name for field in dataclasses.fields(MLMParams))
PLACEMENT_COLUMNS = [
    "run",
    "objective",
    "study",
    "trained_steps",
    "section",
    "repeated",
    "clm_share",
    *MASKING_FIELDS,
    "base_run",
    "base_kind",
]
REFERENCE_KINDS = ("clm", "mlm")


def pick_run(group: pd.DataFrame, kind: str) -> pd.Series | None:
    """The run of objective kind ``kind`` in ``group`` (one size), or None if absent.

    Several runs of one kind at a size (e.g. MLM at two masking ratios, two-stage runs
    that end in MLM) are resolved to the one *named* exactly like the kind; if none is,
    which to compare is ambiguous and the report refuses to guess.
    """
    candidates = group[group["objective_kind"] == kind]
    named = candidates[candidates["run_name"] == kind]
    if len(named) == 1:
        return named.iloc[0]
    if len(candidates) == 1:
        return candidates.iloc[0]
    if candidates.empty:
        return None
    runs = ", ".join(sorted(candidates["run"].unique()))
    raise PipelineError(
        f"{len(candidates)} runs of kind {kind!r} at size {group['size'].iloc[0]!r} ({runs}) and none is named {kind!r}: cannot choose "
        "which to compare"
    )


def masks_tokens(kind: str) -> bool:
    """Whether objective ``kind`` is configured with MLMParams (its masking ratio and replacement rule)."""
    return kind in registered_kinds() and issubclass(kind_of(kind).params_type, MLMParams)


def masking(objective_params: Mapping[str, Mapping[str, Any]], run: str) -> dict[str, float]:
    """The masking ratio and [MASK] / random-token fractions run ``run`` trained with (an
    MLMParams objective), as its summary.json records them parsed."""
    params = objective_params[run]
    missing = [key for key in MASKING_FIELDS if key not in params]
    if missing:
        raise PipelineError(f"run {run!r}: its summary.json's objective_params have no {missing[0]!r}, so its masking is unknown")
    return {key: float(params[key]) for key in MASKING_FIELDS}


def home_section(run: pd.Series, mlm_reference: str | None) -> str:
    """The section that presents ``run``: its study's, else its kind's, except that MLM
    runs other than the reference (other ratios or replacement rules) are the masking
    section's."""
    if run["study"] in STUDY_SECTIONS:
        return STUDY_SECTIONS[run["study"]]
    if run["objective_kind"] == "mlm" and run["run"] != mlm_reference:
        return MASKING
    kind = run["objective_kind"]
    return kind_of(kind).section if kind in registered_kinds() else OTHER


def named_references(runs: pd.DataFrame) -> dict[str, str | None]:
    """The CLM and the MLM run among ``runs`` (one size), by :func:`pick_run`; None where absent."""
    return {kind: None if (run := pick_run(runs, kind)) is None else run["run"] for kind in REFERENCE_KINDS}


def budget_references(at_size: pd.DataFrame) -> dict[int, dict[str, str | None]]:
    """Per step budget at one size: its CLM and MLM runs, the decay branches (``short_budget``
    runs) at their budgets, the runs named like their kind at theirs."""
    branches = at_size[at_size["study"] == "short_budget"]
    full = named_references(at_size)
    steps = at_size.set_index("run")["trained_steps"]
    references = {int(budget): named_references(group) for budget, group in branches.groupby("trained_steps")}
    for kind, run in full.items():
        if run is not None:
            references.setdefault(int(steps[run]), dict.fromkeys(REFERENCE_KINDS))[kind] = run
    return references


def reference_runs(pretraining: pd.DataFrame) -> dict[str, dict[str, str | None]]:
    """Per run: the CLM and the MLM run it is measured against (None where its size has none).

    Those of its size and step budget (:func:`budget_references`), so that a 12k-step split
    is compared with MLM at 12k steps, not at 42k; a run of a budget without its own (and a
    continued run, which starts from the full runs) is measured against the size's named runs.
    """
    references = {}
    for _, at_size in pretraining.groupby("size", sort=False):
        full, by_budget = named_references(at_size), budget_references(at_size)
        for _, run in at_size.iterrows():
            own_budget = run["study"] != "continued" and int(run["trained_steps"]) in by_budget
            references[run["run"]] = by_budget[int(run["trained_steps"])] if own_budget else full
    return references


def tokens_from_initialisation(pretraining: pd.DataFrame) -> pd.Series:
    """Per run: the input positions its weights have seen since the initial ones (NaN for a run started
    from an outside model, whose own pretraining is not known here).

    ``num_tokens`` counts a run's own steps only, so a decay branch that starts at step 384 of a
    1,440-step run and ends at 480 counts 96 steps; what it has trained on is the 480 steps', the same
    as a 480-step run from scratch. A run started from another's checkpoint at step s adds that run's
    positions up to s (at its own positions per step, whatever it inherited included); one started
    from another's final model adds all of that run's.
    """
    table = pretraining.set_index("run")
    totals: dict[str, float] = {}

    def total(run: str) -> float:
        if run not in totals:
            row = table.loc[run]
            kind, own = row["started_from_kind"], float(row["num_tokens"])
            if kind == "initial":
                totals[run] = own
            elif kind == "final":
                totals[run] = own + total(row["started_from_run"])
            elif kind == "checkpoint":
                base = table.loc[row["started_from_run"]]
                inherited = total(row["started_from_run"]) - float(base["num_tokens"])
                per_step = float(base["num_tokens"]) / (base["trained_steps"] - base["first_step"])
                totals[run] = own + inherited + per_step * (row["started_from_step"] - base["first_step"])
            else:  # outside: an outside model's pretraining is not counted here
                totals[run] = math.nan
        return totals[run]

    return pd.Series({run: total(run) for run in table.index}, dtype=float)


def clm_share(run: pd.Series, home: str, base_kind: str) -> float:
    """The share of a two-stage-section run's step budget trained with CLM: a split's
    first stage (when it started from a CLM run), all or none of a decay branch's; NaN
    outside the section."""
    if home != TWO_STAGE:
        return math.nan
    if run["study"] == "short_budget":
        return REPEATED_REFERENCES[TWO_STAGE].get(run["objective_kind"], math.nan)
    return run["first_step"] / run["trained_steps"] if base_kind == "clm" else math.nan


def run_placements(pretraining: pd.DataFrame, objective_params: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (pretrained run, section showing it), with what that section plots.

    Each run is shown in its home section; at a size where a section of
    :data:`REPEATED_REFERENCES` has runs, the reference MLM / CLM run of each of their step
    budgets is repeated there as a point of comparison (unless that section is its home
    already). A run starting from another gets that base's kind, and a two-stage-section
    run its CLM share.
    """
    kinds = pretraining.set_index("run")["objective_kind"]
    rows = []
    for _, at_size in pretraining.groupby("size", sort=False):
        references = named_references(at_size)
        by_budget = budget_references(at_size)
        homes = {run["run"]: home_section(run, references["mlm"]) for _, run in at_size.iterrows()}
        budgets = {
            section: {int(r["trained_steps"]) for _, r in at_size.iterrows() if homes[r["run"]] == section}
            for section in REPEATED_REFERENCES
        }
        repeats = {
            (section, by_budget[budget][kind]): share
            for section, points in REPEATED_REFERENCES.items()
            for budget in sorted(budgets[section] & set(by_budget))
            for kind, share in points.items()
            if by_budget[budget][kind] is not None and homes[by_budget[budget][kind]] != section
        }
        for _, run in at_size.iterrows():
            base_kind = kinds.get(run["started_from_run"], "")
            shown = [(homes[run["run"]], False, clm_share(run, homes[run["run"]], base_kind))] + [
                (section, True, math.nan if share is None else share)
                for (section, reference), share in repeats.items()
                if reference == run["run"]
            ]
            masked = (
                masking(objective_params, run["run"]) if masks_tokens(run["objective_kind"]) else dict.fromkeys(MASKING_FIELDS, math.nan)
            )
            for section, repeated, share in shown:
                rows.append(
                    {
                        "run": run["run"],
                        "objective": run["objective"],
                        "study": run["study"],
                        "trained_steps": run["trained_steps"],
                        "section": section,
                        "repeated": repeated,
                        "clm_share": share,
                        **masked,
                        "base_run": run["started_from_run"] or "",
                        "base_kind": base_kind,
                    }
                )
    return pd.DataFrame(rows, columns=PLACEMENT_COLUMNS)
