"""bench/gpu_acceptance.py and bench/gpu_speed.sh stop at once, in one line, without cuda or without their inputs;
gpu_speed.sh starts no attempt past its budget.

Its sections are dry-run on a CPU by hand (``--device cpu --size tiny --sequence-length 32``, 85 s:
too slow for the suite, and what they run, the stages, is tested in test_pretrain/test_finetune)."""

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import torch

from pipeline.workflow.configure import REPOSITORY

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
    # the least known first: the jobs' path (on a CPU: SDPA, the chunked head, 4 micro-batches), each lever on top (on a
    # GPU the 610M and 1B next), then the Trainer from its largest micro-batch down, the other micro-batches, a paper
    # step's 144 rows and packed blocks (each skipped here)
    assert attempts == [
        "jobs",
        "varlen",
        "liger-layers",
        "model",
        "graphs",
        "trainer-mb32",
        "trainer-mb16",
        "trainer-mb8",
        "mb32",
        "mb16",
        "step",
        "packed",
    ]
    assert [line.split() for line in summary if line.startswith("kept:")] == [["kept:", "--micro-batch-size", "8"]]  # nothing ran
    assert summary.count("skipped: the call's 0-second budget is spent") == len(attempts)
    assert not list((tmp_path / "out").glob("*.json")) and not list((tmp_path / "out").glob("*.log"))
    env["ARCHIVE"] = str(tmp_path / "speed.tar.gz")  # what a device call brings back: the measurements, not the caches
    (tmp_path / "out" / "inductor-cache").mkdir(exist_ok=True)
    (tmp_path / "out" / "inductor-cache" / "kernel.so").write_bytes(b"\0")
    done = subprocess.run(["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "out")], env=env, timeout=120)
    with tarfile.open(tmp_path / "speed.tar.gz") as archive:
        assert done.returncode == 0 and sorted(archive.getnames()) == [".", "./summary.md"]
    del env["ARCHIVE"]
    env["PART"] = "presets"  # the 610M and 1B alone: a GPU's, so on a CPU nothing at all
    done = subprocess.run(["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "presets")], env=env, timeout=120)
    assert done.returncode == 0 and (tmp_path / "presets" / "summary.md").read_text() == ""
    env["PART"] = "finetune"  # the fine-tuning MFU: on a CPU at SIZE, eager and compiled (a GPU's: 210M both ways, 610M, 1B)
    done = subprocess.run(["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "finetune")], env=env, timeout=120)
    summary = (tmp_path / "finetune" / "summary.md").read_text().splitlines()
    skipped = "skipped: the call's 0-second budget is spent"
    assert done.returncode == 0 and summary == ["== finetune-210m", skipped, "== finetune-210m-compiled", skipped]


def test_every_speed_attempt_gets_at_least_the_time_it_needs(tmp_path):
    """A cap below what an attempt needs stops it in its last run and leaves no verdict (the 2026-11-28b lease's 210M
    attempts took 73-75 s each): however many attempts remain, the first gets 120 s (cold caches, profiled), each
    other one at SIZE 90 s and each fine-tuning size 120 s (a fake ``timeout`` records the caps and runs nothing)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "timeout").write_text('#!/bin/sh\necho "$*" >> "$CAPS"\n')  # CAP COMMAND...: the cap, and the attempt by its --json
    (fake / "timeout").chmod(0o755)
    caps = tmp_path / "caps"
    env = {"PATH": f"{fake}:/usr/bin:/bin", "PYTHON": sys.executable, "DEVICE": "cpu", "BUDGET_SECONDS": "450", "CAPS": str(caps)}
    for part in ("attempts", "finetune"):
        command = ["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / part)]
        done = subprocess.run(command, env=env | {"PART": part}, timeout=120)
        assert done.returncode == 0
    given = {}
    for line in caps.read_text().splitlines():
        words = line.split()
        given[Path(words[words.index("--json") + 1]).stem] = int(words[0])
    assert min(given.pop("finetune-210m"), given.pop("finetune-210m-compiled")) >= 120  # (a fair share of 450 s over 4: 112)
    assert given.pop("jobs") == 120  # the fair share at SIZE: 450 s over 12 attempts, 37 s
    assert [given.pop(lever) for lever in ("varlen", "liger-layers", "model", "graphs")] == [90] * 4  # over 11 to 8: 40-56 s
    assert given and min(given.values()) >= 90  # the comparisons, the last ones' fair share above 90


def test_the_throughput_section_measures_one_micro_batch_of_the_size_s(tmp_path, monkeypatch, paper):
    """What the cost estimate takes from a record must be what a pipeline job runs: at 1B, forward
    passes of config/paper.yaml's 8 sequences with SDPA and the chunked head (its by_size), not the 32 of 210M
    with FlexAttention and Liger's head."""
    import importlib.util
    import json
    from argparse import Namespace

    loaded = importlib.util.spec_from_file_location("gpu_acceptance", SCRIPT)
    acceptance = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(acceptance)
    asked = []

    def measured(command, **_):  # bench/pretrain_throughput.py's JSON, as it writes it
        asked.append(command[command.index("--batch-size") + 1])
        row = {"tokens_per_second": 1000.0, "model_flops_per_token": 6e9, "mfu_datasheet": 6e12 / 989e12}
        summary = {"clm": {"ours": dict(row), "trainer": dict(row, tokens_per_second=500.0)}}
        measured = {"peak_flops": 1e15, "datasheet_peak_flops": 989e12, "summary": summary}
        Path(command[command.index("--json") + 1]).write_text(json.dumps(measured))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(acceptance.subprocess, "run", measured)
    for size, micro, kernels in (("210m", 32, "flex, liger head"), ("1b", 8, "sdpa, chunked head")):
        record = {}
        args = Namespace(work=tmp_path, inputs=tmp_path, size=size, device="cpu", sequence_length=2048, threads=1, paper=paper)
        acceptance.section_throughput(args, record)
        assert asked[-1] == str(micro) and record["batch"] == f"{micro} x 2048 tokens, bf16, {size}, vocabulary 128,256, {kernels}"
        assert record["samples"] == "split"
        assert record["clm"]["ours_over_trainer"] == 2.0


def test_the_speed_attempts_refuse_an_unknown_part_in_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "DEVICE": "cpu", "PART": "everything"}
    done = subprocess.run(
        ["bash", str(REPOSITORY / "bench" / "gpu_speed.sh"), str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: bench/gpu_speed.sh: PART=everything: give all, attempts, presets or finetune"


@pytest.mark.parametrize("size", ["210m", "610m", "1b"])
def test_the_shrunk_paper_config_resolves_at_every_paper_size(size):
    """The acceptance run's config: paper.yaml's single CLM and MLM runs at one size and nothing else
    (paper.yaml's named two-stage splits, whose budgets exceed the 30 steps, among what it drops)."""
    import importlib.util

    loaded = importlib.util.spec_from_file_location("gpu_acceptance", SCRIPT)
    acceptance = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(acceptance)
    overlay, resolved = acceptance.paper_shrunk(size, 2048)
    assert sorted((plan.objective, plan.size, plan.study) for plan in resolved.plans.values()) == [
        ("clm", size, "objectives"),
        ("mlm", size, "objectives"),
    ]
    assert overlay["pretraining"]["sizes"] == [size] and resolved.config.pretraining.budget_steps == 30
