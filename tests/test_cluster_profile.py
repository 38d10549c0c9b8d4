"""The SLURM profile read beside the paper plan it submits: what it names and what it retries,
and the traps of combining it with other config files."""

from __future__ import annotations

import pytest
import yaml

from pipeline.configure import load_config, read_configs, resolve_files
from pipeline.errors import PipelineError
from tests.conftest import REPO, run_snakemake

PROFILE = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
PAPER = str(REPO / "config" / "paper.yaml")


def test_the_profile_submits_the_paper_config_and_retries_as_often_as_it_plans():
    """A job cut at its limit is resubmitted retries times: the plan's job_attempts (each a
    resumable attempt, what cost.check_job_limits sizes runs by) is that plus the first."""
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
