"""Several processes on one run: torchrun, DDP or FSDP, with results that do not depend on how many.

The pretraining rule starts ``torchrun --nproc-per-node N`` when its job has N > 1 GPUs and
plain ``python`` otherwise; :func:`start` reads torchrun's environment and joins the
process group (NCCL on GPUs, gloo on CPU), or returns the single process.

Why the results do not depend on N: every process reads the *same* global batch of the step
(``TokenBlocks.blocks_for_step``, per-example RNGs keyed by the global example index) and
takes its own contiguous slice of rows (:meth:`Processes.rows`); each micro-batch's mean loss
is weighted by its share of the global batch's loss positions, so the summed gradients are
the gradient of the global mean, whatever the split into processes and micro-batches (up to
floating-point summation order). Resumable state is saved whole (an unsharded model and
optimizer state dict, rank 0 writes), so a run may resume with another number of processes.

DDP replicates weights and AdamW state; FSDP (``torch.distributed.fsdp.fully_shard``, one
unit per transformer layer plus the root) shards them, for the sizes whose replicas would
not fit. With one process neither wraps anything: the single-process path is exactly the
code that ran before this module existed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

from pipeline.errors import PipelineError


@dataclass(frozen=True)
class Processes:
    """Where this process sits among the run's processes."""

    rank: int
    world_size: int
    device: torch.device
    sharding: str = "ddp"  # "ddp" or "fsdp"; irrelevant with one process

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def sharded(self) -> bool:
        return self.distributed and self.sharding == "fsdp"

    def rows(self, batch_size: int) -> range:
        """This process's rows of a global batch of ``batch_size`` sequences (a contiguous slice)."""
        if batch_size % self.world_size:
            raise PipelineError(f"batch_size {batch_size} does not split evenly over {self.world_size} processes")
        per_process = batch_size // self.world_size
        return range(self.rank * per_process, (self.rank + 1) * per_process)

    def synchronize(self) -> None:
        """Wait for queued GPU work (so wall-clock timings include it); nothing on CPU."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        """Element-wise sum of ``values`` over processes, on this process's device (``values`` itself with one process).

        With several GPUs, reading the result on the host (the step's loss-position count)
        waits for the previous step to finish: one short stall per step that one GPU never has.
        """
        if not self.distributed:
            return values
        values = values.to(self.device)  # NCCL reduces GPU tensors only
        dist.all_reduce(values, op=dist.ReduceOp.SUM)
        return values

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def start(device: str, sharding: str = "ddp") -> Processes:
    """Join torchrun's process group when launched by it, else the single process on ``device``.

    ``device`` is "cpu" or "cuda"; under torchrun each process takes GPU ``LOCAL_RANK``.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if device == "cuda" and not torch.cuda.is_available():
        raise PipelineError("--device cuda: no CUDA device is visible to this process")
    if world_size == 1:
        return Processes(0, 1, torch.device("cuda", 0) if device == "cuda" else torch.device("cpu"), sharding)
    local_rank = int(os.environ["LOCAL_RANK"])
    if device == "cuda":
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if device == "cuda" else "gloo")
    placed = torch.device("cuda", local_rank) if device == "cuda" else torch.device("cpu")
    return Processes(dist.get_rank(), dist.get_world_size(), placed, sharding)


def finish(processes: Processes) -> None:
    if processes.distributed and dist.is_initialized():
        dist.destroy_process_group()


def wrap(module: nn.Module, processes: Processes, layer_classes: tuple[str, ...], bf16: bool) -> nn.Module:
    """``module`` as the processes train it: itself (one process), DDP, or FSDP-sharded in place.

    FSDP makes one unit per module whose class name is in ``layer_classes`` (the backbone's
    transformer layers, transformers' ``_no_split_modules``) and one for the rest; with
    ``bf16`` it gathers weights in bf16 and reduces gradients in float32.
    """
    if not processes.distributed:
        return module
    if processes.sharding == "ddp":
        # device_ids=None: the module lives on one device and batches are moved there by the trainer.
        return nn.parallel.DistributedDataParallel(module, device_ids=None)
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else MixedPrecisionPolicy()
    for layer in [m for m in module.modules() if type(m).__name__ in layer_classes]:
        fully_shard(layer, mp_policy=policy)
    fully_shard(module, mp_policy=policy)
    return module


