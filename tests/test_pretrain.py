"""Pretraining: data order, determinism, exact resume after a real kill, pinned losses."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from pipeline import strict
from pipeline.__main__ import main
from pipeline.errors import PipelineError
from pipeline.files import read_json
from pipeline.objectives import registered_kinds
from pipeline.pretrain.model_card import CARD_FILE, SUMMARY_KEYS, read_card_header
from pipeline.pretrain.plan import Start
from pipeline.pretrain.token_blocks import TokenBlocks
from pipeline.pretrain.trainer import Progress
from tests.conftest import REPO, pretrain_argv, pretrain_spec_json, scratch_plan

OBJECTIVES = {"clm": {"kind": "clm"}, "mlm": {"kind": "mlm", "mask_ratio": 0.4}}
# The code's float32 path, and the default config's bf16 autocast with fused AdamW.
COMPUTE_SETTINGS = [pytest.param({}, id="fp32"), pytest.param({"precision": "bf16", "fused_optimizer": True}, id="bf16-fused")]


def pretrain(spec: str, tokens_dir: Path, init_dir: Path, root: Path) -> Path:
    """One run of the stage in this process; its output directory."""
    assert main(pretrain_argv(spec, tokens_dir, init_dir, root)) == 0
    return root / "run"


def weights(run_dir: Path) -> dict:
    return load_file(run_dir / "model" / "model.safetensors")


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name].numpy(), b[name].numpy()), name


def test_token_blocks_order_depends_only_on_seed_and_step(tokens_dir):
    blocks = TokenBlocks(tokens_dir, "train", 32, seed=0)
    per_step = [blocks.blocks_for_step(step, 4) for step in range(blocks.num_blocks // 4 + 3)]  # crosses an epoch
    again = TokenBlocks(tokens_dir, "train", 32, seed=0)
    assert all(np.array_equal(x, y) for s in (0, 5, len(per_step) - 1) for x, y in zip(per_step[s], again.blocks_for_step(s, 4)))
    first_epoch = np.concatenate([b for step in per_step for b in step][: blocks.num_blocks])
    assert sorted(first_epoch.tolist()) == sorted(blocks.tokens.slice(0, blocks.num_blocks * 32).tolist())
    other = TokenBlocks(tokens_dir, "train", 32, seed=1)
    assert not all(np.array_equal(x, y) for x, y in zip(per_step[0], other.blocks_for_step(0, 4)))


def test_a_block_may_span_two_shards_arrays_as_in_their_concatenation(tmp_path):
    """Shards' arrays read as one stream: every block equals that of the concatenated array."""
    from pipeline.files import sha256_file, write_json
    from pipeline.tokenization.token_index import fingerprint

    stream = np.arange(100, dtype=np.uint16)
    segments = []
    for number, (start, stop) in enumerate(((0, 37), (37, 38), (38, 100))):  # one array of a single token
        stream[start:stop].tofile(tmp_path / f"part-{number}.bin")
        segments.append({"file": f"part-{number}.bin", "num_tokens": stop - start, "sha256": sha256_file(tmp_path / f"part-{number}.bin")})
    write_json(
        tmp_path / "meta.json", {"dtype": "uint16", "splits": {"train": {"fingerprint": fingerprint(segments), "segments": segments}}}
    )
    blocks = TokenBlocks(tmp_path, "train", 16, seed=0)
    assert blocks.num_blocks == 6 and all(np.array_equal(blocks.block(i), stream[16 * i : 16 * i + 16]) for i in range(6))
    (tmp_path / "part-1.bin").write_bytes(b"")
    with pytest.raises(PipelineError, match=r"part-1.bin: 0 bytes, meta.json lists 2 bytes; rerun pack"):
        TokenBlocks(tmp_path, "train", 16, seed=0)


