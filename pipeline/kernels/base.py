"""What a compute kernel is: one way to compute one part of a step (the attention of every layer,
or the LM head with its loss), declared once with what it needs and what it holds in memory.

Every member module registers one :class:`AttentionKernel` or :class:`LmHeadKernel` by name, the
name a config gives (``pretraining.compute.attention`` / ``lm_head``) and a benchmark's option
takes. The config check asks :meth:`Kernel.refusal`, the memory estimate the kernel's
``memory_bytes``, the model the implementation of the same name (:mod:`pipeline.model.backbone`'s
``SPARSE_HEADS`` and ``OWN_ATTENTION``), and tests/test_kernels.py runs every registered
kernel against its slot's reference where the machine can. Declarations need no torch: the
config and Snakemake's planning read them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pipeline.registry import Registry

Slot = Literal["attention", "lm_head"]
SplitSamplesAs = Literal["dense_mask", "block_mask", "offsets"]
KERNELS: Registry["Kernel"] = Registry("kernel")
# What a config that names no kernel computes with: the float32, plain-PyTorch path the tests pin.
DEFAULT_KERNELS: dict[Slot, str] = {"attention": "sdpa", "lm_head": "chunked"}


@dataclass(frozen=True)
class Kernel:
    name: str
    summary: str  # what it is, in one line
    cpu_refusal: str | None = None  # why a CPU cannot run it, and what runs instead; None: it runs anywhere
    bf16_refusal: str | None = None  # why it computes in bf16 only; None: any precision
    # Largest difference from its slot's reference (float32, CPU) that tests/test_kernels.py accepts;
    # on a GPU its own check (bench/gpu_acceptance.py) holds it to rounding in bf16.
    tolerance: float = 1e-5
    slot: Slot = "attention"

    def refusal(self, on_gpu: bool, precision: str, gpu_is: str) -> str | None:
        """Why this kernel cannot run on this machine at this precision, else None; ``gpu_is`` names how
        the caller asks for a GPU (a config's ``hardware.gpus_per_run >= 1``, a benchmark's ``--device cuda``)."""
        if self.cpu_refusal and not on_gpu:
            return f"{self.name!r} needs a GPU ({gpu_is}): {self.cpu_refusal}"
        if self.bf16_refusal and precision != "bf16":
            return f"{self.name!r} needs precision 'bf16': {self.bf16_refusal}"
        return None


@dataclass(frozen=True)
class AttentionKernel(Kernel):
    """Every layer's attention. transformers calls it by ``transformers_name`` (model.config._attn_implementation)."""

    transformers_name: str = ""
    # How it is told which positions of a row see each other when a row holds two samples (split samples):
    # a dense boolean (B, 1, L, L) mask, which the layers keep as an additive bias for their backward (SDPA);
    # a block mask of a few bytes per 128 x 128 tile (FlexAttention); or where each sample starts (varlen).
    split_samples_as: SplitSamplesAs = "dense_mask"
    # Why it cannot run a prefix LM or a span denoiser (their rows need a mask it does not take); None: every objective.
    whole_samples_refusal: str | None = None

    def memory_bytes(self, layers: int, micro_batch: int, length: int, bf16: bool, split: bool) -> float:
        """What the kernel keeps beyond the layers' own activations for one micro-batch of ``length``-token rows."""
        if split and self.split_samples_as == "dense_mask":
            return layers * micro_batch * length**2 * (2 if bf16 else 4)
        return 0.0


@dataclass(frozen=True)
class LmHeadKernel(Kernel):
    """The LM head and its cross-entropy over the positions that carry a loss.

    ``sparse``: computes on those positions only (``pretraining.compute.lm_head`` names one of these);
    the dense head (``sparse_prediction: false``) projects every position."""

    # What the head and its loss hold at their peak for (positions with a loss, vocabulary, hidden size), in bytes
    memory_bytes: Callable[[float, int, int], float] = lambda positions, vocab, hidden: 0.0
    sparse: bool = True
    slot: Slot = "lm_head"


def split_samples_as(transformers_name: str) -> SplitSamplesAs:
    """How the attention transformers knows as ``transformers_name`` (a model's config._attn_implementation) is told
    a row's samples apart; transformers' own others (eager) take the dense mask, as SDPA does."""
    found = [k for k in KERNELS.values() if isinstance(k, AttentionKernel) and k.transformers_name == transformers_name]
    return found[0].split_samples_as if found else "dense_mask"


def register(kernel: Kernel) -> Kernel:
    return KERNELS.add(kernel.name, kernel)


def kernel_names(slot: Slot, sparse_only: bool = False) -> tuple[str, ...]:
    """The registered kernels of ``slot`` (with ``sparse_only``, the sparse LM heads a config may name)."""
    return tuple(name for name, kernel in KERNELS.items() if kernel.slot == slot and (not sparse_only or getattr(kernel, "sparse", True)))
