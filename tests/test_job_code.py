"""Per-job code: a job's code hash covers the registry members it runs and not their siblings, so
an edit to one objective, task type or metric reruns the jobs that use it (measured on the
default's DAG, milliseconds per job, no Snakemake)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.__main__ import STAGES
from pipeline.code_graph import stage_code
from pipeline.workflow.configure import Resolved, read_configs, resolve
from pipeline.workflow.rule_params import RULES, job_uses
from pipeline.workflow.targets import Job, every_job, run_objective
from tests.test_code_graph import copy_of_the_package

DEFAULT = resolve(read_configs([]), "default")
JOBS = list(every_job(DEFAULT))
REPORTING = {"aggregate", "report"}  # read every table and claim kind: every registry whole


def job_codes(root: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], str]:
    """Each job of the default's DAG -> its code hash over the package at ``root``."""
    by_uses: dict[tuple, str] = {}
    codes = {}
    for job in JOBS:
        key = (RULES[job.rule].stage, job_uses(DEFAULT, job.rule, job.wildcards))
        if key not in by_uses:
            by_uses[key] = stage_code(STAGES[key[0]][0], root, key[1])
        codes[(job.rule, tuple(sorted(job.wildcards.items())))] = by_uses[key]
    return codes


def rerun_by(tmp_path: Path, relative: str, edit: Callable[[str], str] = lambda text: text + "\nCHANGED_BY_THE_TEST = 1\n") -> list[Job]:
    """The jobs whose code hash changes when ``relative`` (a file of a copy of the package) is edited."""
    root = copy_of_the_package(tmp_path)
    before = job_codes(root)
    path = root / relative
    path.write_text(edit(path.read_text()))
    after = job_codes(root)
    return [Job(rule, dict(wildcards)) for (rule, wildcards), code in after.items() if code != before[(rule, wildcards)]]


def objective_of(resolved: Resolved, job: Job) -> str | None:
    return run_objective(resolved, job.wildcards["name"], job.wildcards["size"]) if "size" in job.wildcards else None


def test_an_objective_edit_reruns_that_objective_s_jobs_and_the_report_only(tmp_path):
    rerun = rerun_by(tmp_path, "objectives/ul2.py")
    expected = [("aggregate", None), ("minimal_pairs", "ul2"), ("pretrain", "ul2"), ("report", None)]
    assert sorted((job.rule, job.wildcards.get("name")) for job in rerun) == expected
    clm = rerun_by(tmp_path / "clm", "objectives/clm.py")
    assert {job.rule for job in clm} == {"pretrain", "minimal_pairs", "minimal_pairs_checkpoint", *REPORTING}
    assert all(objective_of(DEFAULT, job) == "clm" for job in clm if job.rule not in REPORTING)
    assert sum(job.rule == "pretrain" for job in clm) == sum(plan.objective == "clm" for plan in DEFAULT.plans.values())


def test_a_task_type_or_metric_edit_reruns_the_fine_tuning_of_the_tasks_using_it(tmp_path):
    tasks = DEFAULT.config.tasks
    span_f1 = rerun_by(tmp_path, "metrics/span_f1.py")
    assert span_f1 and {job.rule for job in span_f1} <= {"finetune", "finetune_checkpoint", "bag_of_words"}
    assert {job.wildcards["task"] for job in span_f1} == {t for t in DEFAULT.config.finetuning.tasks if tasks[t].metric == "span_f1"}
    classification = rerun_by(tmp_path / "sc", "finetune/task_types/sequence_classification.py")
    assert {job.wildcards["task"] for job in classification} == {
        t for t in DEFAULT.config.finetuning.tasks if tasks[t].type == "sequence_classification"
    }
    assert len(classification) < len(JOBS) / 2


@pytest.mark.parametrize(
    "relative, edit",
    [
        ("objectives/ul2.py", lambda text: text + "\n# a comment\n"),
        ("metrics/span_f1.py", lambda text: text.replace('"""', '"""Reworded. ', 1)),
    ],
)
def test_prose_in_a_registry_member_reruns_nothing(tmp_path, relative, edit):
    assert rerun_by(tmp_path, relative, edit) == []


def test_every_registered_name_is_found_in_its_member_s_source():
    """The code graph finds each family's names statically (the literal in the register call); a
    name it could not find would keep the whole registry in every job's hash, silently."""
    from pipeline.analysis.claims.registry import KINDS
    from pipeline.code_graph import package_modules, registered_names
    from pipeline.finetune.task_types import TASK_TYPES
    from pipeline.metrics import METRICS
    from pipeline.objectives import OBJECTIVES
    from pipeline.pretrain.losses import LOSSES

    modules = package_modules()
    for registry in (OBJECTIVES, LOSSES, TASK_TYPES, METRICS, KINDS):
        for name in registry:
            assert name in registered_names(modules[registry.site(name)]), (registry.what, name)


def rules_of(jobs: list[Job]) -> set[str]:
    return {job.rule for job in jobs}


def test_a_display_only_edit_reruns_the_report_alone(tmp_path):
    """How a table looks (pipeline/report/) is the report's: the aggregate, which computes the
    numbers, does not rerun (issue 57: tables.py used to be the aggregate's code too)."""
    assert rules_of(rerun_by(tmp_path / "tables", "report/tables.py")) == {"report"}
    assert rules_of(rerun_by(tmp_path / "displays", "report/displays.py")) == {"report"}
    assert rules_of(rerun_by(tmp_path / "figures", "report/figures.py")) == {"report"}


def test_an_analysis_edit_that_changes_no_schema_reruns_the_aggregate_alone(tmp_path):
    """The report stage loads the tables' schema (analysis/table_schema.py, analysis/contract.py),
    not their builds: how a table is computed is the aggregate's code, and the report reads its CSV."""
    assert rules_of(rerun_by(tmp_path / "scoring", "analysis/scoring.py")) == {"aggregate"}
    assert rules_of(rerun_by(tmp_path / "builds", "analysis/table_builds.py")) == {"aggregate"}
    assert rules_of(rerun_by(tmp_path / "schema", "analysis/table_schema.py")) == {"aggregate", "report"}


def test_a_warm_worker_edit_reruns_nothing(tmp_path):
    """The warm worker changes where a CPU job's imports happen, not what it computes; the report
    reads only its usage line's format (pipeline/worker_usage.py)."""
    assert rerun_by(tmp_path, "warm_worker.py") == []


def test_a_statistic_s_edit_reruns_the_aggregate_and_the_report(tmp_path):
    """A statistic is computed by the aggregate and its numbers shown by the report; no training
    or fine-tuning job depends on it."""
    assert rules_of(rerun_by(tmp_path, "analysis/stats.py")) == {"aggregate", "report"}