@pytest.mark.parametrize("kind", sorted(OBJECTIVES))
@pytest.mark.parametrize("compute", COMPUTE_SETTINGS)
def test_same_config_same_numbers(kind, compute, tokens_dir, init_dir, tmp_path):
    spec = pretrain_spec_json(OBJECTIVES[kind], budget_steps=6, checkpoint_steps=[3], compute=compute)
    a = pretrain(spec, tokens_dir, init_dir, tmp_path / "a")
    b = pretrain(spec, tokens_dir, init_dir, tmp_path / "b")
    assert_same_weights(weights(a), weights(b))
    summary_a, summary_b = read_json(a / "summary.json"), read_json(b / "summary.json")
    for key in ("final_train_loss", "heldout_loss", "heldout_metric", "loss_fraction", "num_tokens"):
        assert summary_a[key] == summary_b[key], key
    # Hugging Face format: the checkpoint loads with the Auto classes, tokenizer included.
    auto_model = AutoModelForCausalLM if kind == "clm" else AutoModelForMaskedLM
    assert auto_model.from_pretrained(a / "checkpoints" / "step-000003").num_parameters() > 0
    assert AutoTokenizer.from_pretrained(a / "model").mask_token == "<mask>"
    provenance = read_json(a / "provenance.json")
    assert provenance["spec"]["objective"] == OBJECTIVES[kind] and provenance["code"]["source_sha256"]
    assert set(provenance["inputs"]) == {"tokens", "init"}
    assert provenance["machine"]["processor"] and provenance["machine"]["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert not (tmp_path / "a" / "work").exists()  # resumable state is removed once the run is complete


def test_another_vector_instruction_set_agrees_to_rounding_and_says_so(tokens_dir, init_dir, tmp_path):
    """Same code, config and seed under torch's AVX2 kernels instead of the machine's own (as
    on another processor): the floats differ in their last digits only, and the provenance
    names the instruction set each run used. Over thousands of steps MLM amplifies such
    differences to ~3e-3 in held-out loss (BENCHMARKS.md, "Reproducibility across machines"):
    runs are bit-exact on one machine, comparable to rounding across machines."""
    spec = pretrain_spec_json(OBJECTIVES["mlm"], budget_steps=6)
    native = pretrain(spec, tokens_dir, init_dir, tmp_path / "native")
    argv = [sys.executable, "-m", "pipeline", *pretrain_argv(spec, tokens_dir, init_dir, tmp_path / "avx2")]
    done = subprocess.run(argv, env={**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    avx2 = tmp_path / "avx2" / "run"
    assert read_json(avx2 / "provenance.json")["machine"]["torch_cpu_capability"] == "AVX2"
    for key in ("final_train_loss", "heldout_loss"):
        assert read_json(avx2 / "summary.json")[key] == pytest.approx(read_json(native / "summary.json")[key], rel=1e-5), key


# (final train loss, held-out loss) of a 6-step micro run of every registered objective at
# its canonical parameters, recorded once with torch 2.13.0 on CPU. A refactor that should
# not change numbers must reproduce them; a new objective must record its own.
PINNED_LOSSES = {
    "clm": (5.766280174255371, 5.776211738586426),
    "electra": (30.37605094909668, 25.563595282064902),
    "meap": (5.770473480224609, 5.78177285194397),
    "mlm": (5.900006294250488, 5.970939765105376),
    "nsp": (7.2715067863464355, 6.835639420677634),
    "prefix_lm": (5.8458099365234375, 5.872486175374782),
    "span_corruption": (5.768615245819092, 5.739816427230835),
    "ul2": (5.750102519989014, 5.787361145019531),
}


def test_every_objective_has_pinned_losses():
    assert sorted(PINNED_LOSSES) == registered_kinds()


@pytest.mark.parametrize("kind", registered_kinds())
def test_pinned_short_run(kind, tokens_dir, init_dir, tmp_path):
    run = pretrain(pretrain_spec_json({"kind": kind}, budget_steps=6), tokens_dir, init_dir, tmp_path)
    summary = read_json(run / "summary.json")
    assert (summary["final_train_loss"], summary["heldout_loss"]) == pytest.approx(PINNED_LOSSES[kind], rel=1e-5)


def test_the_wall_time_counts_the_run_from_its_start(tokens_dir, init_dir, tmp_path, monkeypatch):
    """summary.json's wall_seconds (the report's "Wall time") is the job's, its set-up before the token arrays included."""
    from pipeline.pretrain import run as pretrain_run

    slow_setup = 3.0  # longer than the 2 training steps themselves take
    load_tokenizer = pretrain_run.load_saved_tokenizer

    def loaded_slowly(directory):
        time.sleep(slow_setup)
        return load_tokenizer(directory)

    monkeypatch.setattr(pretrain_run, "load_saved_tokenizer", loaded_slowly)
    began = time.perf_counter()
    run = pretrain(pretrain_spec_json(OBJECTIVES["clm"], budget_steps=2), tokens_dir, init_dir, tmp_path)
    assert slow_setup <= read_json(run / "summary.json")["wall_seconds"] <= time.perf_counter() - began


def test_a_resumed_run_s_wall_time_counts_its_earlier_attempts(tokens_dir, init_dir, tmp_path, monkeypatch):
    """A run killed after its first saved state, then resumed: its wall time holds the first attempt's up to that
    save (a 3 s set-up in it) beside the second's, not the last attempt's alone."""
    from pipeline.pretrain import run as pretrain_run
    from pipeline.pretrain.trainer import Trainer

    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4, resume_every_steps=2)
    slow_setup, load_tokenizer, save_state = 3.0, pretrain_run.load_saved_tokenizer, Trainer._save_state

    def loaded_slowly(directory):
        time.sleep(slow_setup)
        return load_tokenizer(directory)

    def saved_then_killed(self):
        save_state(self)
        raise Killed

    began = time.perf_counter()
    with monkeypatch.context() as patched, pytest.raises(Killed):
        patched.setattr(pretrain_run, "load_saved_tokenizer", loaded_slowly)
        patched.setattr(Trainer, "_save_state", saved_then_killed)
        pretrain(spec, tokens_dir, init_dir, tmp_path)
    first_attempt, began = time.perf_counter() - began, time.perf_counter()
    run = pretrain(spec, tokens_dir, init_dir, tmp_path)
    second_attempt = time.perf_counter() - began
    assert second_attempt < slow_setup  # the last attempt alone would not reach it
    assert slow_setup <= read_json(run / "summary.json")["wall_seconds"] <= first_attempt + second_attempt


def test_loss_fraction_matches_objective(tokens_dir, init_dir, tmp_path):
    run = pretrain(pretrain_spec_json(OBJECTIVES["mlm"], budget_steps=4), tokens_dir, init_dir, tmp_path / "mlm")
    assert read_json(run / "summary.json")["loss_fraction"] == pytest.approx(0.4, abs=0.05)
    run = pretrain(pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4), tokens_dir, init_dir, tmp_path / "clm")
    assert read_json(run / "summary.json")["loss_fraction"] == pytest.approx(31 / 32)


@pytest.mark.parametrize("compute", COMPUTE_SETTINGS)
def test_killed_run_resumes_to_identical_weights(compute, tokens_dir, init_dir, tmp_path):
    """SIGKILL a real pretraining process mid-run, rerun it, compare with an uninterrupted run."""
    num_steps = 40
    spec = pretrain_spec_json(OBJECTIVES["mlm"], budget_steps=num_steps, checkpoint_steps=[10, 30], resume_every_steps=2, compute=compute)
    reference = pretrain(spec, tokens_dir, init_dir, tmp_path / "reference")

    root = tmp_path / "interrupted"
    argv = [sys.executable, "-m", "pipeline", *pretrain_argv(spec, tokens_dir, init_dir, root)]
    process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state, deadline = root / "work" / "state.pt", time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if state.exists() and (root / "work" / "checkpoints" / "step-000010").exists():
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be interrupted"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (root / "run" / "summary.json").exists()

    resumed = pretrain(spec, tokens_dir, init_dir, root)
    assert_same_weights(weights(reference), weights(resumed))
    assert read_json(resumed / "summary.json")["trained_steps"] == num_steps
    assert (resumed / "log.csv").read_text().splitlines()[-1].split(",")[:5] == (reference / "log.csv").read_text().splitlines()[-1].split(
        ","
    )[:5]
    assert sorted(p.name for p in (resumed / "checkpoints").iterdir()) == ["step-000010", "step-000030"]
    for name in ("step-000010", "step-000030"):
        assert_same_weights(
            load_file(reference / "checkpoints" / name / "model.safetensors"),
            load_file(resumed / "checkpoints" / name / "model.safetensors"),
        )


def test_state_from_another_config_is_not_resumed(tokens_dir, init_dir, tmp_path):
    """Resumable state tagged with another fingerprint is discarded whole, its checkpoints
    with it: none ships as this run's."""
    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=6, checkpoint_steps=[2])
    fresh = pretrain(spec, tokens_dir, init_dir, tmp_path / "fresh")
    root = tmp_path / "stale"
    (root / "work" / "checkpoints" / "step-000004").mkdir(parents=True)  # the old config's [4]
    stale = {"fingerprint": "another-run", "trained": {}, "optimizer": {}, "progress": dataclasses.asdict(Progress(step=5))}
    torch.save(stale, root / "work" / "state.pt")
    run = pretrain(spec, tokens_dir, init_dir, root)
    assert_same_weights(weights(fresh), weights(run))
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["step-000002"]


