"""Compute kernels, registered by name (:mod:`pipeline.registry`) beside objectives and task types:
importing this package registers every module in it, so a new kernel is one new file here and its
implementation in :mod:`pipeline.model.backbone` (``SPARSE_HEADS``, ``OWN_ATTENTION``). Declarations need no torch."""

from pipeline.kernels.base import DEFAULT_KERNELS, KERNELS, AttentionKernel, Kernel, LmHeadKernel, Slot, kernel_names, split_samples_as
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["DEFAULT_KERNELS", "KERNELS", "AttentionKernel", "Kernel", "LmHeadKernel", "Slot", "split_samples_as", "kernel_names"]
