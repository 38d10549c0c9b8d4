"""The one-GPU tier's miniature (config/one_gpu_miniature.yaml, `make one-gpu-miniature`): the
tier's every rule through Snakemake on a CPU, from the fake hub staged into a mirror, with the
study's Llama-3 tokenizer; its report sets the cells it produced beside Tables 6-9's at 1k steps
and judges claim c04 on them; and its jobs, killed part-way, resume where they stopped."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline.__main__ import main
from tests import paper_hub
from tests.conftest import REPO, job_counts, run_snakemake, shared_download_cache, snakemake_command, without_timings

pytestmark = pytest.mark.slow
TIER = (REPO / "config" / "paper.yaml", REPO / "config" / "one_gpu.yaml")
CONFIGS = (*TIER, REPO / "config" / "one_gpu_miniature.yaml")


@pytest.fixture(scope="module")
def miniature(tmp_path_factory) -> tuple[Path, dict[str, int], Path]:
    """What `make one-gpu-miniature` does, in a temporary directory: (its working directory, jobs per rule, download cache)."""
    workdir, cache = tmp_path_factory.mktemp("one_gpu_miniature"), shared_download_cache(tmp_path_factory)
    paper_hub.stage_in(workdir, CONFIGS)
    done = run_snakemake(workdir, CONFIGS, cache=cache)
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir, job_counts(done.stderr + done.stdout), cache


def test_every_rule_of_the_tier_executes(miniature, tmp_path):
    """The tier itself, planned from nothing: two 610M runs (no two-stage, continued or outside
    model), each fine-tuned on the 10 trained datasets (nq and mldr_en scored on MS MARCO's), no
    random-init fine-tuning; the miniature runs every rule of it."""
    _, executed, _ = miniature
    planned = run_snakemake(tmp_path, TIER, "-n")
    assert planned.returncode == 0, planned.stderr[-2000:]
    tier = job_counts(planned.stdout)
    assert (tier["pretrain"], tier["finetune"], tier["finetune_evaluated"]) == (2, 20, 4)
    assert not {"finetune_checkpoint", "finetune_outside", "import_model"} & set(tier)
    assert set(tier) == set(executed)


def test_the_runs_stop_undecayed_at_the_study_s_first_checkpoint(miniature):
    workdir, _, _ = miniature
    for run in ("clm-610m", "mlm-610m"):
        summary = json.loads((workdir / "results" / "pretrain" / run / "summary.json").read_text())
        assert (summary["trained_steps"], summary["schedule_steps"]) == (4, 168)  # 1,000 of the study's 42,000
        assert "the first 4 steps of a 168-step schedule, undecayed" in summary["description"]


def test_the_report_sets_its_cells_beside_tables_6_to_9_at_1k_steps(miniature):
    workdir, _, _ = miniature
    cells = pd.read_csv(workdir / "results" / "tables" / "published_reference.csv")
    produced = cells[cells["run"].notna()]
    assert set(produced["experiment"]) == {"data_efficiency"} and set(produced["steps"]) == {1000}
    assert set(produced["table"]) == {6, 7, 8, 9}  # SC, TC, QA, IR: one dataset of each, and NQ
    assert sorted(produced["dataset"]) == sorted(2 * ["SST-2", "CoNLL", "SQuAD", "MS MARCO", "NQ"])
    assert set(produced["run"]) == {"clm-610m", "mlm-610m"}
    assert not produced["comparable"].any() and produced["not_comparable_because"].str.contains("the study's parameters").all()
    # the full grid: the learning rate chosen as the study chose it, so scale is the one difference
    assert not produced["not_comparable_because"].str.contains("learning_rate_chosen_on").any()
    html = (workdir / "reports" / "replication.html").read_text()
    assert "data_efficiency" in html or "Tables 6-9" in html


def test_claim_c04_is_judged_on_the_tier_s_own_curves(miniature):
    workdir, _, _ = miniature
    claims = pd.read_csv(workdir / "results" / "tables" / "claims.csv").set_index("id")
    c04 = claims.loc["c04"]
    assert c04["verdict"] in ("inconclusive", "contradicted")  # only the early lead is measured: it cannot be supported
    assert "end before the claimed crossover" in c04["evidence"]
    assert "points past 36% of the budget" in c04["needed"]


def killed_when(workdir: Path, configs: tuple[Path, ...], cache: Path, target: str, ready) -> None:
    """Run the job making ``target`` again (-f) and kill Snakemake's process group, the job's
    process among them, once ``ready()``."""
    environment = {**os.environ, "PIPELINE_DOWNLOAD_CACHE": str(cache)}
    command = snakemake_command(workdir, configs, "--cores", "1", "-f", target)
    running = subprocess.Popen(
        command, cwd=workdir, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while not ready() and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(running.pid, signal.SIGKILL)
    running.wait()
    unlock = subprocess.run(snakemake_command(workdir, configs, "--unlock"), cwd=workdir, env=environment, capture_output=True)
    assert unlock.returncode == 0


def test_a_killed_pretraining_run_and_grid_resume_where_they_stopped(miniature, tmp_path):
    """Killed between two of its steps, the MLM run resumes at the step it saved and ends with the
    uninterrupted run's weights, bit for bit; a fine-tuning grid killed after its first point
    finishes the others only, with the uninterrupted grid's scores."""
    workdir, _, cache = miniature
    copy = tmp_path / "copy"
    shutil.copytree(workdir, copy, ignore=shutil.ignore_patterns(".snakemake", "hub"))
    # Each job in a process of its own, as on a GPU: a fine-tuning job forked from the CPU's warm
    # worker would outlive the kill of Snakemake's process group (a hardware key: nothing reruns).
    cold = tmp_path / "cold.yaml"
    cold.write_text("hardware: {warm_worker_idle_seconds: 0}\n")
    configs = (*CONFIGS, cold)
    assert run_snakemake(copy, configs, "--touch", cache=cache).returncode == 0

    run = "results/pretrain/mlm-610m"
    saved = copy / "results" / "resume" / "pretrain" / "mlm-610m" / "progress.json"
    killed_when(copy, configs, cache, f"{run}/summary.json", lambda: saved.is_file() and json.loads(saved.read_text())["step"] >= 1)
    step = json.loads(saved.read_text())["step"]
    assert 1 <= step < 4
    done = run_snakemake(copy, configs, f"{run}/summary.json", cache=cache)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"at step {step}" in (copy / "logs" / "pretrain" / "mlm-610m.log").read_text()  # resumed, not restarted
    for name in ("model.safetensors", "config.json"):
        assert (copy / run / "model" / name).read_bytes() == (workdir / run / "model" / name).read_bytes()

    scores = "results/finetune/sst2/clm-610m/scores.json"
    points = copy / "results" / "resume" / "finetune" / "sst2" / "clm-610m" / "points"
    killed_when(copy, configs, cache, scores, lambda: points.is_dir() and any(points.glob("*.json")))
    finished = len(list(points.glob("*.json")))
    assert 1 <= finished < 4  # of the full grid's 4 points: 2 rates x 2 seeds
    done = run_snakemake(copy, configs, scores, cache=cache)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"resuming: {finished} grid point(s) finished by an earlier attempt"
        in (copy / "logs" / "finetune" / "sst2" / "clm-610m.log").read_text()
    )
    assert grid_scores(copy / scores) == grid_scores(workdir / scores)