class Killed(BaseException):
    """A kill at a chosen point: nothing after it runs, no handler catches it."""


@pytest.mark.parametrize("after", ["copytree", "write_log", "write_provenance", "write_json"])
def test_a_kill_anywhere_in_finalize_reruns_to_the_same_outputs(after, tokens_dir, init_dir, tmp_path, monkeypatch):
    """Killed after each finalize step (the first checkpoint copied, the log, the provenance,
    the summary), its outputs deleted as Snakemake deletes a failed job's: the rerun finalizes
    again from the resume state, every configured checkpoint present and the weights the same."""
    import shutil

    from pipeline.pretrain import run as pretrain_run

    spec = pretrain_spec_json(OBJECTIVES["mlm"], budget_steps=12, checkpoint_steps=[4, 8], resume_every_steps=2)
    reference = pretrain(spec, tokens_dir, init_dir, tmp_path / "reference")
    root = tmp_path / "killed"
    target = shutil if after == "copytree" else pretrain_run
    step = getattr(target, after)

    def then_killed(*args, **kwargs):
        step(*args, **kwargs)
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(target, after, then_killed)
        with pytest.raises(Killed):
            pretrain(spec, tokens_dir, init_dir, root)
    shutil.rmtree(root / "run")
    resumed = pretrain(spec, tokens_dir, init_dir, root)
    assert sorted(path.name for path in (resumed / "checkpoints").iterdir()) == ["step-000004", "step-000008"]
    for directory in ("model", "checkpoints/step-000004", "checkpoints/step-000008"):
        assert_same_weights(load_file(reference / directory / "model.safetensors"), load_file(resumed / directory / "model.safetensors"))
    assert read_json(resumed / "summary.json")["trained_steps"] == 12 and not (root / "work").exists()


