"""Results reach the aggregate through one manifest built from the rule registration: a rule
declares the kind of result its jobs feed (``@rule(..., results=...)``), the workflow lists every
planned job's output under its rule's kind, and ``aggregate --results`` reads that list. No rule
file, target function or flag lists a rule's result files by hand."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

from pipeline.analysis import aggregate
from pipeline.errors import PipelineError
from pipeline.result_kinds import REQUIRED, RESULT_KINDS, read_manifest, write_manifest
from pipeline.workflow.configure import read_configs, resolve_files
from pipeline.workflow.result_manifest import result_files
from pipeline.workflow.rule_params import RULES, rule
from pipeline.workflow.targets import every_job
from tests.conftest import REPO

DEFAULT = str(REPO / "config" / "default.yaml")


def default_resolved():
    return resolve_files(read_configs([DEFAULT]), [DEFAULT])


@pytest.mark.parametrize("configs", [["default.yaml"], ["default.yaml", "paper.yaml"], ["default.yaml", "smoke.yaml"]])
def test_the_manifest_lists_each_job_under_the_kind_its_rule_registered(configs: list[str]) -> None:
    files = [str(REPO / "config" / name) for name in configs]
    resolved = resolve_files(read_configs(files), files)
    listed = result_files(every_job(resolved))
    assert list(listed) == list(RESULT_KINDS)
    expected: dict[str, list[str]] = {kind: [] for kind in RESULT_KINDS}
    for job in every_job(resolved):
        kind = RULES[job.writes_for or job.rule].results
        if kind is not None:
            expected[kind].append(job.output)
    assert listed == expected
    assert all(listed[kind] for kind in REQUIRED)
    # a task scored on another's models (finetune_evaluated) is listed where its own job's scores would be
    evaluated = [job for job in every_job(resolved) if job.rule == "finetune_evaluated"]
    assert all(job.output in listed[RULES[job.writes_for].results] for job in evaluated)


def test_every_kind_a_rule_feeds_is_read_by_the_aggregate() -> None:
    """A kind the workflow lists but no reader reads would be verified and then silently dropped."""
    source = Path(aggregate.__file__).read_text()
    body = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef) and node.name == "read_sources")
    read = set(re.findall(r'of\("(\w+)"\)', ast.get_source_segment(source, body) or ""))
    assert read == set(RESULT_KINDS)
    assert {spec.results for spec in RULES.values()} - {None} == set(RESULT_KINDS)


def test_the_aggregate_rule_and_its_stage_name_no_kind_of_result() -> None:
    """rules/report.smk hands over the manifest alone; the stage has one flag for it."""
    rule_text = (REPO / "rules" / "report.smk").read_text()
    aggregate_rule = rule_text[rule_text.index("rule aggregate:") : rule_text.index("if CFG.study_results")]
    assert "targets." not in aggregate_rule and "--results {input.manifest:q}" in aggregate_rule
    flags = set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', Path(aggregate.__file__).read_text()))
    assert flags == {"--spec", "--results", "--out"}


def test_a_rule_declaring_an_unknown_kind_of_result_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rule 'scores_elsewhere': no result kind 'score' \(pipeline/result_kinds.py: scores,"):
        rule("scores_elsewhere", "finetune", results="score")(lambda resolved, wildcards: {})
    assert "scores_elsewhere" not in RULES


def test_an_unchanged_manifest_is_not_rewritten(tmp_path: Path) -> None:
    """Its time stamp is what reruns the aggregate: a plan whose files did not change leaves it alone."""
    path = tmp_path / "results" / "result_files.json"
    listed = result_files(every_job(default_resolved()))
    assert write_manifest(path, listed)
    os.utime(path, ns=(1, 1))
    assert not write_manifest(path, listed) and path.stat().st_mtime_ns == 1
    assert write_manifest(path, {**listed, "scores": listed["scores"][:-1]}) and path.stat().st_mtime_ns != 1
    assert {kind: list(map(str, paths)) for kind, paths in read_manifest(path).items()} == {**listed, "scores": listed["scores"][:-1]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "expected a JSON object of result kind -> files, got list"),
        ('{"scores": ["a"], "summaries": ["b"], "task_stats": ["c"], "score": []}', "key 'score' is not a result kind (scores, "),
        ('{"scores": "a", "summaries": ["b"], "task_stats": ["c"]}', "key 'scores' must be a list of file paths"),
        ('{"scores": ["a", 3], "summaries": ["b"], "task_stats": ["c"]}', "key 'scores' must be a list of file paths"),
        ('{"scores": ["a"], "summaries": [], "task_stats": ["c"]}', "key 'summaries' lists no file (pretraining runs'"),
        ("{", "not a JSON manifest; Snakemake writes it again when it plans the workflow (snakemake -n)"),
    ],
)
def test_a_malformed_manifest_is_one_line_naming_it(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "result_files.json"
    path.write_text(content)
    with pytest.raises(PipelineError) as error:
        read_manifest(path)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value) and "\n" not in str(error.value)


def test_the_manifest_file_keeps_every_kind_in_order(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    write_manifest(path, {"scores": ["s"], "summaries": ["p"], "task_stats": ["t"]})
    assert list(json.loads(path.read_text())) == list(RESULT_KINDS)
    assert read_manifest(path)["curve_scores"] == []
