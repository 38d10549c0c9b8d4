"""The pretraining loop: one loop for every objective, resumable bit for bit.

Everything a step needs is a function of the step number (the blocks, the per-example
RNGs, the learning rate) or lives in the model and optimizer state. The resumable
state written every ``resume_every_steps`` is therefore just
``(step, model, optimizer, log, counters)``, tagged with a fingerprint of the run's
spec and data so that state from a different configuration is never resumed.

How a step is computed is ``pretraining.compute`` (bf16 autocast, ``torch.compile``,
fused AdamW, micro-batches) and how many processes share it (``distributed.py``); neither
changes which examples a step trains on. With the defaults (float32, one process, the
whole batch in one pass) a step is exactly the computation the pinned-loss tests record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import pickle
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from pipeline.batch import Batch, make_batch
from pipeline.config import PretrainingSpec
from pipeline.errors import PipelineError, first_line
from pipeline.files import explained_write_failure, write_json
from pipeline.integrity import verify_recorded
from pipeline.kernels import DEFAULT_KERNELS
from pipeline.model.backbone import BackboneSpec, attention_implementation, compile_layers, layer_classes, save_language_model
from pipeline.objectives import Objective, example_rng
from pipeline.optimization import build_adamw, set_learning_rate
from pipeline.pretrain import distributed
from pipeline.pretrain.distributed import Processes
from pipeline.pretrain.evaluation import HeldOut, objective_loss, yardstick
from pipeline.pretrain.losses import PretrainingLoss, build_loss
from pipeline.pretrain.plan import RunPlan
from pipeline.pretrain.samples import cut_point
from pipeline.pretrain.token_blocks import TokenBlocks
from pipeline.schedules import learning_rate
from pipeline.tensorboard_log import EVENTS_DIR, ScalarLog
from pipeline.tokenization.special_tokens import SpecialIds

log = logging.getLogger(__name__)
STATE_FILE = "state.pt"
PROGRESS_FILE = "progress.json"  # beside STATE_FILE: the step it holds, read without loading it (pipeline/workflow/progress.py)


def load_torch_file(path: Path, remedy: str, weights_only: bool) -> Any:
    """``torch.load`` of a file this harness wrote; a truncated or corrupt one is one line naming it and ``remedy``."""
    try:
        return torch.load(path, weights_only=weights_only, map_location="cpu")
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError) as error:  # a truncated zip fails in any of these
        raise PipelineError(f"{path}: unreadable ({first_line(error)}); {remedy}") from None


OPTIMIZER_FILE = "optimizer.pt"  # beside a stage checkpoint: the AdamW state a two-stage run may carry on with
LOG_EVERY_STEPS = 10
LOG_COLUMNS = ("step", "num_tokens", "loss", "learning_rate", "grad_norm", "tokens_per_second", "heldout_loss", "heldout_metric")


@dataclass
class Progress:
    """What the loop accumulates; saved with the resumable state."""

    step: int = 0  # number of optimizer steps completed
    num_tokens: int = 0  # real input positions processed (span corruption's exceed the block's; padding excluded)
    num_loss_positions: int = 0  # positions that carried loss
    train_seconds: float = 0.0  # time inside training steps (no evaluation, no saving)
    wall_seconds: float = 0.0  # the run's wall time at the last save, every attempt's from its job's start (Trainer.wall_seconds)
    rows: list[dict] = field(default_factory=list)  # the training log


@dataclass(frozen=True)
class RunInputs:
    backbone: BackboneSpec
    special: SpecialIds
    objective: Objective
    spec: PretrainingSpec
    plan: RunPlan
    seed: int
    train: TokenBlocks
    heldout_blocks: list
    fingerprint: str  # identifies spec + data + initial weights
    spec_digest: str  # the spec's part of it, written beside the state for the progress line (spec_digest.py)


class TrainedModules(nn.Module):
    """The backbone and the loss (with any trainable parts of its own) as one module.

    ``forward(batch)`` is the training loss, so DDP and FSDP can wrap the pair; its state
    dict keys are ``model.*`` and ``loss.*``.
    """

    def __init__(self, model: nn.Module, loss: PretrainingLoss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch: Batch) -> torch.Tensor:
        return self.loss(self.model, batch)


class Trainer:
    def __init__(
        self, model: torch.nn.Module, inputs: RunInputs, work_dir: Path, processes: Processes | None = None, started: float | None = None
    ):
        """``started``: when the job began (``time.perf_counter()``), where its wall time counts from; by default now."""
        self.job_started = time.perf_counter() if started is None else started
        self.earlier_attempts_seconds = 0.0  # a resumed run's attempts before this one, each up to its last saved state
        self.inputs = inputs
        self.work_dir = work_dir
        spec = inputs.spec
        self.compute = spec.compute.for_size(inputs.plan.size)
        self.processes = processes or Processes(0, 1, torch.device("cpu"))
        device = self.processes.device
        self.model = model.to(device)
        if self.compute.attention != DEFAULT_KERNELS["attention"]:  # every layer's attention, and how encode gives it the split samples
            self.model.set_attn_implementation(attention_implementation(self.compute.attention))
        # The objective's loss may own trainable parts (NSP head, ELECTRA generator): they are
        # optimised, saved and resumed with the backbone; only the backbone is exported.
        self.loss = build_loss(inputs.objective, inputs.backbone, inputs.seed, self.compute.head).to(device)
        self.trained = TrainedModules(self.model, self.loss)
        self.wrapped = distributed.wrap(self.trained, self.processes, layer_classes(self.model), self.compute.precision == "bf16")
        if self.compute.compile:
            compile_layers(self.model)  # after FSDP has made the layers units, as FSDP wants
        fused = self.compute.fused_optimizer
        self.optimizer = build_adamw(self.trained, spec.optimizer, self._learning_rate(inputs.plan.first_step), fused=fused)
        self.progress = Progress(step=inputs.plan.first_step)

    def _learning_rate(self, step: int) -> float:
        plan = self.inputs.plan
        return learning_rate(step, plan.schedule_steps, plan.schedule)

    def _autocast(self):
        if self.compute.precision == "bf16":
            return torch.autocast(self.processes.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def carry_optimizer_state(self, checkpoint: Path) -> None:
        """Continue with the AdamW moments saved beside ``checkpoint`` (two-stage runs)."""
        path = checkpoint / OPTIMIZER_FILE
        if not path.is_file():
            raise PipelineError(f"{path}: missing; the second stage was asked to carry the first stage's optimizer state")
        verify_recorded(path)  # the bytes the first stage's provenance.json recorded, as its weights are
        state = load_torch_file(path, "rerun the first stage's job", weights_only=True)
        try:
            distributed.load_full_state(self.trained, self.optimizer, None, state, self.processes)
        except (ValueError, KeyError) as error:
            raise PipelineError(f"{path}: does not fit this run's parameters ({error})") from None

    # ----------------------------------------------------------------- resume

    def _state_path(self) -> Path:
        return self.work_dir / STATE_FILE

    def try_resume(self) -> bool:
        """Resume from the state in ``work_dir`` when it is this run's; otherwise start afresh
        with ``work_dir`` emptied, so that no checkpoint of another spec (or of an attempt
        killed before its first state) can ship as this run's."""
        path = self._state_path()
        # weights_only: tensors and plain containers alone, so a planted pickle in the work
        # directory cannot run code on the next rerun.
        state = load_torch_file(path, f"delete {self.work_dir} to start the run afresh", weights_only=True) if path.is_file() else None
        if state is None or state["fingerprint"] != self.inputs.fingerprint:
            if state is not None:
                log.warning("discarding %s whole: it belongs to a different spec, data or initialisation", self.work_dir)
            self.processes.barrier()  # every process has read the state before rank 0 deletes it
            if self.processes.is_main:
                shutil.rmtree(self.work_dir, ignore_errors=True)
            return False
        distributed.load_full_state(self.trained, self.optimizer, state["trained"], state["optimizer"], self.processes)
        self.progress = Progress(**state["progress"])
        self.earlier_attempts_seconds = self.progress.wall_seconds
        log.info("resumed from %s at step %d", path, self.progress.step)
        return True

    def wall_seconds(self) -> float:
        """The run's wall time: this attempt's from its job's start, and every earlier attempt's up to its last
        saved state (what an attempt ran after that is lost with it, and trained again by this one)."""
        return self.earlier_attempts_seconds + time.perf_counter() - self.job_started

    def _save_state(self) -> None:
        trained, optimizer = distributed.full_state(self.trained, self.optimizer, self.processes)  # collective under FSDP
        if not self.processes.is_main:
            return
        path = self._state_path()
        temporary = path.with_suffix(".tmp")
        self.progress.wall_seconds = self.wall_seconds()
        state = {
            "fingerprint": self.inputs.fingerprint,
            "trained": trained,
            "optimizer": optimizer,
            "progress": dataclasses.asdict(self.progress),
        }
        with explained_write_failure(temporary):
            torch.save(state, temporary)
        os.replace(temporary, path)
        saved = {"step": self.progress.step, "last_step": self.inputs.plan.last_step, "spec_digest": self.inputs.spec_digest}
        write_json(self.work_dir / PROGRESS_FILE, saved)

    # ------------------------------------------------------------------- loop

    def _batch(self, blocks: list[np.ndarray], data_step: int, rows: range) -> Batch:
        """Examples ``rows`` of the step's global batch of ``blocks``: example ``i`` draws from
        ``example_rng(seed, data_step, i)`` and its partner (NSP) is block ``i + 1`` of the
        *global* batch (:func:`pipeline.batch.make_batch`)."""
        inputs = self.inputs
        rngs = [example_rng(inputs.seed, data_step, i) for i in rows]
        cuts = [cut_point(inputs.seed, data_step, i, len(blocks[i])) for i in rows] if inputs.spec.samples == "split" else None
        return make_batch(inputs.objective, blocks, rngs, inputs.special, rows, cuts)

    def _micro_batches(self, step: int) -> list[Batch]:
        """This process's rows of step ``step``'s global batch, in micro-batches of ``compute.micro_batch_size``."""
        spec = self.inputs.spec
        data_step = step + self.inputs.plan.data_offset_steps  # continued pretraining reads past its base's blocks
        blocks = self.inputs.train.blocks_for_step(data_step, spec.batch_size)
        rows = self.processes.rows(spec.batch_size)
        size = self.compute.micro_batch_size or len(rows)
        return [self._batch(blocks, data_step, rows[i : i + size]) for i in range(0, len(rows), size)]

    def _train_step(self, step: int, measure: bool) -> dict | None:
        """One optimizer step; the logged metrics (a host sync) only when ``measure``.

        Each micro-batch's mean loss is weighted by its share of the global batch's loss
        positions (times the process count, which DDP/FSDP divide gradients by), so the
        gradient is that of the global batch's mean loss however the rows are split. With
        one process and one micro-batch the weight is exactly 1 and the step is the plain
        ``loss.backward()``.
        """
        processes, spec = self.processes, self.inputs.spec
        batches = self._micro_batches(step)
        local = torch.tensor([sum(b.num_loss_positions for b in batches), sum(b.num_tokens for b in batches)], dtype=torch.float64)
        num_loss_positions, num_tokens = (int(n) for n in processes.sum(local).tolist())  # global counts
        lr = self._learning_rate(step)
        set_learning_rate(self.optimizer, lr)
        logged_loss = torch.zeros((), device=processes.device)
        for index, batch in enumerate(batches):
            share = batch.num_loss_positions / max(num_loss_positions, 1)
            with distributed.no_gradient_sync(self.wrapped, index == len(batches) - 1):
                with self._autocast():
                    loss = self.wrapped(batch.to(processes.device))
                weight = share * processes.world_size
                (loss if weight == 1.0 else loss * weight).backward()
            logged_loss += loss.detach().float() * share
        grad_norm = torch.nn.utils.clip_grad_norm_(self.trained.parameters(), spec.optimizer.grad_clip_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.progress.num_tokens += num_tokens
        self.progress.num_loss_positions += num_loss_positions
        if not measure:
            return None
        loss_value = processes.sum(logged_loss).item()
        return {"loss": loss_value, "learning_rate": lr, "grad_norm": distributed.plain_tensor(grad_norm).item()}

    def _check_finite(self, step: int, metrics: dict | None) -> None:
        """A non-finite loss or gradient norm ends the run in one line naming it and the step."""
        for name, value in (metrics or {}).items():
            if isinstance(value, float) and not math.isfinite(value):
                raise PipelineError(
                    f"{self.inputs.plan.run}: the {name.replace('_', ' ')} is {value} at step {step}; the run stops there,"
                    " its last saved state is the last finite one (lower pretraining.schedule.peak_lr, or check its inputs)"
                )

    def evaluate(self) -> tuple[float, float | None]:
        """(held-out loss of the run's objective, held-out yardstick value), in eval mode.

        Every process evaluates every held-out block (in micro-batches), so all agree on
        the numbers without communicating; held-out sets are small beside training.
        """
        inputs, device = self.inputs, self.processes.device
        batch_size = self.compute.micro_batch_size or inputs.spec.batch_size
        heldout = HeldOut(inputs.heldout_blocks, inputs.special, inputs.seed, batch_size, device)
        self.trained.eval()
        with distributed.gathered(self.trained, self.processes), self._autocast():
            # Read through the LM head, the shared yardstick means nothing when the loss never trains that head;
            # such a loss may measure what it trains instead (ELECTRA: its discriminator), from the loss's own passes.
            if self.loss.own_yardstick_name:
                loss, metric = self.loss.own_evaluation(self.model, heldout.batches(inputs.objective))
            else:
                loss = objective_loss(self.loss, self.model, inputs.objective, heldout)
                metric = yardstick(self.model, inputs.objective.attention, heldout)[1] if self.loss.measures_language_model else None
        self.trained.train()
        return loss, metric

    def checkpoint_steps(self) -> set[int]:
        """Learning-curve checkpoints inside this run, plus the stage checkpoints other runs start from."""
        plan = self.inputs.plan
        return {*plan.curve_steps(self.inputs.spec.checkpoint_steps), *plan.stage_checkpoint_steps}

    def save_backbone(self, directory: Path, with_optimizer: bool = False) -> None:
        """The backbone as a Hugging Face directory (+ ``optimizer.pt``); rank 0 writes, every process must call."""
        backbone, optimizer = None, self.optimizer.state_dict() if with_optimizer else None
        if self.processes.sharded:  # the full state is gathered collectively, then rank 0 writes it
            trained, optimizer = distributed.full_state(self.trained, self.optimizer if with_optimizer else None, self.processes)
            backbone = {name.removeprefix("model."): value for name, value in trained.items() if name.startswith("model.")}
        if not self.processes.is_main:
            return
        with explained_write_failure(directory):  # a full disk says so
            save_language_model(self.model, self.inputs.backbone, directory, state_dict=backbone)
            if with_optimizer:
                torch.save(optimizer, directory / OPTIMIZER_FILE)

    def _save_checkpoint(self, step: int) -> None:
        directory = self.work_dir / "checkpoints" / f"step-{step:06d}"
        self.save_backbone(directory, with_optimizer=step in self.inputs.plan.stage_checkpoint_steps)

    def train(self) -> Progress:
        spec, plan, processes = self.inputs.spec, self.inputs.plan, self.processes
        checkpoint_steps = self.checkpoint_steps()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.trained.train()
        # On a resumed run, the steps an earlier attempt logged past its saved state are dropped (purge_step).
        events = ScalarLog(self.work_dir / EVENTS_DIR, purge_step=self.progress.step or None, writes=processes.is_main)
        # Closed before an error propagates, so that the error is the job's last line.
        with (
            contextlib.closing(events),
            tqdm(
                total=plan.last_step,
                initial=self.progress.step,
                desc="pretrain",
                unit="step",
                mininterval=5.0,
                disable=not processes.is_main,
            ) as bar,
        ):
            while self.progress.step < plan.last_step:
                step = self.progress.step
                done = step + 1
                is_checkpoint = done in checkpoint_steps
                is_last = done == plan.last_step
                is_logged = done % LOG_EVERY_STEPS == 0 or is_checkpoint or is_last
                saves_state = done % spec.resume_every_steps == 0 or is_checkpoint
                started = time.perf_counter()
                # Measured (a host sync) where it is logged and before any state is saved, so a
                # non-finite loss stops the run before it can be resumed from or shipped.
                metrics = self._train_step(step, measure=is_logged or saves_state)
                self._check_finite(done, metrics)
                if is_logged or saves_state:
                    processes.synchronize()  # queued GPU work belongs to training time, not to the evaluation or saving after it
                step_seconds = time.perf_counter() - started
                self.progress.train_seconds += step_seconds
                self.progress.step = done
                if is_logged:
                    heldout_loss, heldout_metric = self.evaluate() if is_checkpoint or is_last else (None, None)
                    self._check_finite(done, {"held-out loss": heldout_loss})
                    row = {
                        "step": done,
                        "num_tokens": self.progress.num_tokens,
                        **metrics,
                        "tokens_per_second": self.progress.num_tokens / max(self.progress.train_seconds, 1e-9),
                        "heldout_loss": heldout_loss,
                        "heldout_metric": heldout_metric,
                    }
                    self.progress.rows.append(row)
                    events.add(done, event_scalars(row, step_seconds))
                    bar.set_postfix(loss=f"{metrics['loss']:.3f}", lr=f"{metrics['learning_rate']:.2e}")
                if is_checkpoint:
                    self._save_checkpoint(done)
                if saves_state:
                    self._save_state()
                bar.update(1)
        return self.progress


def event_scalars(row: dict[str, Any], step_seconds: float) -> dict[str, float | None]:
    """A training-log row as TensorBoard tags, with the logged step's own time; the held-out ones are None
    between evaluations (pipeline/tensorboard_log.py leaves them out)."""
    return {
        "train/loss": row["loss"],
        "train/learning_rate": row["learning_rate"],
        "train/grad_norm": row["grad_norm"],
        "train/tokens_per_second": row["tokens_per_second"],
        "train/step_seconds": step_seconds,
        "heldout/loss": row["heldout_loss"],
        "heldout/yardstick": row["heldout_metric"],
    }