def test_a_kill_while_the_finished_state_is_deleted_needs_no_hand_to_rerun(tokens_dir, init_dir, tmp_path, monkeypatch):
    """Killed halfway through deleting the resume state (a file of it gone, the others not),
    outputs deleted as Snakemake deletes a failed job's: the rerun needs no manual delete, it
    trains again from the start to the same weights and leaves no state behind."""
    import shutil

    from pipeline.pretrain import run as pretrain_run

    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=8, checkpoint_steps=[4], resume_every_steps=2)
    reference = pretrain(spec, tokens_dir, init_dir, tmp_path / "reference")
    root = tmp_path / "killed"
    delete = shutil.rmtree

    def half_deleted(path, *args, **kwargs):
        if Path(path).name == ".work.finished" and Path(path).exists():  # (the start removes a leftover one too)
            next(file for file in sorted(Path(path).rglob("*")) if file.is_file()).unlink()
            raise Killed
        delete(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(pretrain_run.shutil, "rmtree", half_deleted)
        with pytest.raises(Killed):
            pretrain(spec, tokens_dir, init_dir, root)
    assert (root / ".work.finished" / "checkpoints").is_dir() and not (root / "work").exists()
    shutil.rmtree(root / "run")
    resumed = pretrain(spec, tokens_dir, init_dir, root)
    assert_same_weights(load_file(reference / "model" / "model.safetensors"), load_file(resumed / "model" / "model.safetensors"))
    assert sorted(path.name for path in root.iterdir()) == ["run"]


def test_a_checkpoint_lost_from_the_resume_state_is_refused_in_one_line(tokens_dir, init_dir, tmp_path, monkeypatch, capsys):
    import shutil

    from pipeline.pretrain import run as pretrain_run

    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=8, checkpoint_steps=[4], resume_every_steps=2)
    with monkeypatch.context() as patch:
        patch.setattr(pretrain_run, "write_log", mock.Mock(side_effect=Killed))
        with pytest.raises(Killed):
            pretrain(spec, tokens_dir, init_dir, tmp_path)
    shutil.rmtree(tmp_path / "work" / "checkpoints" / "step-000004")
    argv = pretrain_argv(spec, tokens_dir, init_dir, tmp_path)
    capsys.readouterr()
    assert main(argv) == 2
    missing = tmp_path / "work" / "checkpoints" / "step-000004"
    last_line = capsys.readouterr().err.splitlines()[-1]  # after the progress bar
    assert last_line == f"error: {missing}: checkpoint missing from the resume state; delete {tmp_path / 'work'} and rerun the job"