def no_gradient_sync(wrapped: nn.Module, last_micro_batch: bool):
    """DDP: skip the gradient all-reduce on every micro-batch but the last of a step."""
    if isinstance(wrapped, nn.parallel.DistributedDataParallel) and not last_micro_batch:
        return wrapped.no_sync()
    return contextlib.nullcontext()


@contextlib.contextmanager
def gathered(module: nn.Module, processes: Processes) -> Iterator[None]:
    """FSDP: the root's weights (embeddings, LM head, loss heads) unsharded, for calls that bypass ``forward``.

    Evaluation calls the backbone's parts directly (the LM head on selected positions); the
    transformer layers gather their own weights when called, the root's must be gathered here.
    """
    if not processes.sharded:
        yield
        return
    module.unshard()
    try:
        yield
    finally:
        module.reshard()


def plain_tensor(value: torch.Tensor) -> torch.Tensor:
    """A DTensor (FSDP's gradient norm) as the full tensor every process agrees on."""
    return value.full_tensor() if hasattr(value, "full_tensor") else value


# ------------------------------------------------------------------ whole state


def full_state(module: nn.Module, optimizer: torch.optim.Optimizer | None, processes: Processes) -> tuple[dict, dict | None]:
    """(model state dict, optimizer state dict or None), unsharded, in the single-process format.

    Collective under FSDP (every process must call it); the result is complete on rank 0
    (other ranks may get empty dicts). Optimizer state is keyed by parameter index, as
    ``optimizer.state_dict()`` keys it, so state saved by any number of processes loads in any other.
    """
    if not processes.sharded:
        return module.state_dict(), None if optimizer is None else optimizer.state_dict()
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_optimizer_state_dict

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    model_state = get_model_state_dict(module, options=options)
    if optimizer is None:
        return model_state, None
    optimizer_state = get_optimizer_state_dict(module, optimizer, options=options)
    return model_state, (by_index(optimizer_state) if optimizer_state else {})


def load_full_state(
    module: nn.Module, optimizer: torch.optim.Optimizer, model_state: dict | None, optimizer_state: dict | None, processes: Processes
) -> None:
    """Load what :func:`full_state` returned, either part may be None (every process passes the whole state)."""
    if not processes.sharded:
        if model_state is not None:
            module.load_state_dict(model_state)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict, set_optimizer_state_dict

    options = StateDictOptions(full_state_dict=True)
    if model_state is not None:
        set_model_state_dict(module, model_state, options=options)
    if optimizer_state is not None:
        set_optimizer_state_dict(module, optimizer, by_name(optimizer_state, parameter_names(module, optimizer)), options=options)


def parameter_names(module: nn.Module, optimizer: torch.optim.Optimizer) -> list[str]:
    """The fully qualified name of each optimizer parameter, in the optimizer's (index) order."""
    names = {id(p): name for name, p in module.named_parameters()}
    return [names[id(p)] for group in optimizer.param_groups for p in group["params"]]


def by_index(state: dict) -> dict:
    """Optimizer state keyed by parameter name (torch.distributed.checkpoint) -> keyed by index."""
    order = [name for group in state["param_groups"] for name in group["params"]]
    index = {name: i for i, name in enumerate(order)}
    groups = [{**group, "params": [index[name] for name in group["params"]]} for group in state["param_groups"]]
    return {"state": {index[name]: value for name, value in state["state"].items()}, "param_groups": groups}


def by_name(state: dict, names: list[str]) -> dict:
    """The inverse of :func:`by_index`, given each index's parameter name."""
    groups = [{**group, "params": [names[i] for i in group["params"]]} for group in state["param_groups"]]
    return {"state": {names[i]: value for i, value in state["state"].items()}, "param_groups": groups}