def grid_scores(path: Path) -> list[dict]:
    """Every grid point's learning rate, seed and scores (not its wall-clock timings)."""
    return without_timings(json.loads(path.read_text()))


def test_the_progress_line_says_where_the_tier_stands(miniature, tmp_path, capsys):
    """Nothing run: every job left. All run: nothing left. Fine-tuning costed from the prepared rows."""
    workdir, _, _ = miniature
    configs = [str(path) for path in CONFIGS]
    assert main(["progress", "--configfile", *configs, "--directory", str(workdir)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("2 of 2 pretraining runs done; 8 of 8 fine-tuning jobs done; 0.0 of ")
    assert "fine-tuning from 4 task(s) measured lengths" in line
    tier = [str(path) for path in TIER]  # the tier itself, in a directory where nothing ran
    assert main(["progress", "--configfile", *tier, "--directory", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("0 of 2 pretraining runs done; 0 of 20 fine-tuning jobs done;") and "10 task(s) published lengths" in line


def test_the_estimate_costs_fine_tuning_from_the_prepared_rows(miniature, capsys, monkeypatch):
    """Each trained task's grid point measured on its rows (with nq's scoring under MS MARCO's),
    far below the cap of max_steps batches of 2,028 tokens."""
    workdir, _, _ = miniature
    configs = [str(path) for path in CONFIGS]
    assert main(["cost", "--configfile", *configs, "--directory", str(workdir)]) == 0
    measured = capsys.readouterr().out
    assert "fine-tuning measured on the prepared rows" in measured and "at the cap" not in measured
    for task in ("sst2", "conll2003", "squad", "msmarco"):
        assert f" {task} " in measured.split("fine-tuning measured on the prepared rows")[1].splitlines()[0]
    monkeypatch.chdir(workdir)  # its hub_mirror is the working directory's, as the workflow reads it
    assert main(["cost", "--configfile", *configs]) == 0
    published = capsys.readouterr().out  # not prepared there: the datasets' published rows and lengths
    assert "fine-tuning from the datasets' records" in published and "at the cap" not in published

    def finetune_flops(text: str) -> float:  # the stage line: stage, jobs, runs, tokens, EFLOP, GPU-hours
        return float(next(line for line in text.splitlines() if line.strip().startswith("finetune ")).split()[4])

    assert finetune_flops(measured) < finetune_flops(published) / 5  # a few made-up rows against the real datasets