def test_second_stage_continues_the_first_exactly(tokens_dir, init_dir, tmp_path):
    """A 'two-stage' CLM -> CLM run split at step 4, carrying the optimizer state, ends with
    the same weights as one uninterrupted CLM run: the second stage really resumes the first
    stage's blocks, LR schedule and AdamW moments from the undecayed checkpoint."""
    clm = OBJECTIVES["clm"]
    whole = pretrain(
        pretrain_spec_json(clm, budget_steps=8, plan=scratch_plan("clm", 8, stage_checkpoint_steps=(4,))),
        tokens_dir,
        init_dir,
        tmp_path / "a",
    )
    checkpoint = whole / "checkpoints" / "step-000004"
    assert (checkpoint / "optimizer.pt").is_file()
    second = scratch_plan("clm", 8, run="clm50_clm-micro", study="two_stage", first_step=4, start=Start("checkpoint", "clm-micro", 4, True))
    stage = pretrain(pretrain_spec_json(clm, budget_steps=8, plan=second), tokens_dir, checkpoint, tmp_path / "b")
    assert_same_weights(weights(whole), weights(stage))
    summary = read_json(stage / "summary.json")
    assert summary["first_step"] == 4 and summary["study"] == "two_stage" and summary["num_tokens"] == 4 * 4 * 32

    reset = strict.to_plain(Start("checkpoint", "clm-micro", 4, carry_optimizer=False))
    fresh = pretrain(pretrain_spec_json(clm, budget_steps=8, plan={**second, "start": reset}), tokens_dir, checkpoint, tmp_path / "c")
    assert not np.array_equal(weights(fresh)["lm_head.weight"].numpy(), weights(whole)["lm_head.weight"].numpy())


@pytest.mark.parametrize("damaged", ["optimizer.pt", "model.safetensors", "state.pt"])
def test_a_truncated_checkpoint_optimizer_state_or_resume_state_is_one_line(damaged, tokens_dir, init_dir, tmp_path, capsys):
    """A second stage starting from a checkpoint whose file is cut in half, or a run resuming
    from a cut state: one line naming the file and what to do, no traceback."""
    import shutil

    clm = OBJECTIVES["clm"]
    whole = pretrain(
        pretrain_spec_json(clm, budget_steps=8, plan=scratch_plan("clm", 8, stage_checkpoint_steps=(4,))),
        tokens_dir,
        init_dir,
        tmp_path / "a",
    )
    shutil.copytree(whole, tmp_path / "first")  # with the provenance.json that records its checkpoints
    checkpoint = tmp_path / "first" / "checkpoints" / "step-000004"
    second = scratch_plan("clm", 8, run="clm50_clm-micro", study="two_stage", first_step=4, start=Start("checkpoint", "clm-micro", 4, True))
    spec = pretrain_spec_json(clm, budget_steps=8, plan=second)
    work = tmp_path / "b" / "work"
    if damaged == "state.pt":
        work.mkdir(parents=True)
        torch.save(
            {"fingerprint": "x", "trained": {}, "optimizer": {}, "progress": dataclasses.asdict(Progress(step=5))}, work / "state.pt"
        )
    path = work / "state.pt" if damaged == "state.pt" else checkpoint / damaged
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    capsys.readouterr()
    argv = pretrain_argv(spec, tokens_dir, checkpoint, tmp_path / "b")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    start, remedy = {
        "optimizer.pt": ("sha256 ", "(snakemake -f <its output>)"),  # recorded in the first stage's provenance.json too
        "model.safetensors": ("sha256 ", "(snakemake -f <its output>)"),  # its recorded checksum catches it first
        "state.pt": ("unreadable", f"delete {work} to start the run afresh"),
    }[damaged]
    assert err.startswith(f"error: {path}: {start}") and err.endswith(remedy)
    assert not (tmp_path / "b" / "run" / "summary.json").exists()


