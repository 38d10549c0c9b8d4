"""bench/pretrain_throughput.py --compare-losses: an attempt's last-step training losses against a
baseline run's, so a faster path that trains something else is seen (issue 44's "same losses").

Micro-batches of 2 against one of 4 train the same gradient (each micro-batch's loss weighted by its
share of the batch's loss positions), so in float32 on a CPU the losses agree to rounding."""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys

import pytest

from pipeline.model.backbone import WEIGHTS_FILE, read_backbone_spec
from pipeline.workflow.configure import REPOSITORY

BENCH = REPOSITORY / "bench" / "pretrain_throughput.py"


def throughput(tokens_dir, init_dir, json_path, *options) -> subprocess.CompletedProcess:
    command = [sys.executable, str(BENCH), "--tokens", str(tokens_dir), "--init", str(init_dir), "--sequence-length", "32"]
    command += ["--batch-size", "4", "--steps", "2", "--warmup", "1", "--repeats", "1", "--threads", "1", "--no-trainer"]
    return subprocess.run([*command, "--json", str(json_path), *options], capture_output=True, text=True, timeout=300, cwd=REPOSITORY)


@pytest.fixture(scope="module")
def baseline(tokens_dir, init_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("baseline") / "mb4.json"
    done = throughput(tokens_dir, init_dir, path, "--profile", "2")
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


def test_a_profiled_run_says_where_its_steps_time_goes(baseline):
    """--profile (bench/step_profile.py) on a CPU: one more run an objective under torch.profiler, its
    operators' time sorted into kinds of work, the regions of the chunked head and the optimizer included."""
    record = json.loads(baseline.read_text())
    assert set(record["profile"]) == {"clm", "mlm"}
    for profile in record["profile"].values():
        assert profile["device"] == "cpu" and profile["steps"] == 2 and profile["device_busy_share"] is None
        seconds = profile["seconds_per_step_by_kind"]
        assert all(seconds[kind] > 0 for kind in ("attention", "LM head + loss", "matmul", "optimizer"))
        # the operators' own times partition the host's time inside the window (one thread)
        assert sum(seconds.values()) <= 1.01 * profile["wall_seconds_per_step"]
        assert profile["longest"][0]["seconds_per_step"] == max(row["seconds_per_step"] for row in profile["longest"])


def test_an_attempt_says_where_its_wall_time_went(baseline):
    """What a time cap counts, from the process's start: before the first run (imports, weights, blocks), each
    run whole and each profiled run, the rest; printed and recorded, so a cap can be set from it."""
    record = json.loads(baseline.read_text())
    wall = record["wall_seconds"]
    runs = [row["run_seconds"] for by_who in record["results"].values() for rows in by_who.values() for row in rows]
    profiled = [profile["run_seconds"] for profile in record["profile"].values()]
    assert len(runs) == 2 and len(profiled) == 2 and min(runs + profiled) > 0
    assert 0 < wall["ready"] < wall["ready"] + sum(runs) + sum(profiled) <= wall["total"]
    assert wall["ready"] > 1  # the interpreter's start and torch's import count: measured from the process's start


def test_fresh_weights_are_built_once_for_the_attempts_that_share_an_init_cache(tmp_path, tokenizer, special, monkeypatch):
    """--init-cache: the first run of a size builds its fresh weights (one seed), the next reads them; an
    entry of other special tokens is built again, and a half-written one never passes for whole."""
    monkeypatch.syspath_prepend(str(REPOSITORY / "bench"))
    import pretrain_throughput

    args, cache = argparse.Namespace(init=None, size="mini", vocab_size=len(tokenizer), sequence_length=32), str(tmp_path / "cache")
    first = pretrain_throughput.prepare_init(args, tokenizer, special, tmp_path / "scratch", cache)
    assert first.parent == tmp_path / "cache" and not (tmp_path / "scratch").exists()
    with monkeypatch.context() as patched:
        patched.setattr(pretrain_throughput, "build_language_model", lambda *_args, **_kw: pytest.fail("built again"))
        assert pretrain_throughput.prepare_init(args, tokenizer, special, tmp_path / "scratch", cache) == first
    (first.parent / (first.name + ".partial")).mkdir()  # what a run stopped while writing leaves
    other = dataclasses.replace(special, mask=special.pad)
    assert pretrain_throughput.prepare_init(args, tokenizer, other, tmp_path / "scratch", cache) == first
    assert read_backbone_spec(first).mask_id == special.pad and (first / WEIGHTS_FILE).is_file()  # built again, for these tokens
    assert sorted(p.name for p in first.parent.iterdir()) == [first.name]


@pytest.mark.parametrize(
    "options, kernels",
    [
        (("--attention", "flex"), {"attention": "flex"}),
        (("--lm-head", "liger", "--device", "cuda", "--dense-lm-head"), {"lm_head": "liger", "sparse_prediction": False}),
        (("--attention", "varlen", "--device", "cuda"), {"attention": "varlen", "precision": "fp32"}),
    ],
)
def test_the_benchmark_refuses_a_kernel_setting_by_the_configs_own_rule(tokens_dir, init_dir, tmp_path, options, kernels):
    """One rule (ComputeSpec.kernel_refusal) for both: a setting a benchmark could time but no job could run is refused."""
    from pipeline.config import ComputeSpec

    field_name, why = ComputeSpec(**kernels).kernel_refusal(on_gpu="--device" in options, gpu_is="--device cuda")
    done = throughput(tokens_dir, init_dir, tmp_path / "refused.json", *options)
    assert done.returncode == 2 and not (tmp_path / "refused.json").exists()
    assert done.stderr.splitlines()[-1] == f"pretrain_throughput.py: error: --{field_name.replace('_', '-')}: {why}"
