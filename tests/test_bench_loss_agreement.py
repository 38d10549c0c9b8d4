"""bench/pretrain_throughput.py --compare-losses: an attempt's last-step training losses against a
baseline run's, so a faster path that trains something else is seen (issue 44's "same losses").

Micro-batches of 2 against one of 4 train the same gradient (each micro-batch's loss weighted by its
share of the batch's loss positions), so in float32 on a CPU the losses agree to rounding."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.workflow.configure import REPOSITORY

BENCH = REPOSITORY / "bench" / "pretrain_throughput.py"


def throughput(tokens_dir, init_dir, json_path, *options) -> subprocess.CompletedProcess:
    command = [sys.executable, str(BENCH), "--tokens", str(tokens_dir), "--init", str(init_dir), "--sequence-length", "32"]
    command += ["--batch-size", "4", "--steps", "2", "--warmup", "1", "--repeats", "1", "--threads", "1", "--no-trainer"]
    return subprocess.run([*command, "--json", str(json_path), *options], capture_output=True, text=True, timeout=300, cwd=REPOSITORY)


@pytest.fixture(scope="module")
def baseline(tokens_dir, init_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("baseline") / "mb4.json"
    done = throughput(tokens_dir, init_dir, path)
    assert done.returncode == 0, done.stderr
    return path


def test_micro_batches_agree_with_the_whole_batch_and_a_moved_baseline_does_not(baseline, tokens_dir, init_dir, tmp_path):
    moved = json.loads(baseline.read_text())
    moved["summary"]["mlm"]["ours"]["final_loss"] += 0.5  # a baseline that trained something else
    moved_path = tmp_path / "moved.json"
    moved_path.write_text(json.dumps(moved))
    done = throughput(tokens_dir, init_dir, tmp_path / "mb2.json", "--micro-batch-size", "2", "--compare-losses", str(moved_path))
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "mb2.json").read_text())
    assert record["complete"]  # written after each measurement along the way (complete false), then whole
    summary, base = record["summary"], json.loads(baseline.read_text())["summary"]
    assert summary["clm"]["ours"]["final_loss"] == pytest.approx(base["clm"]["ours"]["final_loss"], abs=1e-4)
    assert summary["mlm"]["ours"]["final_loss"] == pytest.approx(base["mlm"]["ours"]["final_loss"], abs=1e-4)
    clm, mlm = (summary[kind]["ours"]["loss_versus_baseline"] for kind in ("clm", "mlm"))
    assert clm["agrees"] and abs(clm["difference"]) < 1e-4 and clm["tolerance"] == 0.02
    assert not mlm["agrees"] and mlm["difference"] == pytest.approx(-0.5, abs=1e-4)
    rows = {line.split(" | ")[0]: line for line in done.stdout.splitlines() if line.startswith("| clm") or line.startswith("| mlm")}
    assert ": within 0.02) |" in rows["| clm"] and ": BEYOND 0.02) |" in rows["| mlm"]


def test_a_baseline_of_another_run_is_refused_in_one_line(baseline, tokens_dir, init_dir, tmp_path):
    done = throughput(tokens_dir, init_dir, tmp_path / "other.json", "--sequence-length", "16", "--compare-losses", str(baseline))
    assert done.returncode == 1
    said = f"error: {baseline}: trained with sequence_length 32, this run with 16: its losses compare to nothing here"
    assert done.stderr.strip() == said
    assert not (tmp_path / "other.json").exists()