@pytest.mark.parametrize("kind", ["clm", "mlm"])
def test_decay_branch_is_the_shorter_budget_run(kind, tokens_dir, init_dir, tmp_path):
    """A 6-step budget as the two-stage study builds it, a branch of an 8-step run from its
    checkpoint at step 2 (where the 6-step schedule's decay starts) decayed to step 6, ends
    with the same weights as a run trained for 6 steps from scratch: WSD's LR before the
    decay does not depend on the budget, and blocks and masks depend on the step alone."""
    objective = OBJECTIVES[kind]
    long = pretrain(
        pretrain_spec_json(objective, budget_steps=8, plan=scratch_plan(kind, 8, stage_checkpoint_steps=(2,))),
        tokens_dir,
        init_dir,
        tmp_path / "a",
    )
    branch_plan = scratch_plan(
        kind, 6, run=f"{kind}_6steps-micro", study="short_budget", first_step=2, start=Start("checkpoint", f"{kind}-micro", 2, True)
    )
    branch = pretrain(
        pretrain_spec_json(objective, budget_steps=8, plan=branch_plan), tokens_dir, long / "checkpoints" / "step-000002", tmp_path / "b"
    )
    short = pretrain(pretrain_spec_json(objective, budget_steps=6), tokens_dir, init_dir, tmp_path / "c")
    assert_same_weights(weights(short), weights(branch))
    assert read_json(branch / "summary.json")["study"] == "short_budget"


def test_continued_pretraining_reads_the_blocks_after_its_base(tokens_dir, init_dir, tmp_path):
    """CPT with data_offset_steps=k trains on the blocks of steps k.., with its own schedule."""
    plan = scratch_plan("clm", 3, run="clm_cpt_on_clm-micro", study="continued", data_offset_steps=5, start=Start("final", "clm-micro"))
    seen = []
    original = TokenBlocks.blocks_for_step
    with mock.patch.object(TokenBlocks, "blocks_for_step", lambda self, step, size: seen.append(step) or original(self, step, size)):
        pretrain(pretrain_spec_json(OBJECTIVES["clm"], budget_steps=3, plan=plan), tokens_dir, init_dir, tmp_path)
    assert seen[:3] == [5, 6, 7]


