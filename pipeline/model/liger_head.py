"""Liger Kernel's fused linear cross-entropy as the sparse LM head and loss
(``pretraining.compute.lm_head: liger``), in place of this package's chunked one
(:mod:`pipeline.model.linear_cross_entropy`).

Both make the logits of a few rows at a time, turn them into the loss and its gradients and drop
them; Liger's is a Triton kernel with chunks sized to the hidden states (rows x vocabulary ~ positions
x hidden), ours plain PyTorch with ~1 GiB chunks. On one H200 at 210M, micro-batch 32, 2,048 tokens,
bf16, on packed blocks: CLM 274,331 tokens/s against the chunked head's 209,471, MLM 309,514 against
300,678, last-step losses within 0.02 (bench/records/gpu-speed-h200-2026-11-28). Triton runs on a GPU
only, and liger-kernel is the ``gpu`` extra (pinned in constraints.txt), imported only when chosen.
"""

from __future__ import annotations

import functools

import torch

from pipeline.errors import PipelineError


@functools.cache
def _liger_loss():
    try:
        from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
    except ImportError as error:
        raise PipelineError(
            f"pretraining.compute.lm_head: 'liger' needs liger-kernel ({error}); pip install -c constraints.txt -e '.[gpu]'"
        ) from None
    return LigerFusedLinearCrossEntropyLoss()


def liger_linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of ``hidden @ weight.T`` (N, V) against ``labels`` (N,), every row labelled:
    what :func:`pipeline.model.linear_cross_entropy.linear_cross_entropy` computes, by Liger's kernel."""
    return _liger_loss()(weight, hidden, labels)
