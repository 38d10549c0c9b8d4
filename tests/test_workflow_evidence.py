"""config/evidence.yaml's shape end to end at smoke size, in a temporary directory (its own
file, so that `make test`'s two workers run it beside the smoke run of tests/test_workflow.py).
Downloads its pinned artifacts from PyPI (~15 MB) as that run does."""

from __future__ import annotations

import csv
import json

import pytest

from tests.conftest import REPO, run_snakemake

pytestmark = pytest.mark.slow


def test_the_evidence_tier_at_smoke_size_pools_pretraining_replicates(tmp_path):
    """config/evidence.yaml's shape end to end (two pretraining replicates per arm, each with
    its random-init twin): the headline and the zero-shot intervals are over pretraining seeds,
    and the report has the budget trend."""
    workdir = tmp_path
    done = run_snakemake(workdir, (REPO / "config" / "evidence.yaml", REPO / "tests" / "fixtures" / "evidence_smoke.yaml"))
    assert done.returncode == 0, done.stderr[-3000:]
    tables = workdir / "results" / "tables"
    runs = {row["run"] for row in csv.DictReader((tables / "run_scores.csv").open())}
    assert runs == {f"{name}-micro" for name in ("clm", "clm_r1", "mlm", "mlm_r1", "random", "random_r1")}
    comparison = list(csv.DictReader((tables / "comparison.csv").open()))
    assert comparison and all(row["pretraining_seeds"] == "2" and row["random_run"] == "random-micro" for row in comparison)
    pairs = [
        row
        for row in csv.DictReader((tables / "minimal_pairs.csv").open())
        if row["run"] == "mlm-micro" and row["kind"] == "all" and not row["step"]
    ]
    assert len(pairs) == 1 and pairs[0]["pretraining_seeds"] == "2" and pairs[0]["random_run"] == "random-micro random_r1-micro"
    fit = {(row["name"], row["contrast"]): row for row in csv.DictReader((tables / "budget_fit.csv").open())}
    assert fit[("SC", "MLM − CLM")]["num_budgets"] == "3" and ("minimal pairs", "CLM − random init") in fit
    provenance = json.loads((workdir / "results" / "init" / "random_r1-micro" / "provenance.json").read_text())
    assert provenance["spec"]["seed"] == 1
    html = (workdir / "reports" / "replication.html").read_text()
    assert "Evidence at this scale" in html and "over 2 pretraining seeds per arm" in html