class PlantedPickle:
    """What a planted resume state could hold: unpickling it would run ``touch``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_planted_pickle_in_the_resume_state_runs_nothing(tokens_dir, init_dir, tmp_path, capsys):
    """Resumable state loads with weights_only: a pickle that would run code is refused in one line."""
    marker, work = tmp_path / "ran", tmp_path / "work"
    work.mkdir()
    torch.save({"fingerprint": "x", "trained": {}, "optimizer": {}, "progress": PlantedPickle(marker)}, work / "state.pt")
    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4)
    argv = pretrain_argv(spec, tokens_dir, init_dir, tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: {work / 'state.pt'}: unreadable (Weights only load failed") and err.endswith(
        f"delete {work} to start the run afresh"
    )
    assert not marker.exists() and not (tmp_path / "run").exists()


def test_a_non_finite_loss_stops_the_run_in_one_line_and_ships_nothing(tokens_dir, init_dir, tmp_path, capsys, monkeypatch):
    """A loss that turns NaN after step 3 ends the job at the first step it is measured (4:
    a resume step), naming the run and the step; no summary or model is left, and the resume
    state is that of step 2, the last finite one."""
    from pipeline.pretrain.trainer import Trainer

    train_step = Trainer._train_step

    def diverging(self, step, measure):
        metrics = train_step(self, step, measure)
        return {**metrics, "loss": float("nan")} if step >= 3 and metrics is not None else metrics

    monkeypatch.setattr(Trainer, "_train_step", diverging)
    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=8, resume_every_steps=2)
    work = tmp_path / "work"
    argv = pretrain_argv(spec, tokens_dir, init_dir, tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: clm-micro: the loss is nan at step 4; the run stops there, its last saved state is the last finite one"
        " (lower pretraining.schedule.peak_lr, or check its inputs)"
    )
    assert not (tmp_path / "run" / "summary.json").exists() and not (tmp_path / "run" / "model").exists()
    assert torch.load(work / "state.pt", weights_only=True)["progress"]["step"] == 2


def test_a_full_disk_while_saving_state_says_so_in_one_line(tokens_dir, init_dir, tmp_path, capsys, monkeypatch):
    from pipeline import files

    def full(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 4160 vs 4054")

    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr(files.shutil, "disk_usage", lambda path: mock.Mock(free=12_345_678))
    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4, resume_every_steps=2)
    work = tmp_path / "work"
    argv = pretrain_argv(spec, tokens_dir, init_dir, tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: {work / 'state.tmp'}: writing it failed ([enforce fail at inline_container.cc:664] . unexpected pos 4160 vs 4054);"
        " 0.01 GB free on its disk: is the disk full?"
    )
    assert not (tmp_path / "run").exists()


def test_weights_without_their_provenance_are_refused(tokens_dir, init_dir, tmp_path, capsys):
    """Zeroed weights whose provenance.json is gone: no record vouches for them (nor for the tokenizer
    beside them, which the run loads first), so the run refuses them."""
    import shutil

    from safetensors.torch import save_file

    init = tmp_path / "init"
    shutil.copytree(init_dir, init)
    save_file({name: torch.zeros_like(value) for name, value in load_file(init / "model.safetensors").items()}, init / "model.safetensors")
    (init / "provenance.json").unlink()
    spec = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4)
    argv = pretrain_argv(spec, tokens_dir, init, tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: {init / 'tokenizer.json'}: no provenance.json in the 3 folders above it records its sha256, so nothing vouches"
        " for its bytes; rerun the job that writes it (snakemake -f <its output>)"
    )


def test_the_study_s_split_samples_are_deterministic_cut_alike_for_every_objective_and_predict_nothing_across(
    tokens_dir, init_dir, tmp_path
):
    """pretraining.samples: split (pipeline/pretrain/samples.py): each block cut in two at a point
    that depends on (seed, step, row) only, so CLM and MLM read the same samples."""
    from pipeline.pretrain.samples import cut_point

    cuts = [cut_point(0, step, row, 32) for step in range(50) for row in range(4)]
    assert min(cuts) >= 12 and max(cuts) <= 20 and len(set(cuts)) == 9  # uniform over [12, 21): both sides >= 12 tokens
    split = pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4, samples="split")
    a, b = (pretrain(split, tokens_dir, init_dir, tmp_path / name) for name in ("a", "b"))
    assert_same_weights(weights(a), weights(b))
    packed = pretrain(pretrain_spec_json(OBJECTIVES["clm"], budget_steps=4), tokens_dir, init_dir, tmp_path / "packed")
    assert not np.array_equal(weights(a)["lm_head.weight"].numpy(), weights(packed)["lm_head.weight"].numpy())
    assert read_json(a / "summary.json")["loss_fraction"] == pytest.approx(30 / 32)  # the block's last token and the cut's


@pytest.mark.parametrize(
    "error",
    [
        OSError(28, "No space left on device"),
        RuntimeError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'),
    ],
    ids=["errno", "safetensors"],
)
def test_a_full_disk_under_any_writer_names_the_output_and_leaves_nothing(tmp_path, monkeypatch, error):
    """Writing model.safetensors (safetensors' own error type) or a table (pandas) on a full disk:
    one line naming the output, nothing left behind, the previous output untouched."""
    from safetensors import SafetensorError

    from pipeline import files
    from pipeline.errors import PipelineError

    monkeypatch.setattr(files.shutil, "disk_usage", lambda path: mock.Mock(free=12_345_678))
    final = tmp_path / "tables"
    final.mkdir()
    (final / "old.csv").write_text("kept")
    raised = SafetensorError(str(error)) if isinstance(error, RuntimeError) else error
    with pytest.raises(PipelineError) as refused, files.atomic_path(final) as out:
        out.mkdir()
        raise raised
    assert str(refused.value) == f"{final}: writing it failed, the disk is full (0.01 GB free); nothing written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"] and (final / "old.csv").read_text() == "kept"
    with pytest.raises(PipelineError, match="is the disk full"), files.explained_write_failure(final / "model.safetensors"):
        raise SafetensorError("Error while serializing: IoError")


def test_a_model_s_tokenizer_with_its_ids_rewritten_is_refused_where_it_is_loaded(init_dir, tmp_path, capsys):
    """A pretrained model's tokenizer.json with its ids rewritten once fine-tuned with rc 0 and changed
    scores: every stage that saves a tokenizer records its files, every stage that loads one verifies them."""
    import shutil

    from pipeline.tokenization.saved import load_saved_tokenizer

    model = tmp_path / "init"
    shutil.copytree(init_dir, model)
    recorded = json.loads((model / "provenance.json").read_text())["outputs"]
    assert {"tokenizer.json", "tokenizer_config.json"} <= set(recorded)
    tokenizer = json.loads((model / "tokenizer.json").read_text())
    vocab = tokenizer["model"]["vocab"]
    first, second = list(vocab)[10:12]
    vocab[first], vocab[second] = vocab[second], vocab[first]  # two ids swapped
    (model / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(PipelineError) as error:
        load_saved_tokenizer(model)
    assert str(error.value).startswith(f"{model / 'tokenizer.json'}: sha256 ") and "rerun the job that made" in str(error.value)
    (model / "tokenizer.json").write_text("not json")  # recorded so, it is still refused in one line, not a traceback
    outputs = json.loads((model / "provenance.json").read_text())
    outputs["outputs"]["tokenizer.json"] = hashlib.sha256(b"not json").hexdigest()
    (model / "provenance.json").write_text(json.dumps(outputs))
    with pytest.raises(PipelineError, match=r"cannot load its tokenizer \("):
        load_saved_tokenizer(model)


@pytest.mark.parametrize("kind", ["clm", "mlm"])
def test_every_exported_model_carries_a_card_whose_numbers_are_its_summary_s(kind, tokens_dir, init_dir, tmp_path):
    """model/README.md in the hub's card format: its YAML header parses, repeats summary.json's facts as
    they are there, names the task a hub lists it under, and the card is an output its provenance records."""
    run = pretrain(pretrain_spec_json(OBJECTIVES[kind], budget_steps=4), tokens_dir, init_dir, tmp_path)
    card = (run / "model" / CARD_FILE).read_text()
    header, summary = read_card_header(card), read_json(run / "summary.json")
    assert {key: header["pretraining"][key] for key in SUMMARY_KEYS} == {key: summary[key] for key in SUMMARY_KEYS}
    assert header["pretraining"]["heldout_metric"] == summary["heldout_metric"]
    assert header["pretraining"]["tokens_sha256"] == read_json(run / "provenance.json")["inputs"]["tokens"]["sha256"]
    assert header["pipeline_tag"] == {"clm": "text-generation", "mlm": "fill-mask"}[kind] and header["library_name"] == "transformers"
    assert f"{summary['num_tokens']:,} tokens seen" in card and "LlamaForCausalLM.from_pretrained(path)" in card
    assert f"model/{CARD_FILE}" in read_json(run / "provenance.json")["outputs"]
