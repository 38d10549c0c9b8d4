"""``python -m pipeline pretrain``: one backbone, one objective, one token budget.

Resumable state lives in ``--work-dir`` (outside the Snakemake outputs, which Snakemake
deletes when a job fails). Rerunning an interrupted job resumes from the last saved
step and ends with the same weights as an uninterrupted run. The outputs appear in
``--out`` only when training is complete, ``summary.json`` and then the ``provenance.json`` that
records every output's sha256 (the summary's too) last.

Started by ``torchrun --nproc-per-node N`` it runs as N processes (``distributed.py``);
only rank 0 writes files and logs.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pipeline import strict
from pipeline.config import PretrainingSpec, SizeSpec
from pipeline.errors import PipelineError
from pipeline.files import write_json
from pipeline.integrity import verifies_tokens
from pipeline.model.backbone import (
    WEIGHTS_FILE,
    count_parameters,
    load_language_model,
    read_backbone_spec,
)
from pipeline.model.numerics import use_numerics_for
from pipeline.objectives import parse_objective
from pipeline.pretrain import distributed
from pipeline.pretrain.evaluation import YARDSTICKS
from pipeline.pretrain.model_card import CARD_FILE, model_card
from pipeline.pretrain.plan import RunPlan
from pipeline.pretrain.spec_digest import spec_digest
from pipeline.pretrain.token_blocks import TokenBlocks
from pipeline.pretrain.trainer import LOG_COLUMNS, OPTIMIZER_FILE, RunInputs, Trainer
from pipeline.provenance import checksum, code_version, write_provenance
from pipeline.tensorboard_log import EVENTS_DIR
from pipeline.tokenization.saved import load_saved_tokenizer, tokenizer_files
from pipeline.tokenization.special_tokens import SpecialIds

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PretrainRunSpec:
    run: str
    objective_name: str
    objective: dict[str, Any]
    size_name: str
    size: SizeSpec
    pretraining: PretrainingSpec
    plan: RunPlan
    seed: int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the run (objective, size, pretraining section, seed)")
    parser.add_argument("--tokens", required=True, help="packed token directory (meta.json listing each split's arrays)")
    parser.add_argument("--init", required=True, help="weights the run starts from: the size's initial weights or another run's checkpoint")
    parser.add_argument("--work-dir", required=True, help="resumable state; kept across interrupted attempts")
    parser.add_argument("--out", required=True, help="run directory: model/, checkpoints/, log.csv, summary.json")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of the job, shared by its processes")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="cuda: one GPU per process")


def run_fingerprint(spec: PretrainRunSpec, train: TokenBlocks, heldout: TokenBlocks, init_dir: Path) -> str:
    """What resumable state must match: the run's spec (less ``compute``: how it is computed does
    not make it another run, so state resumes after a change of precision, micro-batch or GPU count),
    its data and its initial weights."""
    digest = hashlib.sha256(spec_digest(strict.to_plain(spec)).encode())
    for part in (train.fingerprint, heldout.fingerprint, checksum(init_dir / WEIGHTS_FILE)):
        digest.update(part.encode())
    return digest.hexdigest()


def write_log(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=LOG_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in LOG_COLUMNS})


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    spec = strict.parse_json(PretrainRunSpec, args.spec, "pretrain")
    processes = distributed.start(args.device, spec.pretraining.compute.for_size(spec.size_name).sharding)
    try:
        train_and_finalize(spec, processes, args, started)
    finally:
        distributed.finish(processes)


def train_and_finalize(spec: PretrainRunSpec, processes: distributed.Processes, args: argparse.Namespace, started: float) -> None:
    torch.set_num_threads(max(1, args.threads // processes.world_size))
    use_numerics_for(processes.device)  # CPU: bit-exact resume; GPU: TF32, reproducible to rounding only
    if not processes.is_main:
        logging.getLogger().setLevel(logging.WARNING)
    objective = parse_objective(spec.objective, f"objectives.{spec.objective_name}")
    init_dir, out_dir, work_dir = Path(args.init), Path(args.out), Path(args.work_dir)
    if processes.is_main:
        shutil.rmtree(finished_state(work_dir), ignore_errors=True)
    backbone = read_backbone_spec(init_dir)
    if backbone.size != spec.size:
        raise PipelineError(f"{init_dir}: initial weights are for size {backbone.size}, the run asks for {spec.size}")
    tokenizer = load_saved_tokenizer(init_dir)
    special = SpecialIds.from_tokenizer(tokenizer)
    pretraining = spec.pretraining
    opening = time.perf_counter()
    # Rank 0 verifies the token arrays for the job (the others would hash the same bytes again).
    train = TokenBlocks(args.tokens, "train", pretraining.sequence_length, spec.seed, verify=processes.is_main)
    heldout = TokenBlocks(args.tokens, "heldout", pretraining.sequence_length, spec.seed, verify=processes.is_main)
    log.info("token arrays opened in %.1f s (checksums: %s)", time.perf_counter() - opening, "on" if verifies_tokens() else "off")
    heldout_blocks = heldout.first_blocks(pretraining.num_heldout_batches * pretraining.batch_size)
    inputs = RunInputs(
        backbone=backbone,
        special=special,
        objective=objective,
        spec=pretraining,
        plan=spec.plan,
        seed=spec.seed,
        train=train,
        heldout_blocks=heldout_blocks,
        fingerprint=run_fingerprint(spec, train, heldout, init_dir),
        spec_digest=spec_digest(strict.to_plain(spec)),
    )
    model = load_language_model(init_dir, objective.attention)
    trainer = Trainer(model, inputs, work_dir, processes, started)
    if not trainer.try_resume() and spec.plan.start.carry_optimizer:
        trainer.carry_optimizer_state(init_dir)
    plan = spec.plan
    log.info(
        "%s: %s on %s from %s, steps %d..%d x %d x %d tokens (%d train blocks), %d process(es) on %s",
        spec.run,
        spec.objective_name,
        spec.size_name,
        init_dir,
        plan.first_step,
        plan.last_step,
        pretraining.batch_size,
        pretraining.sequence_length,
        train.num_blocks,
        processes.world_size,
        processes.device.type,
    )
    progress = trainer.train()
    # The last logged row is the final step's, evaluated in the loop (held-out loss and yardstick).
    metric_name = trainer.loss.own_yardstick_name or YARDSTICKS[objective.attention].name
    metric_value = progress.rows[-1]["heldout_metric"]
    counts = count_parameters(model)
    summary = {
        "run": spec.run,
        "objective": spec.objective_name,
        "objective_kind": objective.kind,
        "objective_params": strict.to_plain(objective.params),  # as parsed: every default filled in
        "attention": objective.attention,
        "size": spec.size_name,
        "study": plan.study,
        "description": plan.description,
        "started_from": strict.to_plain(plan.start),
        "first_step": plan.first_step,
        "num_parameters": counts.total,
        "num_non_embedding_parameters": counts.non_embedding,
        "num_study_parameters": counts.study_count,  # what the study's size names count (the comparison with it)
        "trained_steps": progress.step,  # the step its final model is at
        "schedule_steps": plan.schedule_steps,  # the step its learning-rate schedule ends at (its decay's end)
        "stopped_before_decay": progress.step < plan.schedule_steps,  # pretraining.stop_at_step: an undecayed final model
        "budget_steps": spec.pretraining.budget_steps,  # the config's full budget, which stands for the study's 42k steps
        "num_tokens": progress.num_tokens,
        "loss_fraction": progress.num_loss_positions / max(progress.num_tokens, 1),
        "final_train_loss": progress.rows[-1]["loss"],
        "heldout_loss": progress.rows[-1]["heldout_loss"],
        "heldout_metric": {"name": metric_name, "value": metric_value},
        "wall_seconds": trainer.wall_seconds(),  # every attempt's, where a run was resumed
        "tokens_per_second": progress.num_tokens / max(progress.train_seconds, 1e-9),
    }
    if processes.is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out_dir / "model", ignore_errors=True)
    trainer.save_backbone(out_dir / "model")  # collective under FSDP
    processes.barrier()
    if not processes.is_main:
        return
    finalize(out_dir, work_dir, inputs, tokenizer, progress.rows, summary, spec, args, trainer.checkpoint_steps())
    measured = "not measured (the loss never trains the LM head)" if metric_value is None else f"{metric_value:.3f}"
    log.info("%s: held-out loss %.4f, %s %s", spec.run, summary["heldout_loss"], metric_name, measured)


def finalize(out_dir: Path, work_dir: Path, inputs: RunInputs, tokenizer, rows, summary, spec, args, steps: set[int]) -> None:
    """Copy the finished run (its model already saved in ``out_dir/model``) into ``out_dir``;
    summary.json and then provenance.json (every output's sha256, the summary's included) are written
    last and the resumable state removed after them.

    Copies, not moves: killed at any point here, the job leaves its resume state whole and
    its rerun finalizes again from it (Snakemake deletes a failed job's outputs), with every
    checkpoint of ``steps``, the run's configured ones, and no other."""
    shutil.rmtree(out_dir / "checkpoints", ignore_errors=True)
    tokenizer.save_pretrained(out_dir / "model")
    (out_dir / "checkpoints").mkdir()
    for step in sorted(steps):
        checkpoint = work_dir / "checkpoints" / f"step-{step:06d}"
        if not (checkpoint / WEIGHTS_FILE).is_file():
            raise PipelineError(f"{checkpoint}: checkpoint missing from the resume state; delete {work_dir} and rerun the job")
        shutil.copytree(checkpoint, out_dir / "checkpoints" / checkpoint.name)
        tokenizer.save_pretrained(out_dir / "checkpoints" / checkpoint.name)
    write_log(out_dir / "log.csv", rows)
    shutil.rmtree(out_dir / EVENTS_DIR, ignore_errors=True)
    if (work_dir / EVENTS_DIR).is_dir():  # the TensorBoard curves, every attempt's (off: hardware.tensorboard)
        shutil.copytree(work_dir / EVENTS_DIR, out_dir / EVENTS_DIR)
    write_json(out_dir / "summary.json", summary)
    pretraining, tokens_sha256 = spec.pretraining, checksum(Path(args.tokens) / "meta.json")
    card = model_card(summary, spec.plan, pretraining.sequence_length, pretraining.batch_size, tokens_sha256, code_version())
    (out_dir / "model" / CARD_FILE).write_text(card, encoding="utf-8")
    write_provenance(
        out_dir,
        strict.to_plain(spec),
        {"tokens": Path(args.tokens) / "meta.json", "init": Path(args.init) / WEIGHTS_FILE},
        # the weights and the AdamW state beside a stage checkpoint, which a two-stage run carries on with
        outputs=sorted(out_dir.glob(f"model/{WEIGHTS_FILE}"))
        + sorted(out_dir.glob(f"checkpoints/*/{WEIGHTS_FILE}"))
        + sorted(out_dir.glob(f"checkpoints/*/{OPTIMIZER_FILE}"))
        + [file for directory in [out_dir / "model", *sorted(out_dir.glob("checkpoints/*"))] for file in tokenizer_files(directory)]
        + [out_dir / "model" / CARD_FILE, out_dir / "summary.json"],  # the aggregate verifies the summary
        fingerprint=inputs.fingerprint,
    )
    # One rename, then the slow delete: killed before the rename the state is whole (the rerun
    # finalizes again), after it there is none to resume from half-deleted.
    finished = finished_state(work_dir)
    os.replace(work_dir, finished)
    shutil.rmtree(finished)


def finished_state(work_dir: Path) -> Path:
    """Where a finished run's resume state goes to be deleted; a kill may leave it, the next start removes it."""
    return work_dir.with_name(f".{work_dir.name}.finished")
