"""bench/gpu_acceptance.py and bench/gpu_speed.sh stop at once, in one line, without cuda or without their inputs;
gpu_speed.sh starts no attempt past its budget.

Its sections are dry-run on a CPU by hand (``--device cpu --size tiny --sequence-length 32``, 85 s:
too slow for the suite, and what they run, the stages, is tested in test_pretrain/test_finetune)."""

import subprocess
import sys

import pytest
import torch

from pipeline.configure import REPOSITORY

SCRIPT = REPOSITORY / "bench" / "gpu_acceptance.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without cuda")
def test_without_cuda_it_stops_at_once_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--json", str(tmp_path / "a.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: bench/gpu_acceptance.py needs a CUDA GPU, and torch {torch.__version__} sees none"
        " (torch.cuda.is_available() is False); run it on a GPU machine"
    ]
    assert not (tmp_path / "a.json").exists()


def test_missing_inputs_are_named(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", "--inputs", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip() == f"error: {tmp_path / 'tokenizer'} is missing; make the inputs first (see the top of bench/gpu_acceptance.py)"
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without cuda")
def test_the_speed_attempts_stop_at_once_without_cuda(tmp_path):
    """bench/gpu_speed.sh: no attempt starts (each would fail after minutes of set-up) and nothing is written."""
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "out")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: bench/gpu_speed.sh: no CUDA device visible (DEVICE=cpu SIZE=tiny ... dry-runs the plumbing)"
    assert list((tmp_path / "out").iterdir()) == []


def test_the_speed_attempts_start_none_past_the_call_s_budget(tmp_path):
    """bench/gpu_speed.sh with its budget spent: every attempt is written as skipped, none runs, and it exits 0
    (what ran before the budget ran out is what a device call brings back)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "DEVICE": "cpu", "BUDGET_SECONDS": "0"}
    done = subprocess.run(
        ["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "out" / "summary.md").read_text().splitlines()
    attempts = [line.split()[1] for line in summary if line.startswith("== ")]
    assert attempts == ["mb8", "mb16", "mb32", "kept", "liger", "model", "flash", "graphs"]
    assert summary.count("skipped: the call's 0-second budget is spent") == len(attempts)
    assert not list((tmp_path / "out").glob("*.json")) and not list((tmp_path / "out").glob("*.log"))
