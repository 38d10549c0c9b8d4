"""``python -m pipeline progress`` reads what the jobs left and never stands in a recovery's way: a
run's saved step counts only when its progress.json is readable, of this config's run and within the
run's steps; anything else is named in one line and not counted (the job's own resume decides)."""

from __future__ import annotations

import json
import logging

import pytest

from pipeline import strict
from pipeline.__main__ import main
from pipeline.pretrain.run import PretrainRunSpec
from pipeline.pretrain.spec_digest import spec_digest
from pipeline.workflow.configure import read_configs, resolve
from pipeline.workflow.jobs import pretrain_spec
from pipeline.workflow.progress import saved_step


@pytest.fixture(scope="module")
def default():
    return resolve(read_configs([]), "default")


def test_the_config_s_digest_is_the_one_the_job_writes(default, paper_plan):
    """The job digests its parsed spec (every default filled in); the progress line the config's JSON of it."""
    for resolved in (default, paper_plan):
        for plan in resolved.plans.values():
            text = pretrain_spec(resolved.config, plan)
            parsed = strict.to_plain(strict.parse_json(PretrainRunSpec, text, "pretrain"))
            assert spec_digest(json.loads(text)) == spec_digest(parsed), plan.run


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "not counted (JSONDecodeError"),
        ("[3]", "not counted (TypeError"),
        ('{"step": 3}', "not counted (KeyError: 'spec_digest')"),
        ('{"step": "3", "spec_digest": "x"}', "not counted (TypeError: step '3' and spec_digest 'x' are not an integer and a string)"),
        ('{"step": 3, "spec_digest": "another"}', "not counted: saved by a run of another config"),
        ('{"step": 99999, "spec_digest": "DIGEST"}', "not counted: step 99999 is outside the run's steps 0-"),
        ('{"step": -4, "spec_digest": "DIGEST"}', "not counted: step -4 is outside the run's steps 0-"),
    ],
)
def test_a_progress_file_that_cannot_count_is_named_and_not_counted(default, tmp_path, caplog, text, why):
    plan = next(plan for plan in default.plans.values() if plan.first_step == 0)
    digest = spec_digest(json.loads(pretrain_spec(default.config, plan)))
    path = tmp_path / "progress.json"
    path.write_text(text.replace("DIGEST", digest))
    with caplog.at_level(logging.WARNING):
        assert saved_step(path, plan, digest) == plan.first_step
    (message,) = [record.getMessage() for record in caplog.records]
    assert message.startswith(f"{path}: {why}") and "\n" not in message


def test_a_run_s_own_saved_step_counts(default, tmp_path):
    plan = next(plan for plan in default.plans.values() if plan.first_step == 0)
    digest = spec_digest(json.loads(pretrain_spec(default.config, plan)))
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"step": 3, "last_step": plan.last_step, "spec_digest": digest}))
    assert saved_step(path, plan, digest) == 3


def test_the_progress_line_prints_past_a_broken_file(default, tmp_path, capsys):
    plan = next(iter(default.plans.values()))
    work = tmp_path / "results" / "resume" / "pretrain" / plan.run
    work.mkdir(parents=True)
    (work / "progress.json").write_text("{")
    assert main(["progress", "--directory", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"0 of {len(default.plans)} pretraining runs done;") and "nan" not in line
