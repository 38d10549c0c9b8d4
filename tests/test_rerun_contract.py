"""The rerun contract, without Snakemake: which jobs a config change reruns is which jobs'
params (pipeline/workflow/rule_params.py) change, over every job of the DAG (pipeline/workflow/targets.py).

A job whose own params are unchanged still reruns when an input it reads was rebuilt; these
tests pin the jobs a change reaches first, through params, which Snakemake cannot see past.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.workflow import rule_params
from pipeline.workflow.configure import Resolved, read_configs, resolve_files
from pipeline.workflow.targets import OUTPUTS, every_job

REPO = Path(__file__).resolve().parents[1]
DEFAULT = str(REPO / "config" / "default.yaml")


def resolved(change: Callable[[dict[str, Any]], None] = lambda data: None) -> Resolved:
    data = copy.deepcopy(read_configs([DEFAULT]))
    change(data)
    return resolve_files(data, [DEFAULT])


def job_params(config: Resolved) -> dict[str, dict[str, Any]]:
    return {job.output: rule_params.params(config, job.rule, job.wildcards) for job in every_job(config)}


BEFORE = job_params(resolved())


def rerun_by(change: Callable[[dict[str, Any]], None]) -> set[str]:
    after = job_params(resolved(change))
    assert after.keys() == BEFORE.keys(), "a params change must not add or drop jobs"
    return {output for output, params in after.items() if params != BEFORE[output]}


def outputs(rule: str, **wildcards: str) -> set[str]:
    """Every job output of ``rule`` whose wildcards include ``wildcards``."""
    pattern = re.escape(OUTPUTS[rule]).replace(r"\{", "{").replace(r"\}", "}")
    pattern = re.sub(
        r"{(\w+)}", lambda m: f"(?P<{m.group(1)}>{re.escape(wildcards[m.group(1)]) if m.group(1) in wildcards else '[^/]+'})", pattern
    )
    return {output for output in BEFORE if re.fullmatch(pattern, output)}


def test_every_job_has_one_output_and_params() -> None:
    assert len(BEFORE) > 100
    assert all("code" in params for params in BEFORE.values())


def test_a_learning_rate_changed_reruns_exactly_the_fine_tuning_jobs() -> None:
    rerun = rerun_by(lambda data: data["finetuning"].update(learning_rates=[1.0e-3, 2.0e-3]))
    assert rerun == outputs("finetune") | outputs("finetune_checkpoint") | outputs("finetune_outside")
    assert not outputs("bag_of_words") & rerun  # the bag of words reads the example budget, not the learning rate


def test_a_task_s_max_length_reruns_its_fine_tuning_but_not_its_data() -> None:
    rerun = rerun_by(lambda data: data.update(tasks={"sentiment": {"max_length": 60}}))  # merged over its task file
    fine_tuned = outputs("finetune", task="sentiment") | outputs("finetune_checkpoint", task="sentiment")
    assert rerun == fine_tuned | outputs("finetune_outside", task="sentiment") | outputs("bag_of_words", task="sentiment")
    assert outputs("prepare_task", task="sentiment").isdisjoint(rerun)


def test_a_metric_recorded_beside_the_headline_reruns_that_task_s_fine_tuning_alone() -> None:
    rerun = rerun_by(lambda data: data.update(tasks={"title_search": {"also_metrics": ["encodeval_ndcg_at_10"]}}))
    fine_tuned = outputs("finetune", task="title_search") | outputs("finetune_checkpoint", task="title_search")
    assert rerun == fine_tuned | outputs("finetune_outside", task="title_search") and fine_tuned


def test_a_masking_ratio_reruns_the_runs_of_that_objective_and_their_zero_shot_scores() -> None:
    config = resolved()
    mlm_runs = {plan.run for plan in config.plans.values() if plan.objective == "mlm"}
    rerun = rerun_by(lambda data: data["objectives"]["mlm"].update(mask_ratio=0.3))
    expected = {OUTPUTS["pretrain"].format(name=run.rsplit("-", 1)[0], size=run.rsplit("-", 1)[1]) for run in mlm_runs}
    expected |= {
        output for output in outputs("minimal_pairs") | outputs("minimal_pairs_checkpoint") if any(f"/{run}" in output for run in mlm_runs)
    }
    # The tables read the ratios from the runs' summary.json: a rebuilt input, not a param.
    assert rerun == expected and len(mlm_runs) >= 3


def test_the_bag_of_words_grid_reruns_the_bag_of_words_alone() -> None:
    assert rerun_by(lambda data: data["bag_of_words"].update(regularization=[0.1, 1.0])) == outputs("bag_of_words")


def test_the_report_title_reruns_the_report_stages_alone() -> None:
    assert rerun_by(lambda data: data["report"].update(title="Another title")) == outputs("aggregate") | outputs("report")


def test_every_rule_takes_its_params_from_the_contract() -> None:
    """Each rule of rules/*.smk takes ``**rule_params("<its name>")`` and writes ``OUTPUTS["<its name>"]``."""
    rules = {}
    for path in sorted((REPO / "rules").glob("*.smk")):
        for name, body in re.findall(r"^[ ]*rule (\w+):\n((?:[ ]+\S.*\n|\n)*)", path.read_text(), flags=re.M):
            rules[name] = body
    assert set(rules) == set(rule_params.RULES) == set(OUTPUTS)
    missing = sorted(name for name, body in rules.items() if f'**rule_params("{name}")' not in body or f'OUTPUTS["{name}"]' not in body)
    assert missing == []


@pytest.mark.slow
def test_every_job_is_the_snakemake_dag(tmp_path: Path) -> None:
    """every_job lists what ``snakemake --forceall`` would run, no more and no fewer (smoke config)."""
    config = str(REPO / "config" / "smoke.yaml")
    dry_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--forceall",
            "--cores",
            "1",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            config,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert dry_run.returncode == 0, dry_run.stderr[-2000:]
    planned = {  # an output's flag printed after it ("... (update)") is not part of its path
        (rule, re.sub(r" \(\w+\)$", "", output.strip()))
        for rule, line in re.findall(r"^rule (\w+):\n(?:    .*\n)*?    output: (.*)", dry_run.stdout, flags=re.M)
        if rule != "all"
        for output in line.split(",")
    }
    ours = resolve_files(read_configs([config]), [config])
    listed = [(job.rule, job.output) for job in every_job(ours)]
    jobs = re.findall(r"^rule (\w+):", dry_run.stdout, flags=re.M)
    assert len(listed) == len(set(listed)) == len(jobs) - jobs.count("all")
    assert set(listed) <= planned
