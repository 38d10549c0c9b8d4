"""Which result files the aggregate stage reads, by kind: every planned job whose rule registered a
kind of result (``@rule(..., results=...)``, :mod:`.rule_params`), in the workflow's job order.

The workflow writes this manifest (``rules/common.smk``) and gives it to ``aggregate --results``,
so no rule file, target function or command-line flag lists the result files of a rule: a new rule
feeding the aggregate declares its kind where it registers, and its jobs' outputs are listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pipeline.result_kinds import RESULT_KINDS
from pipeline.workflow.configure import Resolved
from pipeline.workflow.rule_params import RULES
from pipeline.workflow.targets import Job

RESULT_MANIFEST = "results/result_files.json"


def result_files(jobs: Iterable[Job]) -> dict[str, list[str]]:
    """Every kind of result (pipeline/result_kinds.py), with the output of each of ``jobs``
    (:func:`pipeline.workflow.targets.every_job`) feeding it."""
    files: dict[str, list[str]] = {kind: [] for kind in RESULT_KINDS}
    for job in jobs:
        kind = RULES[job.writes_for or job.rule].results
        if kind is not None:
            files[kind].append(job.output)
    return files


def study_versus_scores(files: dict[str, list[str]], resolved: Resolved) -> list[str]:
    """The fine-tuning scores of the outside models that are the study's checkpoints."""
    matched = resolved.config.study_matches()
    return [path for path in files["outside_scores"] if Path(path).parent.name in matched]
