"""The SLURM profile read beside the paper plan it submits: what it names and what it retries,
and the traps of combining it with other config files."""

from __future__ import annotations

import pytest
import yaml

from pipeline.errors import PipelineError
from pipeline.workflow.configure import load_config, read_configs, resolve_files
from tests.conftest import REPO, run_snakemake

PROFILE = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
PAPER = str(REPO / "config" / "paper.yaml")


def test_the_profile_submits_the_paper_config_and_retries_as_often_as_it_plans():
    """A job cut at its limit is resubmitted retries times: the plan's job_attempts (each a
    resumable attempt, what job_resources.check_job_limits sizes runs by) is that plus the first."""
    assert PROFILE["configfile"] == "config/paper.yaml" and "profile=slurm" in PROFILE["config"]
    paper = load_config(read_configs([PAPER]))
    assert PROFILE["retries"] + 1 == paper.hardware.job_attempts
    assert PROFILE["rerun-incomplete"] is True


def test_an_overlay_without_the_file_it_extends_is_refused_in_one_line(tmp_path):
    overlay = tmp_path / "rehearsal_only.yaml"
    overlay.write_text((REPO / "config" / "rehearsal.yaml").read_text())
    with pytest.raises(PipelineError, match=r"overlay_of: it extends config/paper.yaml, which is not among the config files before it"):
        resolve_files(read_configs([str(overlay)]), [str(overlay)])
    beyond = [PAPER, str(REPO / "config" / "paper_beyond.yaml")]
    assert resolve_files(read_configs(beyond), beyond).config.overlay_of == "config/paper.yaml"


def test_the_slurm_profile_s_marker_without_the_paper_config_warns(tmp_path):
    """--profile profiles/slurm --configfile mine.yaml replaces the profile's configfile: the plan
    is not the paper's, and the workflow says so before it submits anything."""
    mine = tmp_path / "mine.yaml"
    mine.write_text("scale: my own CPU plan. Nothing more.\n")
    planned = run_snakemake(tmp_path, (mine,), "-n", "--config", "profile=slurm")
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert "warning: profiles/slurm without config/paper.yaml among the config files" in planned.stderr
    assert "planning 'my own CPU plan'" in planned.stderr


def planned_jobs(stdout: str) -> list[dict]:
    """Each job of a Snakemake dry run: its rule, wildcards, threads and resources, as printed."""
    jobs, job = [], None
    for line in stdout.splitlines():
        if line.startswith("rule ") and line.endswith(":"):
            job = {"rule": line[5:-1]}
            jobs.append(job)
        elif job is not None and line.strip().startswith(("wildcards: ", "resources: ")):
            key, _, values = line.strip().partition(": ")
            job[key] = dict(item.split("=", 1) for item in values.split(", "))
        elif job is not None and line.strip().startswith("threads: "):
            job["threads"] = line.strip().removeprefix("threads: ")
    return jobs


def test_every_paper_gpu_job_asks_for_its_estimate_within_the_cluster_s_limit(tmp_path):
    """The paper's dry run, read job by job: each GPU job's time limit, host memory, GPUs and cores
    are its request (pipeline/workflow/job_resources.py), within max_job_hours and node_memory_gb; its
    attempts (retries + 1, each resuming) cover its estimate; the profile sets none of them."""
    from pipeline.workflow.configure import resolve
    from pipeline.workflow.job_resources import job_request
    from pipeline.workflow.rule_params import gpu_jobs

    resolved = resolve(read_configs([PAPER]), "paper")
    config, hardware = resolved.config, resolved.config.hardware
    gpu_rules = gpu_jobs()
    assert not set(gpu_rules) & set(PROFILE["set-resources"]) and not PROFILE.get("set-threads")
    planned = run_snakemake(tmp_path, (REPO / "config" / "paper.yaml",), "-n", "--cores", "1000")
    assert planned.returncode == 0, planned.stderr[-2000:]
    checked = {}
    for job in planned_jobs(planned.stdout):
        asked = job_request(config, resolved.plans, gpu_rules.get(job["rule"]), job.get("wildcards", {}))
        if asked is None:
            assert int(job.get("resources", {}).get("gpu", 0)) == 0, job
            continue
        resources = job["resources"]
        assert (int(resources["runtime"]), int(resources["mem_mb"])) == (asked.runtime, asked.mem_mb), job
        assert (int(resources["gpu"]), int(job["threads"])) == (asked.gpus, asked.cpus) and asked.gpus > 0, job
        assert asked.runtime <= 60 * hardware.max_job_hours and asked.mem_mb <= 1000 * hardware.node_memory_gb, job
        assert asked.attempts() <= PROFILE["retries"] + 1 == hardware.job_attempts, job
        checked[job["rule"]] = checked.get(job["rule"], 0) + 1
    assert checked == {
        "pretrain": 39,
        "finetune": 420,
        "finetune_checkpoint": 120,
        "finetune_outside": 190,
        "minimal_pairs": 42,
        "minimal_pairs_checkpoint": 12,
        "minimal_pairs_outside": 19,
    }
