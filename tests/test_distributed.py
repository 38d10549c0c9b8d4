"""How a step is computed changes rounding, not results: processes, micro-batches, precision, kernels.

Several processes run under torchrun with gloo on CPU: the same loss curve as one process,
resume after a kill, FSDP. Each torchrun launch costs a few seconds of interpreter start-up,
so the module launches three: a DDP run killed mid-way, its resumed rerun, and a short FSDP
run. The single-process switches (micro-batches, fused AdamW, dense LM head, bf16) run in-process.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from safetensors.torch import load_file

from pipeline.batch import make_batch
from pipeline.files import read_json
from pipeline.model.backbone import language_model_loss, load_language_model
from pipeline.objectives import example_rng, parse_objective
from pipeline.pretrain.token_blocks import TokenBlocks
from tests.conftest import REPO, pretrain_argv, pretrain_spec_json
from tests.test_pretrain import PINNED_LOSSES, pretrain

MLM = {"kind": "mlm", "mask_ratio": 0.4}  # loss positions differ between rows: the weighting must be exact


def torchrun(spec: str, tokens_dir: Path, init_dir: Path, root: Path, wait: bool = True) -> subprocess.Popen:
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "pipeline",
        *pretrain_argv(spec, tokens_dir, init_dir, root),
        "--threads",
        "2",
    ]
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "torchrun.log", "a") as log:
        process = subprocess.Popen(
            argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
        )
    if wait:
        assert process.wait(timeout=180) == 0, (root / "torchrun.log").read_text()[-3000:]
    return process


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL torchrun and its workers (each worker runs in a session of its own)."""
    tree = [process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))]
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def losses(run_dir: Path) -> dict[int, tuple[float, float | None]]:
    """step -> (train loss, held-out loss or None) from log.csv."""
    with open(run_dir / "log.csv") as handle:
        return {int(r["step"]): (float(r["loss"]), float(r["heldout_loss"]) if r["heldout_loss"] else None) for r in csv.DictReader(handle)}


def assert_close_weights(a: Path, b: Path, atol: float) -> None:
    first, second = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert first.keys() == second.keys()
    for name in first:
        np.testing.assert_allclose(first[name].numpy(), second[name].numpy(), atol=atol, rtol=0, err_msg=name)


def test_two_processes_follow_one_and_resume_after_a_kill(tokens_dir, init_dir, tmp_path):
    """DDP over 2 gloo processes, each in micro-batches of 1 sequence, killed and resumed, against 1 process
    taking the whole batch at once: the same loss at every logged step and the same weights, within float noise."""
    num_steps = 60
    single = pretrain_spec_json(MLM, budget_steps=num_steps, checkpoint_steps=[3, 7, 30], resume_every_steps=2)
    spec = json.loads(single)
    spec["pretraining"]["compute"] = {"micro_batch_size": 1}
    spec = json.dumps(spec)
    reference = pretrain(single, tokens_dir, init_dir, tmp_path / "one")

    root = tmp_path / "two"
    process = torchrun(spec, tokens_dir, init_dir, root, wait=False)
    state, deadline = root / "work" / "state.pt", time.time() + 120
    while time.time() < deadline and process.poll() is None and not state.exists():
        time.sleep(0.01)
    assert process.poll() is None, (
        "the run finished (or failed) before it could be interrupted:\n" + (root / "torchrun.log").read_text()[-3000:]
    )
    kill_tree(process)
    assert state.exists() and not (root / "run" / "summary.json").exists()

    torchrun(spec, tokens_dir, init_dir, root)
    assert "resumed from" in (root / "torchrun.log").read_text()
    resumed = root / "run"
    expected, measured = losses(reference), losses(resumed)
    assert sorted(measured) == sorted(expected) == [3, 7, 10, 20, 30, 40, 50, 60]
    for step, (loss, heldout) in expected.items():
        assert measured[step][0] == pytest.approx(loss, rel=1e-5), step
        assert measured[step][1] == (None if heldout is None else pytest.approx(heldout, rel=1e-5)), step
    assert_close_weights(reference / "model", resumed / "model", atol=1e-5)
    for name in ("step-000003", "step-000007", "step-000030"):
        assert_close_weights(reference / "checkpoints" / name, resumed / "checkpoints" / name, atol=1e-5)
    summary, expected_summary = read_json(resumed / "summary.json"), read_json(reference / "summary.json")
    assert summary["num_tokens"] == expected_summary["num_tokens"] and summary["loss_fraction"] == expected_summary["loss_fraction"]


def test_fsdp_matches_pretrain(tokens_dir, init_dir, tmp_path):
    """FSDP (sharded weights and AdamW state, gathered for checkpoints and the exported model)."""
    single = pretrain_spec_json({"kind": "clm"}, budget_steps=6, checkpoint_steps=[3])
    spec = json.loads(single)
    spec["pretraining"]["compute"] = {"sharding": "fsdp"}
    reference = pretrain(single, tokens_dir, init_dir, tmp_path / "one")
    sharded = tmp_path / "fsdp"
    torchrun(json.dumps(spec), tokens_dir, init_dir, sharded)
    expected, measured = losses(reference), losses(sharded / "run")
    assert sorted(measured) == [3, 6]
    for step, (loss, heldout) in expected.items():
        assert measured[step] == pytest.approx((loss, heldout), rel=1e-5), step
    assert_close_weights(reference / "model", sharded / "run" / "model", atol=1e-5)
    assert_close_weights(reference / "checkpoints" / "step-000003", sharded / "run" / "checkpoints" / "step-000003", atol=1e-5)


@pytest.mark.parametrize("kind", ["clm", "mlm"])
def test_sparse_prediction_equals_the_dense_lm_head(kind, tokens_dir, init_dir, special):
    """The LM head on loss positions only gives the dense head's loss and gradients, up to rounding."""
    objective = parse_objective({"kind": kind})
    blocks = TokenBlocks(tokens_dir, "train", 32, seed=0).blocks_for_step(0, 4)
    batch = make_batch(objective, blocks, [example_rng(0, 0, i) for i in range(4)], special)
    results = []
    for head in ("chunked", "dense"):
        model = load_language_model(init_dir, objective.attention)
        loss = language_model_loss(model, batch, head)
        loss.backward()
        results.append((loss.item(), {name: p.grad.clone() for name, p in model.named_parameters()}))
    (sparse_loss, sparse_grads), (dense_loss, dense_grads) = results
    assert sparse_loss == pytest.approx(dense_loss, rel=1e-6)
    for name, grad in sparse_grads.items():
        np.testing.assert_allclose(grad.numpy(), dense_grads[name].numpy(), atol=1e-7, rtol=1e-5, err_msg=name)


@pytest.mark.parametrize(
    ("compute", "tolerance"),
    [
        ({"micro_batch_size": 1}, 1e-5),
        ({"fused_optimizer": True}, 1e-5),
        ({"sparse_prediction": False}, 1e-5),
        ({"precision": "bf16"}, 3e-2),
    ],
)
def test_compute_settings_keep_the_pinned_losses(compute, tolerance, tokens_dir, init_dir, tmp_path):
    """Each single-process switch reproduces the pinned 6-step MLM run (bf16: to bf16 precision)."""
    spec = json.loads(pretrain_spec_json({"kind": "mlm"}, budget_steps=6))
    spec["pretraining"]["compute"] = compute
    summary = read_json(pretrain(json.dumps(spec), tokens_dir, init_dir, tmp_path) / "summary.json")
    assert (summary["final_train_loss"], summary["heldout_loss"]) == pytest.approx(PINNED_LOSSES["mlm"], rel=tolerance)
